/*
 * The loader-side checks and bookkeeping of unwind tables, without BPF:
 * unwind_maps_check_table (validation + rows inside the executable
 * segments), row allocation with eviction of unused files, reference
 * counts, the file cache key, and load-bias computation.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loader/unwind_maps.h"

static struct unwind_row *rows_for(size_t n, uint64_t base)
{
	struct unwind_row *r = calloc(n, sizeof(*r));
	size_t i;

	for (i = 0; i < n; i++) {
		r[i].pc = base + i * 16;
		r[i].cfa_kind = UNWIND_CFA_RSP;
		r[i].cfa_off = 8;
	}
	return r;
}

static struct unwinder_segment seg_at(uint64_t vaddr, uint64_t size)
{
	struct unwinder_segment s = {.vaddr = vaddr, .memsz = size, .offset = vaddr, .filesz = size};

	return s;
}

static void test_check_table(void **state)
{
	struct unwind_table t = {0};
	struct unwinder_segment s = seg_at(0x1000, 0x1000);
	char err[256];

	(void)state;
	t.rows = rows_for(4, 0x1000);
	t.nrows = 4;
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), 0);

	/* A closing gap row right at the end of the code is fine. */
	t.rows[3].pc = 0x2000;
	t.rows[3].cfa_kind = UNWIND_CFA_NONE;
	t.rows[3].cfa_off = 0;
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), 0);

	/* A rule row past the code is not. */
	t.rows[3].cfa_kind = UNWIND_CFA_RSP;
	t.rows[3].cfa_off = 8;
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "outside"));
	t.rows[3].pc = 0x1030;

	/* Unsorted rows, unknown kinds, out-of-range offsets: the validator. */
	t.rows[2].pc = 0x1000;
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), -EINVAL);
	t.rows[2].pc = 0x1020;
	t.rows[1].cfa_kind = 42;
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), -EINVAL);
	t.rows[1].cfa_kind = UNWIND_CFA_RBP;
	t.rows[1].rbp_kind = UNWIND_RBP_AT_CFA;
	t.rows[1].rbp_off = 8; /* must be in [-4096, -8] */
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), -EINVAL);
	t.rows[1].rbp_off = -16;
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), 0);
	t.rows[1].cfa_off = -8;
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), -EINVAL);
	t.rows[1].cfa_off = 16;

	/* Segments: none, too many, empty, wrapping. */
	assert_int_equal(unwind_maps_check_table(&t, &s, 0, err, sizeof(err)), -EINVAL);
	assert_int_equal(unwind_maps_check_table(&t, &s, UNWINDER_MAX_SEGMENTS + 1, err, sizeof(err)), -EINVAL);
	s.memsz = 0;
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), -EINVAL);
	s = seg_at(UINT64_MAX - 4, 0x1000);
	assert_int_equal(unwind_maps_check_table(&t, &s, 1, err, sizeof(err)), -EINVAL);
	free(t.rows);
}

static struct unwind_file_key key_of(uint64_t ino)
{
	struct unwind_file_key k = {.dev = 8, .ino = ino, .mtime_ns = 1, .size = 4096};

	return k;
}

/* The cache's own bounds: entries past max_files go least recently used
 * first (only unreferenced ones), refusals are bounded and expire. */
