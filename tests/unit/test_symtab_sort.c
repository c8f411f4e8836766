/* symtab_sort_by_addr: the radix sort the symbol tables share, against qsort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "exporter/symbols/symtab_common.h"

/* 24 bytes: a stride that is not a power of two, with the input order in it. */
struct entry {
	uint64_t addr;
	uint32_t seq;
	uint32_t tag;
	uint64_t pad;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Sorts a copy both ways: same bytes, so sorted and stable (seq breaks ties). */
static void check_against_qsort(struct entry *v, size_t n)
{
	struct entry *want = malloc((n ? n : 1) * sizeof(*want));

	assert_non_null(want);
	for (size_t i = 0; i < n; i++) {
		v[i].seq = (uint32_t)i;
		v[i].tag = (uint32_t)~i;
		v[i].pad = v[i].addr ^ 0x5555;
	}
	memcpy(want, v, n * sizeof(*v));
	qsort(want, n, sizeof(*want), entry_cmp);
	assert_int_equal(symtab_sort_by_addr(v, n, sizeof(*v)), 0);
	assert_memory_equal(v, want, n * sizeof(*v));
	free(want);
}

static void test_random_full_range(void **state)
{
	size_t n = 20000;
	struct entry *v = calloc(n, sizeof(*v));

	(void)state;
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i].addr = rng();
	check_against_qsort(v, n);
	free(v);
}

/* Few distinct addresses, in the kernel's range: aliases keep their order. */
static void test_aliases_keep_input_order(void **state)
{
	size_t n = 5000;
	struct entry *v = calloc(n, sizeof(*v));

	(void)state;
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i].addr = 0xffffffff81000000ULL + (rng() % 37) * 0x10;
	check_against_qsort(v, n);
	for (size_t i = 1; i < n; i++)
		if (v[i].addr == v[i - 1].addr)
			assert_true(v[i].seq > v[i - 1].seq);
	free(v);
}

/* Addresses differing in one byte only, and in the top byte only. */
static void test_one_varying_byte(void **state)
{
	struct entry v[512];

	(void)state;
	for (size_t i = 0; i < 256; i++) {
		v[i].addr = 0x400000 + ((255 - i) << 8);
		v[256 + i].addr = (uint64_t)(255 - i) << 56;
	}
	check_against_qsort(v, 256);
	check_against_qsort(v + 256, 256);
	assert_int_equal(v[0].addr, 0x400000);
	assert_int_equal(v[256].addr, 0);
	assert_true(v[511].addr == (uint64_t)255 << 56);
}

static void test_small_and_equal(void **state)
{
	struct entry v[8];

	(void)state;
	assert_int_equal(symtab_sort_by_addr(NULL, 0, sizeof(*v)), 0);
	v[0].addr = 42;
	check_against_qsort(v, 1);
	for (size_t i = 0; i < 8; i++)
		v[i].addr = 7;
	check_against_qsort(v, 8);
	for (size_t i = 0; i < 8; i++)
		v[i].addr = 8 - i;
	check_against_qsort(v, 8);
	assert_int_equal(v[0].addr, 1);
	assert_int_equal(v[7].addr, 8);
}

/* Entries already in order (a kernel's kallsyms) are left as they are,
 * aliases included; one entry out of place anywhere, first, middle or last,
 * still gets the whole sort. */
static void test_in_order_and_one_out(void **state)
{
	size_t n = 4000, out[] = { 0, 1999, 3999 };
	struct entry *v = calloc(n, sizeof(*v));

	(void)state;
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i].addr = 0xffffffff81000000ULL + (i / 3) * 0x10; /* runs of three aliases */
	check_against_qsort(v, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i].seq, i);
	for (size_t k = 0; k < sizeof(out) / sizeof(out[0]); k++) {
		for (size_t i = 0; i < n; i++)
			v[i].addr = 0xffffffff81000000ULL + (i / 3) * 0x10;
		/* Below every other address at the end, above every other at the start. */
		v[out[k]].addr = out[k] == 0 ? 0xffffffffffff0000ULL : 0xffffffff80000000ULL;
		check_against_qsort(v, n);
		assert_true(v[0].addr <= v[1].addr && v[n - 2].addr <= v[n - 1].addr);
	}
	free(v);
}

/* The 16-byte entries elf_symbols sorts. */
static void test_stride_16(void **state)
{
	size_t n = 3000;
	uint64_t (*v)[2] = calloc(n, sizeof(*v));

	(void)state;
	assert_non_null(v);
	for (size_t i = 0; i < n; i++) {
		v[i][0] = rng() & 0x3ffff0;
		v[i][1] = i;
	}
	assert_int_equal(symtab_sort_by_addr(v, n, sizeof(*v)), 0);
	for (size_t i = 1; i < n; i++) {
		assert_true(v[i - 1][0] <= v[i][0]);
		if (v[i - 1][0] == v[i][0])
			assert_true(v[i - 1][1] < v[i][1]);
	}
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_full_range),
		cmocka_unit_test(test_aliases_keep_input_order),
		cmocka_unit_test(test_one_varying_byte),
		cmocka_unit_test(test_small_and_equal),
		cmocka_unit_test(test_in_order_and_one_out),
		cmocka_unit_test(test_stride_16),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
