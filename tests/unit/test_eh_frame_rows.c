/*
 * docs/SECURITY.md, "Rows capped as they are made": the CFI interpreter
 * refuses an FDE as soon as the rows it makes, with every row made before it
 * (in this section and, through prior_rows, in the file's other sections),
 * pass UNWIND_TABLE_MAX_ROWS (4M), and its row buffer never grows past that
 * many (64 MiB).
 *
 * As an attacker would: one FDE over a huge address range whose program is
 * nothing but DW_CFA_advance_loc 1, one byte and one row each. Before the
 * cap, rows were only counted once an FDE had been run whole: 32 MiB of such
 * bytes made a 512 MiB row buffer, a 256 MiB section 4 GiB.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_elf_header.h"

#include "unwind/eh_frame.h"
#include "unwind/unwind_table.h"

#if defined(LOWPROF_SANITIZE) || defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1 /* no RLIMIT_AS: ASan reserves terabytes */
#else
#define UNDER_ASAN 0
#endif

#define LIMIT UNWIND_TABLE_MAX_ROWS
#define DW_CFA_ADVANCE_LOC_1 0x41
/* The crafted FDE: 32M one-row instructions, 8 x the limit (512 MiB of rows
 * if nothing stops them). */
#define BIG_FDE_ROWS (32u << 20)
/* The child's address space, when not under ASan: the section (32 MiB) plus
 * rows at the limit (64 MiB) fit; rows for the whole FDE do not. */
#define CHILD_AS (384ull << 20)
/* Peak RSS allowed: the section, the 64 MiB buffer, the runtime (under ASan
 * also its quarantine of the smaller buffers the 64 MiB one grew from, and
 * shadow). Rows for the whole FDE would be 512 MiB. */
#define MAX_RSS_KB ((UNDER_ASAN ? 256L : 160L) * 1024)
#define MAX_CPU_MS (UNDER_ASAN ? 4000 : 1000)

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void reserve(struct buf *b, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
}

