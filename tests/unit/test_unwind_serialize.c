/* The flat form an unprivileged parser sends to the loader: a round trip
 * keeps every row, and any buffer that is not exactly one valid table is
 * refused (the loader validates before it writes a map). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/unwind_table.h"

#define LIBC_PATH "/lib/x86_64-linux-gnu/libc.so.6"

static void build(const char *path, struct unwind_table *t)
{
	char err[256] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	if (unwind_table_build_fd(fd, t, err, sizeof(err)) != 0)
		fail_msg("%s: %s", path, err);
	close(fd);
}

static void test_round_trip(void **state)
{
	struct unwind_table t, back;
	uint8_t *buf;
	size_t len;
	char err[256];

	build(LIBC_PATH, &t);
	assert_int_equal(unwind_table_serialize(&t, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, UNWIND_TABLE_HDR_SIZE + t.nrows * sizeof(struct unwind_row));
	assert_memory_equal(buf, "LPUW", 4);
	assert_int_equal(unwind_table_deserialize(buf, len, &back, err, sizeof(err)), 0);
	assert_int_equal(back.nrows, t.nrows);
	assert_memory_equal(back.rows, t.rows, t.nrows * sizeof(struct unwind_row));
	print_message("  libc.so.6: %zu rows -> %zu bytes and back\n", t.nrows, len);
	free(buf);
	unwind_table_free(&back);

	/* An empty table is a valid table (a binary without unwind info). */
	unwind_table_free(&t);
	assert_int_equal(unwind_table_serialize(&t, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, UNWIND_TABLE_HDR_SIZE);
	assert_int_equal(unwind_table_deserialize(buf, len, &back, err, sizeof(err)), 0);
	assert_int_equal(back.nrows, 0);
	free(buf);
}

/* A small valid table, serialised, as the starting point for corruption. */
static uint8_t *small_buffer(size_t *len)
{
	struct unwind_row rows[] = {
		{ .pc = 0x1000, .cfa_off = 8, .cfa_kind = UNWIND_CFA_RSP },
		{ .pc = 0x1001, .cfa_off = 16, .rbp_off = -16, .cfa_kind = UNWIND_CFA_RSP,
		  .rbp_kind = UNWIND_RBP_AT_CFA },
		{ .pc = 0x1004, .cfa_off = 16, .rbp_off = -16, .cfa_kind = UNWIND_CFA_RBP,
		  .rbp_kind = UNWIND_RBP_AT_CFA },
		{ .pc = 0x1020, .cfa_off = 8, .plt_threshold = 11, .cfa_kind = UNWIND_CFA_PLT },
		{ .pc = 0x1030, .cfa_kind = UNWIND_CFA_END },
		{ .pc = 0x1040, .cfa_kind = UNWIND_CFA_NONE },
	};
	struct unwind_table t = { .rows = rows, .nrows = 6 };
	uint8_t *buf;
	char err[256];

	assert_int_equal(unwind_table_serialize(&t, &buf, len, err, sizeof(err)), 0);
	return buf;
}

static void expect_refused(const uint8_t *buf, size_t len, const char *what)
{
	struct unwind_table t;
	char err[256] = "";

	assert_int_equal(unwind_table_deserialize(buf, len, &t, err, sizeof(err)), -EINVAL);
	assert_null(t.rows);
	assert_int_equal(t.nrows, 0);
	print_message("  %-26s %s\n", what, err);
}