static void test_cache_bounds(void **state)
{
	struct lowprof_unwind_row backing[100];
	struct unwind_maps um;
	struct unwind_table t = {0};
	struct unwinder_segment s = seg_at(0x1000, 0x10000);
	struct unwind_file_key k[8];
	struct unwind_file *f[8];
	int i;

	(void)state;
	assert_int_equal(unwind_maps_init_mem(&um, backing, 100), 0);
	um.max_files = 4;
	um.max_refused = 2;
	t.rows = rows_for(2, 0x1000);
	t.nrows = 2;
	for (i = 0; i < 8; i++)
		k[i] = key_of((uint64_t)i + 1);
	for (i = 0; i < 4; i++) {
		f[i] = unwind_maps_add(&um, &k[i], &t, &s, 1);
		assert_non_null(f[i]);
		unwind_maps_ref(&um, f[i]);
		unwind_maps_unref(&um, f[i]);
	}
	/* Used again: file 0 is now more recent than 1. */
	unwind_maps_ref(&um, f[0]);
	unwind_maps_unref(&um, f[0]);
	f[4] = unwind_maps_add(&um, &k[4], &t, &s, 1);
	assert_non_null(f[4]);
	assert_int_equal(um.nfiles, 4);
	assert_int_equal(um.cache_evictions, 1);
	assert_null(unwind_maps_find(&um, &k[1]));
	assert_non_null(unwind_maps_find(&um, &k[0]));
	/* A referenced entry is never the one evicted. */
	unwind_maps_ref(&um, f[2]);
	unwind_maps_add(&um, &k[5], &t, &s, 1);
	assert_non_null(unwind_maps_find(&um, &k[2]));
	assert_int_equal(um.nfiles, 4);
	assert_int_equal(um.cache_evictions, 2);

	/* Refusals: two remembered at most, the oldest forgotten first. */
	unwind_maps_add_refused(&um, &k[6]);
	unwind_maps_add_refused(&um, &k[7]);
	unwind_maps_add_refused(&um, &k[1]);
	assert_int_equal(um.nrefused, 2);
	assert_null(unwind_maps_find(&um, &k[6]));
	assert_non_null(unwind_maps_find(&um, &k[7]));
	/* ... and only for a while. */
	um.refused_ttl_ns = 0;
	assert_null(unwind_maps_find(&um, &k[7]));
	assert_int_equal(um.refused_expired, 1);
	assert_int_equal(um.nrefused, 1);
	free(t.rows);
	unwind_maps_fini(&um);
}

static void test_cache_and_eviction(void **state)
{
	struct lowprof_unwind_row backing[108];
	struct unwind_maps um;
	struct unwind_table t = {0};
	struct unwinder_segment s = seg_at(0x1000, 0x10000);
	struct unwind_file_key k1 = key_of(1), k2 = key_of(2), k3 = key_of(3), k1b = key_of(1);
	struct unwind_file *f1, *f2, *f3;
	struct unwind_maps_usage u;

	(void)state;
	/* 40 rows 16 bytes apart span 3 index pages: 6 index words, 2 slots, 42 in all. */
	assert_int_equal(unwind_maps_init_mem(&um, backing, 108), 0);
	t.rows = rows_for(40, 0x1000);
	t.nrows = 40;

	f1 = unwind_maps_add(&um, &k1, &t, &s, 1);
	assert_non_null(f1);
	assert_int_equal(f1->state, UNWIND_FILE_READY);
	assert_int_equal(f1->first_row, 0);
	assert_memory_equal(&backing[0], &t.rows[0], 40 * sizeof(backing[0]));
	unwind_maps_ref(&um, f1);
	f2 = unwind_maps_add(&um, &k2, &t, &s, 1);
	assert_int_equal(f2->state, UNWIND_FILE_READY);
	assert_int_equal(f2->first_row, 42);
	unwind_maps_ref(&um, f2);

	/* Same inode, new mtime: another file. Same key: a hit. */
	k1b.mtime_ns = 2;
	assert_null(unwind_maps_find(&um, &k1b));
	assert_ptr_equal(unwind_maps_find(&um, &k1), f1);

	/* No room while both are in use: over budget, mappings go to frame pointers. */
	f3 = unwind_maps_add(&um, &k3, &t, &s, 1);
	assert_int_equal(f3->state, UNWIND_FILE_NO_SPACE);
	unwind_maps_usage(&um, &u);
	assert_int_equal(u.rows_used, 84);
	assert_int_equal(u.files_no_space, 1);
	unwind_maps_ref(&um, f3);
	unwind_maps_unref(&um, f3); /* forgotten at its last unref: retried next time */
	assert_null(unwind_maps_find(&um, &k3));

	/* f1 unused: kept cached until the space is needed, then evicted. */
	unwind_maps_unref(&um, f1);
	assert_ptr_equal(unwind_maps_find(&um, &k1), f1);
	f3 = unwind_maps_add(&um, &k3, &t, &s, 1);
	assert_int_equal(f3->state, UNWIND_FILE_READY);
	assert_int_equal(f3->first_row, 0);
	assert_null(unwind_maps_find(&um, &k1));
	unwind_maps_usage(&um, &u);
	assert_int_equal(u.evictions, 1);

	/* Freed ranges coalesce: evicting f2 (least recently used) joins its rows
	 * with the free tail, and 60 rows (62 slots) fit in one piece; f3 stays. */
	unwind_maps_unref(&um, f2);
	free(t.rows);
	t.rows = rows_for(60, 0x1000);
	t.nrows = 60;
	unwind_maps_unref(&um, f3); /* refs already 0: stays 0 */
	f1 = unwind_maps_add(&um, &k1, &t, &s, 1);
	assert_int_equal(f1->state, UNWIND_FILE_READY);
	unwind_maps_usage(&um, &u);
	assert_int_equal(f1->first_row, 42);
	assert_int_equal(u.rows_used, 104);
	assert_int_equal(u.evictions, 2);
	assert_ptr_equal(unwind_maps_find(&um, &k3), f3);

	/* A refused file is remembered, with no rows. */
	f2 = unwind_maps_add_refused(&um, &k2);
	assert_int_equal(f2->state, UNWIND_FILE_REFUSED);
	assert_int_equal(f2->nrows, 0);
	free(t.rows);
	unwind_maps_fini(&um);
}