static void put(struct buf *b, const void *data, size_t n)
{
	reserve(b, n);
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

/* A CIE (version 1, no augmentation, absolute pointers, code alignment 1):
 * CFA = rsp + 8, return address at CFA - 8. Returns its offset. */
static size_t put_cie(struct buf *b, bool debug_frame)
{
	static const uint8_t head[] = {1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1};
	size_t at = b->len;

	put_u32(b, (uint32_t)(4 + sizeof(head)));
	put_u32(b, debug_frame ? 0xffffffffu : 0);
	put(b, head, sizeof(head));
	return at;
}

/* An FDE over [pc, pc + 2^40) making exactly `rows` rows: rows - 1 advances
 * by one byte (a row each), and the row the program ends in. Returns its
 * offset. */
static size_t put_fde(struct buf *b, size_t cie_at, bool debug_frame, uint64_t pc, size_t rows)
{
	size_t at = b->len, id_pos;

	assert_true(rows >= 1 && 4 + 16 + rows - 1 < 0xfffffff0u);
	put_u32(b, (uint32_t)(4 + 16 + rows - 1));
	id_pos = b->len;
	put_u32(b, (uint32_t)(debug_frame ? cie_at : id_pos - cie_at));
	put_u64(b, pc);
	put_u64(b, 1ull << 40);
	reserve(b, rows - 1);
	memset(b->p + b->len, DW_CFA_ADVANCE_LOC_1, rows - 1);
	b->len += rows - 1;
	return at;
}

/* What the parser says refusing the .eh_frame (or .debug_frame) FDE at
 * fde_at after `before` rows. */
static const char *refusal(char *buf, size_t len, bool debug_frame, size_t fde_at, size_t before)
{
	snprintf(buf, len, "%s FDE at %#zx: more than %u rows, the table's limit (%zu rows before "
		 "this FDE)", debug_frame ? ".debug_frame" : ".eh_frame", fde_at,
		 UNWIND_TABLE_MAX_ROWS, before);
	return buf;
}

struct seen {
	size_t fdes, rows, most;
};

static int count_fde(void *arg, const struct eh_frame_fde *fde, const struct unwind_row *rows,
		     size_t nrows, char *err, size_t errlen)
{
	struct seen *s = arg;

	(void)fde;
	(void)rows;
	(void)err;
	(void)errlen;
	s->fdes++;
	s->rows += nrows;
	if (nrows > s->most)
		s->most = nrows;
	return 0;
}

static int parse(const struct buf *b, size_t prior_rows, struct seen *s, char *err, size_t errlen)
{
	struct eh_frame_section sec = {.data = b->p, .size = b->len, .vaddr = 0x1000,
				       .prior_rows = prior_rows};

	memset(s, 0, sizeof(*s));
	err[0] = '\0';
	return eh_frame_parse(&sec, count_fde, s, NULL, err, errlen);
}

/* rc: eh_frame_parse's (-1) or the builder's (-EINVAL). */
static void expect_refused(int rc, const char *err, const char *what, const char *want)
{
	print_message("  %s: rc %d \"%s\"\n", what, rc, err);
	if (rc >= 0)
		fail_msg("%s: not refused (rc %d, \"%s\")", what, rc, err);
	if (strstr(err, want) == NULL)
		fail_msg("%s: refused for another reason: \"%s\" (expected \"%s\")", what, err, want);
}

struct outcome {
	int rc;
	char err[256];
	struct seen seen;
	long maxrss_kb;
	long cpu_ms;
};

/*
 * The 32M-row FDE, parsed in a child (capped at CHILD_AS but under ASan):
 * refused, saying so, with its rows buffer at most the limit's. The section
 * is built in the parent, so its pages count in the child's RSS only as it
 * reads them (32 MiB).
 */
static void test_one_fde_past_the_limit(void **state)
{
	struct buf b = {0};
	struct outcome o;
	struct rusage ru;
	int pipefd[2], status;
	size_t cie, fde;
	char want[160];
	pid_t pid;

	(void)state;
	cie = put_cie(&b, false);
	fde = put_fde(&b, cie, false, 0x400000, BIG_FDE_ROWS);
	put_u32(&b, 0);
	memset(&o, 0, sizeof(o));
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct outcome r;

		memset(&r, 0, sizeof(r));
		if (!UNDER_ASAN) {
			struct rlimit rl = {.rlim_cur = CHILD_AS, .rlim_max = CHILD_AS};

			if (setrlimit(RLIMIT_AS, &rl) != 0)
				_exit(2);
		}
		r.rc = parse(&b, 0, &r.seen, r.err, sizeof(r.err));
		_exit(write(pipefd[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &o, sizeof(o)), (ssize_t)sizeof(o));
	close(pipefd[0]);
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	o.maxrss_kb = ru.ru_maxrss;
	o.cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L +
		   (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000L;
	print_message("  one FDE of %u rows: peak RSS %ld KiB, CPU %ld ms%s\n", BIG_FDE_ROWS,
		      o.maxrss_kb, o.cpu_ms, UNDER_ASAN ? " (ASan: no address-space cap)" : "");
	expect_refused(o.rc, o.err, "one FDE of 32M rows", refusal(want, sizeof(want), false, fde, 0));
	assert_int_equal(o.seen.fdes, 0);
	if (o.maxrss_kb > MAX_RSS_KB)
		fail_msg("the refusal peaked at %ld KiB of RSS (at most %ld expected): rows grew past "
			 "the limit before they were counted", o.maxrss_kb, MAX_RSS_KB);
	if (o.cpu_ms > MAX_CPU_MS)
		fail_msg("the refusal took %ld ms of CPU (at most %d expected)", o.cpu_ms, MAX_CPU_MS);
	free(b.p);
}

/* The limit itself: an FDE of exactly 4M rows is handed over whole; one more
 * row and the FDE is refused. */
static void test_exactly_the_limit(void **state)
{
	struct buf b = {0};
	struct seen s;
	char err[256], want[160];
	size_t cie, fde;

	(void)state;
	cie = put_cie(&b, false);
	put_fde(&b, cie, false, 0x400000, LIMIT);
	put_u32(&b, 0);
	assert_int_equal(parse(&b, 0, &s, err, sizeof(err)), 0);
	assert_int_equal(s.fdes, 1);
	assert_int_equal(s.rows, LIMIT);

	b.len = 0;
	cie = put_cie(&b, false);
	fde = put_fde(&b, cie, false, 0x400000, LIMIT + 1);
	put_u32(&b, 0);
	expect_refused(parse(&b, 0, &s, err, sizeof(err)), err, "one FDE of 4M + 1 rows",
		       refusal(want, sizeof(want), false, fde, 0));
	assert_int_equal(s.fdes, 0);
	free(b.p);
}

/* Rows add up across FDEs, and across sections (prior_rows): the FDE that
 * passes the limit is refused while it runs, whatever its own size. */
static void test_rows_add_up(void **state)
{
	const size_t third = LIMIT / 3 + 1;
	struct buf b = {0};
	struct seen s;
	char err[256], want[160];
	size_t cie, fde[3];

	(void)state;
	cie = put_cie(&b, false);
	put_fde(&b, cie, false, 0x400000, third);
	put_fde(&b, cie, false, 0x20000000000, third);
	fde[2] = put_fde(&b, cie, false, 0x40000000000, third);
	put_u32(&b, 0);
	expect_refused(parse(&b, 0, &s, err, sizeof(err)), err, "three FDEs of 4M/3 + 1 rows",
		       refusal(want, sizeof(want), false, fde[2], 2 * third));
	assert_int_equal(s.fdes, 2);

	/* The same section is fine alone, not after 4M/3 rows from elsewhere. */
	b.len = 0;
	cie = put_cie(&b, false);
	fde[0] = put_fde(&b, cie, false, 0x400000, third);
	fde[1] = put_fde(&b, cie, false, 0x20000000000, third);
	put_u32(&b, 0);
	assert_int_equal(parse(&b, 0, &s, err, sizeof(err)), 0);
	assert_int_equal(s.rows, 2 * third);
	expect_refused(parse(&b, third, &s, err, sizeof(err)), err,
		       "two FDEs of 4M/3 + 1 rows after as many",
		       refusal(want, sizeof(want), false, fde[1], 2 * third));
	assert_int_equal(s.fdes, 1);
	expect_refused(parse(&b, LIMIT, &s, err, sizeof(err)), err, "any row after 4M",
		       refusal(want, sizeof(want), false, fde[0], LIMIT));
	assert_int_equal(s.fdes, 0);
	free(b.p);
}

/* An x86_64 ELF image (ET_DYN) with .eh_frame and .debug_frame as given. */
static uint8_t *elf_image(const struct buf *eh, const struct buf *dbg, size_t *len)
{
	static const char shstr[] = "\0.eh_frame\0.debug_frame\0.shstrtab";
	const size_t eh_off = 0x1000, dbg_off = eh_off + ((eh->len + 0xfff) & ~(size_t)0xfff);
	const size_t str_off = dbg_off + dbg->len, sh_off = (str_off + sizeof(shstr) + 7) & ~(size_t)7;
	Elf64_Shdr sh[4];
	Elf64_Ehdr eh_hdr;
	uint8_t *img;

	*len = sh_off + sizeof(sh);
	img = calloc(1, *len);
	assert_non_null(img);
	test_elf_header(&eh_hdr, sh_off, 4, 3);
	memset(sh, 0, sizeof(sh));
	sh[1] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			     .sh_addr = eh_off, .sh_offset = eh_off, .sh_size = eh->len,
			     .sh_addralign = 8};
	sh[2] = (Elf64_Shdr){.sh_name = 11, .sh_type = SHT_PROGBITS, .sh_offset = dbg_off,
			     .sh_size = dbg->len, .sh_addralign = 8};
	sh[3] = (Elf64_Shdr){.sh_name = 24, .sh_type = SHT_STRTAB, .sh_offset = str_off,
			     .sh_size = sizeof(shstr), .sh_addralign = 1};
	memcpy(img, &eh_hdr, sizeof(eh_hdr));
	memcpy(img + eh_off, eh->p, eh->len);
	memcpy(img + dbg_off, dbg->p, dbg->len);
	memcpy(img + str_off, shstr, sizeof(shstr));
	memcpy(img + sh_off, sh, sizeof(sh));
	return img;
}

/* The builder counts .eh_frame's rows against .debug_frame's FDEs: 3M rows in
 * each, the .debug_frame FDE is refused while it runs, naming its offset. */
static void test_builder_counts_both_sections(void **state)
{
	const size_t rows = 3u << 20;
	struct buf eh = {0}, dbg = {0};
	struct unwind_table t;
	char err[256] = "", want[160];
	uint8_t *img;
	size_t len, cie, fde;

	(void)state;
	cie = put_cie(&eh, false);
	put_fde(&eh, cie, false, 0x400000, rows);
	put_u32(&eh, 0);
	cie = put_cie(&dbg, true);
	fde = put_fde(&dbg, cie, true, 0x20000000000, rows);
	img = elf_image(&eh, &dbg, &len);
	/* Each section alone makes a table. */
	{
		struct buf none = {0};
		uint8_t *one;
		size_t one_len;

		put_u32(&none, 0);
		one = elf_image(&eh, &none, &one_len);
		assert_int_equal(unwind_table_build_mem(one, one_len, &t, err, sizeof(err)), 0);
		unwind_table_free(&t);
		free(one);
		free(none.p);
	}
	expect_refused(unwind_table_build_mem(img, len, &t, err, sizeof(err)), err,
		       ".eh_frame and .debug_frame of 3M rows each",
		       refusal(want, sizeof(want), true, fde, rows));
	assert_null(t.rows);
	free(img);
	free(eh.p);
	free(dbg.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_fde_past_the_limit),
		cmocka_unit_test(test_exactly_the_limit),
		cmocka_unit_test(test_rows_add_up),
		cmocka_unit_test(test_builder_counts_both_sections),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
