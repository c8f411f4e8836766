/*
 * The .eh_frame parser is linear in its input: a crafted section of many FDEs
 * over one big CIE (each FDE used to re-run the CIE's initial instructions,
 * O(CIE size x FDE count) for O(CIE + FDEs) bytes) parses in well under a
 * second, with the same rows as a small CIE gives, also when FDEs alternate
 * between CIEs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/mono_clock.h"
#include "unwind/eh_frame.h"

#define CIE_NOPS (256u * 1024)
#define NFDES 20000u

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

/* A CIE (version 1, no augmentation, absolute pointers): CFA = rsp + 8,
 * return address at CFA - 8, then nops padding. Returns its offset. */
static size_t put_cie(struct buf *b, size_t nops)
{
	static const uint8_t head[] = {1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1};
	size_t at = b->len;

	put_u32(b, (uint32_t)(4 + sizeof(head) + nops));
	put_u32(b, 0);
	put(b, head, sizeof(head));
	for (size_t i = 0; i < nops; i++)
		put(b, "", 1);
	return at;
}

static void put_fde(struct buf *b, size_t cie_at, uint64_t pc)
{
	size_t id_pos;

	put_u32(b, 4 + 16);
	id_pos = b->len;
	put_u32(b, (uint32_t)(id_pos - cie_at));
	put_u64(b, pc);
	put_u64(b, 16);
}

struct seen {
	size_t fdes, rows;
};

static int count_fde(void *arg, const struct eh_frame_fde *fde, const struct unwind_row *rows,
		     size_t nrows, char *err, size_t errlen)
{
	struct seen *s = arg;

	(void)fde;
	(void)err;
	(void)errlen;
	s->fdes++;
	s->rows += nrows;
	return 0;
}

static void parse_timed(const struct buf *b, struct seen *s, struct eh_frame_counts *counts,
			uint64_t *ms)
{
	struct eh_frame_section sec = {.data = b->p, .size = b->len, .vaddr = 0x1000};
	char err[256] = "";
	uint64_t t0 = mono_ms();

	memset(s, 0, sizeof(*s));
	assert_int_equal(eh_frame_parse(&sec, count_fde, s, counts, err, sizeof(err)), 0);
	*ms = mono_ms() - t0;
}

static void test_one_big_cie(void **state)
{
	struct buf b = {0};
	struct eh_frame_counts counts;
	struct seen s;
	uint64_t ms;
	size_t cie;

	(void)state;
	cie = put_cie(&b, CIE_NOPS);
	for (uint32_t i = 0; i < NFDES; i++)
		put_fde(&b, cie, 0x400000 + 32ull * i);
	put_u32(&b, 0);
	parse_timed(&b, &s, &counts, &ms);
	assert_int_equal(s.fdes, NFDES);
	assert_int_equal(s.rows, NFDES); /* one row each: the CIE's state */
	assert_int_equal(counts.n_cie_parsed, 1);
	/* Quadratic: 5 * 10^9 CIE instructions, minutes. Linear: milliseconds. */
	assert_true(ms < 1000);
	free(b.p);
}

static void test_alternating_cies(void **state)
{
	struct buf b = {0};
	struct eh_frame_counts counts;
	struct seen s;
	size_t cies[64];
	uint64_t ms;

	(void)state;
	for (size_t k = 0; k < 64; k++)
		cies[k] = put_cie(&b, CIE_NOPS / 64);
	for (uint32_t i = 0; i < NFDES; i++)
		put_fde(&b, cies[i % 64], 0x400000 + 32ull * i);
	put_u32(&b, 0);
	parse_timed(&b, &s, &counts, &ms);
	assert_int_equal(s.fdes, NFDES);
	assert_int_equal(s.rows, NFDES);
	assert_int_equal(counts.n_cie_parsed, 64);
	assert_true(ms < 1000);
	free(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_big_cie),
		cmocka_unit_test(test_alternating_cies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