/* The page index: for every pc, the row a full search finds lies in the page's range. */
static void test_page_index(void **state)
{
	struct unwind_row rows[7] = {{.pc = 0x1010}, {.pc = 0x1020}, {.pc = 0x1100},
				     {.pc = 0x1180}, {.pc = 0x1480}, {.pc = 0x1490}, {.pc = 0x1700}};
	uint32_t words[32];
	size_t n, i;
	uint64_t pc;

	(void)state;
	n = unwind_maps_page_index(rows, 7, words, 32);
	/* Pages of 256 bytes from 0x1000 to 0x1700: 8, 8 + 1 bounds, the last row again. */
	assert_int_equal(n, 11);
	assert_int_equal(words[10], 6);
	assert_int_equal(words[0], 8);
	for (pc = 0x1010; pc < 0x1900; pc++) {
		uint64_t page = (pc >> LOWPROF_UNWIND_PAGE_SHIFT) - (0x1010 >> LOWPROF_UNWIND_PAGE_SHIFT);
		size_t want = 0, lo, hi;

		for (i = 0; i < 7; i++) {
			if (rows[i].pc <= pc)
				want = i;
		}
		if (page >= words[0]) {
			assert_int_equal(want, 6);
			continue;
		}
		lo = words[1 + page];
		hi = words[2 + page];
		assert_true(lo <= want && want <= hi);
		assert_true(rows[lo].pc <= pc);
	}
	/* Too sparse for the room given: no index (npages 0), one word. */
	assert_int_equal(unwind_maps_page_index(rows, 7, words, 5), 1);
	assert_int_equal(words[0], 0);
}

static void test_bias(void **state)
{
	struct unwind_file f;
	uint64_t bias = 0;

	(void)state;
	memset(&f, 0, sizeof(f));
	/* A PIE: text at vaddr 0x1000 from offset 0x1000, mapped at 0x555555555000. */
	f.nsegments = 1;
	f.seg[0] = seg_at(0x1000, 0x5000);
	assert_int_equal(unwind_maps_bias(&f, 0x555555555000ULL, 0x1000, &bias), 0);
	assert_int_equal(bias, 0x555555554000ULL);
	/* Non-PIE: vaddr 0x401000 from offset 0x1000, mapped where it says. */
	f.seg[0].vaddr = 0x401000;
	assert_int_equal(unwind_maps_bias(&f, 0x401000, 0x1000, &bias), 0);
	assert_int_equal(bias, 0);
	/* A segment whose offset is not page aligned: mapped from the page below. */
	f.seg[0].vaddr = 0x2a10;
	f.seg[0].offset = 0x1a10;
	assert_int_equal(unwind_maps_bias(&f, 0x7f0000001000ULL, 0x1000, &bias), 0);
	assert_int_equal(bias + 0x2a10, 0x7f0000001000ULL + 0xa10);
	/* An offset no executable segment holds. */
	assert_int_equal(unwind_maps_bias(&f, 0x7f0000001000ULL, 0x90000, &bias), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_cache_and_eviction),
		cmocka_unit_test(test_cache_bounds),
		cmocka_unit_test(test_page_index),
		cmocka_unit_test(test_bias),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