static void test_corrupt_buffers(void **state)
{
	size_t len;
	uint8_t *good = small_buffer(&len);
	uint8_t *b = malloc(len + 16);
	const size_t row1 = UNWIND_TABLE_HDR_SIZE + 16;

	assert_non_null(b);
	expect_refused(NULL, 0, "no buffer");
	expect_refused(good, 7, "short header");
	for (size_t cut = UNWIND_TABLE_HDR_SIZE; cut < len; cut += 19)
		expect_refused(good, cut, "truncated rows");
	memcpy(b, good, len);
	b[len] = 0;
	expect_refused(b, len + 1, "trailing byte");
#define MUTATE(what, stmt)                   \
	do {                                 \
		memcpy(b, good, len);        \
		stmt;                        \
		expect_refused(b, len, what); \
	} while (0)
	MUTATE("bad magic", b[0] = 'X');
	MUTATE("bad version", b[4] = 9);
	MUTATE("bad row size", b[6] = 24);
	MUTATE("row count too big", b[8] = 7);
	MUTATE("row count absurd", memset(b + 8, 0xff, 8));
	MUTATE("unsorted pcs", b[row1] = 0x00);          /* row 1 pc 0x1000 == row 0 */
	MUTATE("unknown CFA kind", b[row1 + 14] = 42);
	MUTATE("unknown RBP kind", b[row1 + 15] = 9);
	MUTATE("negative CFA offset", memset(b + row1 + 8, 0xff, 4));
	MUTATE("huge CFA offset", b[row1 + 11] = 0x40);
	MUTATE("RBP offset positive", b[row1 + 12] = 8; b[row1 + 13] = 0);
	MUTATE("mark with operands", b[UNWIND_TABLE_HDR_SIZE + 4 * 16 + 8] = 1);
	MUTATE("PLT threshold 16", b[UNWIND_TABLE_HDR_SIZE + 3 * 16 + 12] = 16);
#undef MUTATE
	free(b);
	free(good);
}

/* Random corruption: either refused, or what comes back validates. */
static void test_random_flips(void **state)
{
	uint64_t s = 0x5eed5eedull;
	size_t len;
	uint8_t *good = small_buffer(&len);
	uint8_t *b = malloc(len);
	int accepted = 0;

	assert_non_null(b);
	for (int i = 0; i < 20000; i++) {
		struct unwind_table t;
		char err[256];

		memcpy(b, good, len);
		for (int k = 0; k < 3; k++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			b[s % len] ^= (uint8_t)(s >> 32);
		}
		if (unwind_table_deserialize(b, len, &t, err, sizeof(err)) == 0) {
			assert_int_equal(unwind_table_validate(&t, err, sizeof(err)), 0);
			accepted++;
			unwind_table_free(&t);
		}
	}
	print_message("  20000 flipped buffers: %d still valid tables, the rest refused\n",
		      accepted);
	free(b);
	free(good);
}

static void test_lookup(void **state)
{
	size_t len;
	uint8_t *buf = small_buffer(&len);
	struct unwind_table t;
	char err[256];

	assert_int_equal(unwind_table_deserialize(buf, len, &t, err, sizeof(err)), 0);
	assert_null(unwind_table_lookup(&t, 0xfff));
	assert_int_equal(unwind_table_lookup(&t, 0x1000)->pc, 0x1000);
	assert_int_equal(unwind_table_lookup(&t, 0x1003)->pc, 0x1001);
	assert_int_equal(unwind_table_lookup(&t, 0x101f)->cfa_kind, UNWIND_CFA_RBP);
	assert_int_equal(unwind_table_lookup(&t, 0x1025)->cfa_kind, UNWIND_CFA_PLT);
	assert_int_equal(unwind_table_lookup(&t, 0x1030)->cfa_kind, UNWIND_CFA_END);
	assert_int_equal(unwind_table_lookup(&t, UINT64_MAX)->cfa_kind, UNWIND_CFA_NONE);
	/* Exhaustively against a linear scan. */
	for (uint64_t pc = 0xff0; pc < 0x1050; pc++) {
		const struct unwind_row *want = NULL;

		for (size_t i = 0; i < t.nrows; i++)
			if (t.rows[i].pc <= pc)
				want = &t.rows[i];
		assert_ptr_equal(unwind_table_lookup(&t, pc), want);
	}
	unwind_table_free(&t);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_corrupt_buffers),
		cmocka_unit_test(test_random_flips),
		cmocka_unit_test(test_lookup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
