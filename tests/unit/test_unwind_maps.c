/*
 * The loader-side checks and bookkeeping of unwind tables, without BPF:
 * unwind_maps_check_table (validation + rows inside the executable
 * segments), row allocation with least-recently-used eviction, the file
 * identity as the cache key (device, inode, generation), the walker's entry
 * (file offset -> ELF address through the executable segments, the
 * frame-pointer flag), the opening of a mapped file checked against
 * the identity the kernel reports, and a restarted loader's taking over of
 * the tables its predecessor left.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/mono_clock.h"
#include "loader/file_registry.h"
#include "loader/file_tables.h"
#include "loader/mapped_file.h"
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

static struct lowprof_file_id key_of(uint64_t ino)
{
	struct lowprof_file_id k = {.ino = ino, .dev = 8 << 20 | 1, .gen = 7};

	return k;
}

/* The cache's own bounds: entries past max_files go least recently used
 * first (by the walker's stamps), refusals are bounded and expire; every
 * file dropped is handed to the caller (audit, file registry). */
static void test_cache_bounds(void **state)
{
	struct lowprof_unwind_row backing[100];
	struct unwind_maps um;
	struct unwind_table t = {0};
	struct unwinder_segment s = seg_at(0x1000, 0x10000);
	struct lowprof_file_id k[8];
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
		f[i] = unwind_maps_add(&um, &k[i], &t, &s, 1, 0);
		assert_non_null(f[i]);
		f[i]->last_used = 100 + (uint64_t)i;
	}
	/* Used again: file 0 is now more recent than 1. */
	f[0]->last_used = 200;
	f[4] = unwind_maps_add(&um, &k[4], &t, &s, 1, 0);
	assert_non_null(f[4]);
	assert_int_equal(um.nfiles, 4);
	assert_int_equal(um.cache_evictions, 1);
	assert_null(unwind_maps_find(&um, &k[1]));
	assert_non_null(unwind_maps_find(&um, &k[0]));
	assert_int_equal(um.ndropped, 1);
	assert_memory_equal(&um.dropped[0], &k[1], sizeof(k[1]));
	um.ndropped = 0;

	/* Refusals: two remembered at most, the oldest forgotten first. */
	unwind_maps_add_refused(&um, &k[6], um.refused_ttl_ns);
	unwind_maps_find(&um, &k[6])->last_used = 1;
	unwind_maps_add_refused(&um, &k[7], um.refused_ttl_ns);
	unwind_maps_add_refused(&um, &k[1], um.refused_ttl_ns);
	assert_int_equal(um.nrefused, 2);
	assert_null(unwind_maps_find(&um, &k[6]));
	assert_non_null(unwind_maps_find(&um, &k[7]));
	/* ... and only for a while: a short ttl expires first. */
	um.max_refused = 3;
	unwind_maps_add_refused(&um, &k[5], 0);
	unwind_maps_expire(&um, mono_ns());
	assert_null(unwind_maps_find(&um, &k[5]));
	assert_non_null(unwind_maps_find(&um, &k[7]));
	um.refused_ttl_ns = 0;
	unwind_maps_expire(&um, mono_ns());
	assert_null(unwind_maps_find(&um, &k[7]));
	assert_int_equal(um.nrefused, 0);
	free(t.rows);
	unwind_maps_fini(&um);
}

/*
 * Tables the walker has not used for idle_ttl_ns go at the idle check (every
 * UNWIND_MAPS_IDLE_CHECK_NS), handed to the caller like evicted files and
 * counted; a table in use stays; the chunks left without rows are listed
 * (the loader frees them, unwind_maps_empty_chunks).
 */
static void test_idle_expiry(void **state)
{
	uint32_t capacity = 3 * LOWPROF_UNWIND_CHUNK_ROWS, empty[4];
	struct lowprof_unwind_row *backing = calloc(capacity, sizeof(*backing));
	struct unwinder_segment s = seg_at(0x1000, 0x10000);
	struct unwind_table t = {0};
	struct unwind_file *a, *b;
	struct lowprof_file_id ka = key_of(1), kb = key_of(2);
	struct unwind_maps um;
	uint64_t now = mono_ns(), ttl_stamps;
	volatile uint64_t gen = 0;

	(void)state;
	assert_non_null(backing);
	assert_int_equal(unwind_maps_init_mem(&um, backing, capacity), 0);
	/* The walker's memos copy entries while unwind_files_gen stays: every
	 * change of unwind_files bumps it (bpf/unwind_vma.bpf.h, walk_memos). */
	um.files_gen = &gen;
	/* Every chunk holds no row yet. */
	assert_int_equal(unwind_maps_empty_chunks(&um, empty, 4), 3);
	t.rows = rows_for(2, 0x1000);
	t.nrows = 2;
	a = unwind_maps_add(&um, &ka, &t, &s, 1, 0);
	assert_int_equal(gen, 1);
	b = unwind_maps_add(&um, &kb, &t, &s, 1, 0);
	assert_int_equal(gen, 2);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->state, UNWIND_FILE_READY);
	/* Both in chunk 0. */
	assert_int_equal(unwind_maps_empty_chunks(&um, empty, 4), 2);
	assert_int_equal(empty[0], 1);
	assert_int_equal(empty[1], 2);
	ttl_stamps = um.idle_ttl_ns >> 30;
	a->last_used = (now >> 30) - ttl_stamps - 1;
	b->last_used = now >> 30;
	/* Not checked before UNWIND_MAPS_IDLE_CHECK_NS since the last check. */
	um.idle_checked_ns = now;
	unwind_maps_expire(&um, now + 1000);
	assert_non_null(unwind_maps_find(&um, &ka));
	assert_int_equal(gen, 2);
	unwind_maps_expire(&um, now + UNWIND_MAPS_IDLE_CHECK_NS);
	assert_null(unwind_maps_find(&um, &ka));
	assert_int_equal(gen, 3); /* a's entry deleted, its rows freed after */
	assert_non_null(unwind_maps_find(&um, &kb));
	assert_int_equal(um.idle_expired, 1);
	assert_int_equal(um.ndropped, 1);
	assert_memory_equal(&um.dropped[0], &ka, sizeof(ka));
	assert_int_equal(unwind_maps_empty_chunks(&um, empty, 4), 2);
	/* b idle too: every chunk empty again, and the rows all free. */
	b->last_used = (now >> 30) - ttl_stamps - 1;
	unwind_maps_expire(&um, now + 2 * UNWIND_MAPS_IDLE_CHECK_NS);
	assert_null(unwind_maps_find(&um, &kb));
	assert_int_equal(um.idle_expired, 2);
	assert_int_equal(unwind_maps_empty_chunks(&um, empty, 4), 3);
	assert_int_equal(empty[0], 0);
	free(t.rows);
	unwind_maps_fini(&um);
	free(backing);
}

static void test_cache_and_eviction(void **state)
{
	struct lowprof_unwind_row backing[108];
	struct unwind_maps um;
	struct unwind_table t = {0};
	struct unwinder_segment s = seg_at(0x1000, 0x10000);
	struct lowprof_file_id k1 = key_of(1), k2 = key_of(2), k3 = key_of(3), k1b = key_of(1);
	volatile uint64_t gen = 0;
	struct unwind_file *f1, *f2, *f3;
	struct unwind_maps_usage u;

	(void)state;
	/* 40 rows 16 bytes apart span 3 index pages: 6 index words, 2 slots, 42 in all. */
	assert_int_equal(unwind_maps_init_mem(&um, backing, 108), 0);
	um.files_gen = &gen;
	t.rows = rows_for(40, 0x1000);
	t.nrows = 40;

	f1 = unwind_maps_add(&um, &k1, &t, &s, 1, 0);
	assert_non_null(f1);
	assert_int_equal(f1->state, UNWIND_FILE_READY);
	assert_int_equal(f1->first_row, 0);
	assert_memory_equal(&backing[0], &t.rows[0], 40 * sizeof(backing[0]));
	f1->last_used = 10;
	f2 = unwind_maps_add(&um, &k2, &t, &s, 1, 0);
	assert_int_equal(f2->state, UNWIND_FILE_READY);
	assert_int_equal(f2->first_row, 42);
	f2->last_used = 20;
	assert_int_equal(gen, 2);

	/* Same device and inode, another generation (the inode number reused): another file. */
	k1b.gen = 8;
	assert_null(unwind_maps_find(&um, &k1b));
	assert_ptr_equal(unwind_maps_find(&um, &k1), f1);
	k1b = key_of(1);
	k1b.dev = 8 << 20 | 2;
	assert_null(unwind_maps_find(&um, &k1b));

	/* No room: the least recently used table (f1) goes, its rows are reused;
	 * both the deletion and the new entry bump the generation. */
	f3 = unwind_maps_add(&um, &k3, &t, &s, 1, 0);
	assert_int_equal(gen, 4);
	assert_int_equal(f3->state, UNWIND_FILE_READY);
	assert_int_equal(f3->first_row, 0);
	assert_null(unwind_maps_find(&um, &k1));
	assert_ptr_equal(unwind_maps_find(&um, &k2), f2);
	unwind_maps_usage(&um, &u);
	assert_int_equal(u.evictions, 1);
	assert_int_equal(um.ndropped, 1);
	assert_memory_equal(&um.dropped[0], &k1, sizeof(k1));
	f3->last_used = 30;

	/* Freed ranges coalesce: evicting f2 (least recently used) joins its rows
	 * with the free tail, and 60 rows (62 slots) fit in one piece; f3 stays. */
	free(t.rows);
	t.rows = rows_for(60, 0x1000);
	t.nrows = 60;
	f1 = unwind_maps_add(&um, &k1, &t, &s, 1, 0);
	assert_int_equal(f1->state, UNWIND_FILE_READY);
	unwind_maps_usage(&um, &u);
	assert_int_equal(f1->first_row, 42);
	assert_int_equal(u.rows_used, 104);
	assert_int_equal(u.evictions, 2);
	assert_ptr_equal(unwind_maps_find(&um, &k3), f3);

	/* A table larger than the whole budget: known, without rows. */
	free(t.rows);
	t.rows = rows_for(200, 0x1000);
	t.nrows = 200;
	f2 = unwind_maps_add(&um, &k2, &t, &s, 1, 0);
	assert_int_equal(f2->state, UNWIND_FILE_NO_SPACE);
	/* A refused file is remembered, with no rows. */
	k2 = key_of(9);
	f2 = unwind_maps_add_refused(&um, &k2, um.refused_ttl_ns);
	assert_int_equal(f2->state, UNWIND_FILE_REFUSED);
	assert_int_equal(f2->nrows, 0);
	free(t.rows);
	unwind_maps_fini(&um);
}

/*
 * A table the walker used lately is never evicted for another: the newcomer
 * is kept without rows (two large files in use would otherwise evict each
 * other, and every small table with them, at each other's samples). A table
 * built ahead of use counts as unused, and goes first.
 */
static void test_recent_tables_stay(void **state)
{
	struct lowprof_unwind_row backing[90];
	struct unwind_maps um;
	struct unwind_table t = {0};
	struct unwinder_segment s = seg_at(0x1000, 0x10000);
	struct lowprof_file_id k1 = key_of(1), k2 = key_of(2), k3 = key_of(3), k4 = key_of(4);
	struct unwind_file *f1, *f2, *f3;
	uint64_t now = mono_ns() >> 30;

	(void)state;
	/* 40 rows take 42 slots: two tables fill 84 of 90. */
	assert_int_equal(unwind_maps_init_mem(&um, backing, 90), 0);
	t.rows = rows_for(40, 0x1000);
	t.nrows = 40;
	f1 = unwind_maps_add(&um, &k1, &t, &s, 1, 0);
	f2 = unwind_maps_add(&um, &k2, &t, &s, 1, 0);
	assert_int_equal(f1->state, UNWIND_FILE_READY);
	assert_int_equal(f2->state, UNWIND_FILE_READY);
	/* Both used in the last seconds (f1 the least recently): no room. */
	f1->last_used = now - 5;
	f2->last_used = now;
	f3 = unwind_maps_add(&um, &k3, &t, &s, 1, 0);
	assert_int_equal(f3->state, UNWIND_FILE_NO_SPACE);
	assert_int_equal(f3->nrows, 0);
	assert_int_equal(um.evictions, 0);
	assert_ptr_equal(unwind_maps_find(&um, &k1), f1);
	assert_ptr_equal(unwind_maps_find(&um, &k2), f2);

	/* A table larger than what evicting every cold one would free: nothing
	 * is evicted for it. */
	f1->last_used = now - 60;
	free(t.rows);
	t.rows = rows_for(60, 0x1000);
	t.nrows = 60;
	assert_int_equal(unwind_maps_add(&um, &k4, &t, &s, 1, 0)->state, UNWIND_FILE_NO_SPACE);
	assert_int_equal(um.evictions, 0);
	assert_ptr_equal(unwind_maps_find(&um, &k1), f1);
	free(t.rows);
	t.rows = rows_for(40, 0x1000);
	t.nrows = 40;

	/* Once f1 has gone cold (a minute unused) it makes room. */
	f1->last_used = now - 60;
	f3 = unwind_maps_add(&um, &k3, &t, &s, 1, 0);
	assert_int_equal(f3->state, UNWIND_FILE_READY);
	assert_int_equal(um.evictions, 1);
	assert_null(unwind_maps_find(&um, &k1));
	assert_ptr_equal(unwind_maps_find(&um, &k2), f2);

	/* Built ahead of use (the start-up scan): the first to go, though just built. */
	unwind_maps_mark_unused(&um, &k3);
	assert_true(f3->last_used < f2->last_used);
	assert_int_equal(unwind_maps_add(&um, &k4, &t, &s, 1, 0)->state, UNWIND_FILE_READY);
	assert_null(unwind_maps_find(&um, &k3));
	assert_ptr_equal(unwind_maps_find(&um, &k2), f2);
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

/* The walker's file offset -> ELF address (bpf/unwind_vma.bpf.h's walk_vaddr). */
static int entry_vaddr(const struct lowprof_unwind_file *e, uint64_t off, uint64_t *vaddr)
{
	uint32_t i;

	for (i = 0; i < e->nsegs; i++) {
		if (off >= e->seg[i].off && off - e->seg[i].off < e->seg[i].size) {
			*vaddr = off - e->seg[i].off + e->seg[i].vaddr;
			return 0;
		}
	}
	return -1;
}

/* The entry the walker reads: PIE, non-PIE, an unaligned segment, no rows. */
static void test_entry_offsets(void **state)
{
	struct lowprof_unwind_file e;
	struct unwind_file f;
	uint64_t vaddr = 0;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.state = UNWIND_FILE_READY;
	f.first_row = 5;
	f.nrows = 9;
	/* A PIE: text at vaddr 0x1000 from offset 0x1000. */
	f.nsegments = 1;
	f.seg[0] = seg_at(0x1000, 0x5000);
	unwind_maps_entry(&f, &e);
	assert_int_equal(e.first_row, 5);
	assert_int_equal(e.nrows, 9);
	assert_int_equal(e.flags, 0);
	assert_int_equal(entry_vaddr(&e, 0x1234, &vaddr), 0);
	assert_int_equal(vaddr, 0x1234);
	/* Non-PIE: vaddr 0x401000 from offset 0x1000. */
	f.seg[0].vaddr = 0x401000;
	unwind_maps_entry(&f, &e);
	assert_int_equal(entry_vaddr(&e, 0x1234, &vaddr), 0);
	assert_int_equal(vaddr, 0x401234);
	/* A segment whose offset is not page aligned. */
	f.seg[0].vaddr = 0x2a10;
	f.seg[0].offset = 0x1a10;
	unwind_maps_entry(&f, &e);
	assert_int_equal(entry_vaddr(&e, 0x1a20, &vaddr), 0);
	assert_int_equal(vaddr, 0x2a20);
	/* An offset no executable segment holds. */
	assert_int_equal(entry_vaddr(&e, 0x90000, &vaddr), -1);
	/* Too many segments for the walker, or no table: no rows, frame pointers. */
	f.nsegments = LOWPROF_UNWIND_FILE_SEGS + 1;
	unwind_maps_entry(&f, &e);
	assert_int_equal(e.nrows, 0);
	assert_true(e.flags & LOWPROF_UNWIND_FILE_NO_ROWS);
	f.nsegments = 1;
	f.state = UNWIND_FILE_REFUSED;
	unwind_maps_entry(&f, &e);
	assert_int_equal(e.nrows, 0);
	assert_true(e.flags & LOWPROF_UNWIND_FILE_NO_ROWS);
}

/* Frame pointers: a file with RBP-based rows keeps them, one without does not. */
static void test_fp_flags(void **state)
{
	struct unwind_table t = {0};
	size_t i;

	(void)state;
	t.rows = rows_for(30, 0x1000);
	t.nrows = 30;
	assert_int_equal(unwind_maps_fp_flags(&t), LOWPROF_UNWIND_FILE_NO_FP);
	for (i = 0; i < 30; i += 3)
		t.rows[i].cfa_kind = UNWIND_CFA_RBP;
	assert_int_equal(unwind_maps_fp_flags(&t), 0);
	free(t.rows);
}

/* The rows of code compiled with frame pointers: PLT0 (push, push, jmp) and
 * its stubs, then functions of entry, `push %rbp`, `mov %rsp,%rbp`, body,
 * exit (test_fp_calls_flag replaces one row at a time). */
static void fp_code_rows(struct unwind_table *t)
{
	static const struct unwind_row fp_rows[] = {
		{.pc = 0x1020, .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 16},
		{.pc = 0x1026, .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 24},
		{.pc = 0x1030, .cfa_kind = UNWIND_CFA_PLT, .cfa_off = 8, .plt_threshold = 11},
		{.pc = 0x10a0, .cfa_kind = UNWIND_CFA_NONE},
		{.pc = 0x1100, .cfa_kind = UNWIND_CFA_END},
		{.pc = 0x1130, .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 8},
		{.pc = 0x1131, .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 16,
		 .rbp_kind = UNWIND_RBP_AT_CFA, .rbp_off = -16},
		{.pc = 0x1139, .cfa_kind = UNWIND_CFA_RBP, .cfa_off = 16,
		 .rbp_kind = UNWIND_RBP_AT_CFA, .rbp_off = -16},
		{.pc = 0x1180, .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 8,
		 .rbp_kind = UNWIND_RBP_AT_CFA, .rbp_off = -16},
		{.pc = 0x1181, .cfa_kind = UNWIND_CFA_RBP, .cfa_off = 16,
		 .rbp_kind = UNWIND_RBP_AT_CFA, .rbp_off = -16},
		{.pc = 0x11a0, .cfa_kind = UNWIND_CFA_NONE},
	};

	free(t->rows);
	t->nrows = sizeof(fp_rows) / sizeof(fp_rows[0]);
	t->rows = malloc(sizeof(fp_rows));
	assert_non_null(t->rows);
	memcpy(t->rows, fp_rows, sizeof(fp_rows));
}

/* Every call made with a frame pointer: the walker steps such a file's
 * return addresses by RBP without a row (bpf/unwind_dwarf.bpf.h), so any row
 * where a call could be made without one must keep the flag off. Each case
 * puts one row in the place of fp_code_rows' row at `at`. */
static void test_fp_calls_flag(void **state)
{
	static const struct {
		size_t at;
		struct unwind_row row;
		const char *what;
	} breaks[] = {
		{8, {.pc = 0x1180, .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 24},
		 "a frameless function that pushed a register (and may call)"},
		{7, {.pc = 0x1139, .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 16,
		     .rbp_kind = UNWIND_RBP_AT_CFA, .rbp_off = -16},
		 "RBP pushed as a plain register: no RBP row after the push"},
		{9, {.pc = 0x1181, .cfa_kind = UNWIND_CFA_RBP, .cfa_off = 16,
		     .rbp_kind = UNWIND_RBP_AT_CFA, .rbp_off = -24},
		 "a frame pointer saved elsewhere than next to the return address"},
		{9, {.pc = 0x1181, .cfa_kind = UNWIND_CFA_RBP, .cfa_off = 32,
		     .rbp_kind = UNWIND_RBP_AT_CFA, .rbp_off = -16},
		 "the CFA at another distance from RBP"},
		{4, {.pc = 0x1100, .cfa_kind = UNWIND_CFA_SIGNAL},
		 "a signal trampoline: its return address is no call's"},
		{4, {.pc = 0x1100, .cfa_kind = UNWIND_CFA_UNSUPPORTED}, "CFI the rows cannot express"},
		{5, {.pc = 0x1130, .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 8,
		     .rbp_kind = UNWIND_RBP_UNDEFINED},
		 "RBP not recoverable at an entry"},
		{2, {.pc = 0x1030, .cfa_kind = UNWIND_CFA_RSP, .cfa_off = 8},
		 "PLT0's pushes without stubs after them"},
		{2, {.pc = 0x1040, .cfa_kind = UNWIND_CFA_PLT, .cfa_off = 8, .plt_threshold = 11},
		 "PLT0's pushes further than PLT0 from the stubs"},
	};
	struct unwind_table t = {0};
	size_t i;

	(void)state;
	fp_code_rows(&t);
	assert_int_equal(unwind_maps_fp_flags(&t), LOWPROF_UNWIND_FILE_FP_CALLS);
	for (i = 0; i < sizeof(breaks) / sizeof(breaks[0]); i++) {
		fp_code_rows(&t);
		t.rows[breaks[i].at] = breaks[i].row;
		if (unwind_maps_fp_flags(&t) != 0)
			fail_msg("%s: flags %u, expected 0", breaks[i].what, unwind_maps_fp_flags(&t));
	}
	free(t.rows);
}

/* The same judgement on real programs: chain.c built with and without frame
 * pointers, by gcc and clang (tests/programs/unwind). */
static void test_fp_calls_compiled(void **state)
{
	static const struct {
		const char *name;
		uint32_t flags;
	} progs[] = {
		{"chain_gcc_fp", LOWPROF_UNWIND_FILE_FP_CALLS},
		{"chain_clang_fp", LOWPROF_UNWIND_FILE_FP_CALLS},
		{"chain_gcc_omit", LOWPROF_UNWIND_FILE_NO_FP},
		{"chain_clang_omit", LOWPROF_UNWIND_FILE_NO_FP},
	};
	char path[512], err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct unwind_table t = {0};
		int fd;

		snprintf(path, sizeof(path), "%s/%s", UNWTEST_OUT, progs[i].name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(unwind_table_build_fd(fd, &t, err, sizeof(err)), 0);
		close(fd);
		if (unwind_maps_fp_flags(&t) != progs[i].flags)
			fail_msg("%s: flags %u, expected %u", progs[i].name, unwind_maps_fp_flags(&t),
				 progs[i].flags);
		unwind_table_free(&t);
	}
}

/* This process's own executable, opened as the loader opens a pending file:
 * exactly the reported identity, anything else refused. */
static void test_open_identity(void **state)
{
	char line[4200], path[4096];
	struct lowprof_file_id id, bad;
	struct mapped_file m;
	struct stat st;
	long gen = 0;
	bool found = false;
	FILE *f;
	int fd;

	(void)state;
	assert_int_equal(stat("/proc/self/exe", &st), 0);
	f = fopen("/proc/self/maps", "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (mapped_file_parse_line(line, &m) && m.ino == st.st_ino && m.perms[2] == 'x') {
			found = true;
			break;
		}
	}
	fclose(f);
	assert_true(found);
	id.ino = st.st_ino;
	id.dev = file_registry_kdev(st.st_dev);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	id.gen = ioctl(fd, FS_IOC_GETVERSION, &gen) == 0 ? (uint32_t)gen : 0;
	close(fd);
	/* The kernel's device encoding: major << 20 | minor. */
	assert_int_equal(id.dev >> 20, major(st.st_dev));
	assert_int_equal(file_registry_udev(id.dev), st.st_dev);

	fd = file_tables_open("/proc", getpid(), &id, m.start, m.end, path, sizeof(path));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_ino, id.ino);
	assert_true(path[0] == '/');
	close(fd);
	/* Another inode, another device, another generation: refused. */
	bad = id;
	bad.ino++;
	assert_true(file_tables_open("/proc", getpid(), &bad, m.start, m.end, path, sizeof(path)) < 0);
	bad = id;
	bad.dev ^= 1;
	assert_true(file_tables_open("/proc", getpid(), &bad, m.start, m.end, path, sizeof(path)) < 0);
	if (gen != 0 || id.gen != 0) {
		bad = id;
		bad.gen++;
		assert_int_equal(file_tables_open("/proc", getpid(), &bad, m.start, m.end, path,
						  sizeof(path)),
				 -ESTALE);
	}
}

/*
 * A restarted loader takes over its predecessor's tables from their
 * unwind_files entries and the rows still in the chunks: each entry whose
 * range is mapped, free and ends in a whole page index becomes a READY file
 * with the same range, segments and flags; a duplicate, an overlap, an entry
 * without rows, a range past the array and a page index that does not fit
 * are refused; new tables go around the adopted ones; and the adopted files
 * the start-up scan did not find are dropped, their rows freed.
 */
static void test_adopt_entries(void **state)
{
	static struct lowprof_unwind_row backing[400];
	struct unwinder_segment s[2] = {seg_at(0x1000, 0x1000), seg_at(0x3000, 0x800)};
	struct unwind_table t[3] = {{0}};
	struct lowprof_unwind_file e[3], bad;
	struct lowprof_file_id k[5];
	struct unwind_maps um, um2;
	struct unwind_file *f, *d;
	struct unwind_maps_usage u;
	size_t i, n[3] = {20, 300, 5};
	uint32_t at;

	(void)state;
	memset(backing, 0, sizeof(backing));
	assert_int_equal(unwind_maps_init_mem(&um, backing, 400), 0);
	for (i = 0; i < 5; i++)
		k[i] = key_of(100 + i);
	for (i = 0; i < 3; i++) {
		/* 300 rows 16 bytes apart span several index pages: the second table has an index. */
		t[i].rows = rows_for(n[i], 0x1000);
		t[i].nrows = n[i];
		f = unwind_maps_add(&um, &k[i], &t[i], s, 2, 0);
		assert_non_null(f);
		assert_int_equal(f->state, UNWIND_FILE_READY);
		unwind_maps_entry(f, &e[i]);
		e[i].last_used = i == 2 ? 0 : 1234; /* the walker stamped two of them */
		/* The walker's row search starts from these, reading no row for them:
		 * the first row's pc and the page index's word 0. */
		assert_int_equal(e[i].first_pc, backing[e[i].first_row].pc);
		assert_int_equal(e[i].first_pc, 0x1000);
		assert_int_equal(e[i].npages,
				 ((const uint32_t *)&backing[e[i].first_row + e[i].nrows])[0]);
	}
	assert_true(e[1].first_row + e[1].nrows < 400);
	assert_int_not_equal(((const uint32_t *)&backing[e[1].first_row + e[1].nrows])[0], 0);
	/* 300 rows 16 bytes apart from 0x1000: every index page they reach. */
	assert_int_equal(e[1].npages, ((0x1000 + 299 * 16) >> LOWPROF_UNWIND_PAGE_SHIFT) -
					      (0x1000 >> LOWPROF_UNWIND_PAGE_SHIFT) + 1);

	/* The next loader: the same rows, no files. */
	assert_int_equal(unwind_maps_init_mem(&um2, backing, 400), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(unwind_maps_adopt_entry(&um2, &k[i], &e[i]), 0);
		f = unwind_maps_find(&um2, &k[i]);
		d = unwind_maps_find(&um, &k[i]);
		assert_non_null(f);
		assert_int_equal(f->state, UNWIND_FILE_READY);
		assert_true(f->adopted);
		assert_int_equal(f->first_row, d->first_row);
		assert_int_equal(f->nrows, d->nrows);
		assert_int_equal(f->nslots, d->nslots);
		assert_int_equal(f->flags, d->flags);
		assert_int_equal(f->nsegments, 2);
		assert_int_equal(f->seg[1].vaddr, 0x3000);
		assert_int_equal(f->seg[1].offset, 0x3000);
		assert_int_equal(f->seg[1].filesz, 0x800);
		assert_int_equal(f->first_pc, d->first_pc);
		assert_int_equal(f->npages, d->npages);
	}
	/* Taken from the rows and their index, not from the entry. */
	bad = e[0];
	bad.first_pc = 0xdead;
	bad.npages = 77;
	unwind_maps_fini(&um2);
	assert_int_equal(unwind_maps_init_mem(&um2, backing, 400), 0);
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[0], &bad), 0);
	f = unwind_maps_find(&um2, &k[0]);
	assert_int_equal(f->first_pc, 0x1000);
	assert_int_equal(f->npages, unwind_maps_find(&um, &k[0])->npages);
	unwind_maps_fini(&um2);
	assert_int_equal(unwind_maps_init_mem(&um2, backing, 400), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(unwind_maps_adopt_entry(&um2, &k[i], &e[i]), 0);
	assert_int_equal(unwind_maps_find(&um2, &k[0])->last_used, 1234);
	/* Never used by the walker: evictable at once, like a start-up table. */
	assert_true(unwind_maps_find(&um2, &k[2])->last_used < (mono_ns() >> 30));

	/* Refused: the same file twice, an overlap, no rows, past the array, a
	 * segment count the walker does not take, a page index too large. */
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[0], &e[0]), -EINVAL);
	/* Another file naming rows a table holds (its index is whole). */
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[3], &e[0]), -EINVAL);
	assert_null(unwind_maps_find(&um2, &k[3]));
	bad = e[1];
	bad.first_row += 3;
	bad.nrows -= 10;
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[3], &bad), -EINVAL);
	bad = e[0];
	bad.flags |= LOWPROF_UNWIND_FILE_NO_ROWS;
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[3], &bad), -EINVAL);
	bad.flags = 0;
	bad.first_row = 390;
	bad.nrows = 20;
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[3], &bad), -EINVAL);
	bad = e[0];
	bad.nsegs = LOWPROF_UNWIND_FILE_SEGS + 1;
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[3], &bad), -EINVAL);
	bad = e[0];
	bad.nsegs = 0;
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[3], &bad), -EINVAL);
	at = e[2].first_row + e[2].nrows;
	((uint32_t *)&backing[at])[0] = 1000; /* 1003 index words for 5 rows */
	unwind_maps_fini(&um2);
	assert_int_equal(unwind_maps_init_mem(&um2, backing, 400), 0);
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[2], &e[2]), -EINVAL);
	assert_null(unwind_maps_find(&um2, &k[2]));
	assert_int_equal(um2.nfiles, 0);
	((uint32_t *)&backing[at])[0] = 0;
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[0], &e[0]), 0);
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[1], &e[1]), 0);
	assert_int_equal(unwind_maps_adopt_entry(&um2, &k[2], &e[2]), 0);

	/* A new table goes around the adopted ones. */
	d = unwind_maps_add(&um2, &k[4], &t[0], s, 2, 0);
	assert_non_null(d);
	assert_int_equal(d->state, UNWIND_FILE_READY);
	for (i = 0; i < 3; i++) {
		f = unwind_maps_find(&um2, &k[i]);
		assert_true(d->first_row + d->nslots <= f->first_row ||
			    f->first_row + f->nslots <= d->first_row);
	}

	/* The scan found file 0 mapped: 1 and 2 go, handed to the caller, their rows free. */
	unwind_maps_find(&um2, &k[0])->adopted = false;
	assert_int_equal(unwind_maps_drop_unseen(&um2), 2);
	assert_int_equal(um2.ndropped, 2);
	assert_null(unwind_maps_find(&um2, &k[1]));
	assert_null(unwind_maps_find(&um2, &k[2]));
	assert_non_null(unwind_maps_find(&um2, &k[0]));
	unwind_maps_usage(&um2, &u);
	assert_int_equal(u.rows_used, unwind_maps_find(&um2, &k[0])->nslots + d->nslots);
	assert_int_equal(unwind_maps_drop_unseen(&um2), 0);
	/* The large table fits again where it was. */
	f = unwind_maps_add(&um2, &k[1], &t[1], s, 2, 0);
	assert_non_null(f);
	assert_int_equal(f->state, UNWIND_FILE_READY);
	for (i = 0; i < 3; i++)
		free(t[i].rows);
	unwind_maps_fini(&um2);
	unwind_maps_fini(&um);
}

/* The build id note of the object loaded at base, found in memory through
 * its program headers (not the unwinder's parser): file offset, address
 * from the load bias, bytes. */
struct mem_build_id {
	uintptr_t base;
	struct unwinder_build_id bid;
	bool found;
};

static int mem_build_id_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mem_build_id *m = arg;
	int i, j;

	(void)size;
	if (info->dlpi_addr != m->base)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(m->base + ph->p_vaddr), *end = p + ph->p_filesz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const uint8_t *desc = p + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);

			if (nh->n_type == NT_GNU_BUILD_ID && memcmp(p + sizeof(*nh), "GNU", 4) == 0) {
				m->bid.vaddr = (uint64_t)(desc - (const uint8_t *)m->base);
				memcpy(m->bid.bytes, desc, sizeof(m->bid.bytes));
				/* The file offset through the PT_LOAD that maps it. */
				for (j = 0; j < info->dlpi_phnum; j++) {
					const ElfW(Phdr) *l = &info->dlpi_phdr[j];

					if (l->p_type == PT_LOAD && m->bid.vaddr >= l->p_vaddr &&
					    m->bid.vaddr < l->p_vaddr + l->p_filesz)
						m->bid.offset = m->bid.vaddr - l->p_vaddr + l->p_offset;
				}
				m->found = true;
				return 1;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

/*
 * The dynamic loader's mark as the walker checks it, from memory at AT_BASE
 * (getauxval: this very process's ld.so, as the kernel mapped it): the hash
 * of the ELF header there, and the build id bytes at their address from
 * AT_BASE, against the mark the loader takes of the file: equal. Another
 * ELF file's hash differs, a copy's mark is the same; no mark for a file
 * that is not ELF or is shorter than a header, for build id bytes the file
 * does not hold at the offset given (an unwinder's wrong word), for no
 * build id, or for an address the walker's entry cannot hold.
 */
static void test_file_mark(void **state)
{
	char tmpl[] = "/tmp/lowprof-ehdr.XXXXXX", interp[PATH_MAX];
	__u64 mem[LOWPROF_EHDR_BYTES / 8];
	unsigned long base = getauxval(AT_BASE);
	struct unwind_file_mark m_ld, m_self, m_copy, m;
	struct mem_build_id mb = {.base = base};
	struct unwinder_build_id bad;
	uint64_t in_mem;
	char buf[4096];
	ssize_t n;
	int fd, self, cp;
	FILE *maps;
	char line[PATH_MAX + 128];

	(void)state;
	assert_true(base != 0); /* a dynamically linked test */
	memcpy(mem, (const void *)base, sizeof(mem));
	dl_iterate_phdr(mem_build_id_cb, &mb);
	assert_true(mb.found && mb.bid.offset != 0);
	/* The file mapped at AT_BASE, from this process's maps. */
	interp[0] = '\0';
	maps = fopen("/proc/self/maps", "r");
	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps) != NULL) {
		unsigned long lo;
		char *path = strchr(line, '/');

		if (sscanf(line, "%lx-", &lo) == 1 && lo == base && path != NULL) {
			path[strcspn(path, "\n")] = '\0';
			snprintf(interp, sizeof(interp), "%s", path);
			break;
		}
	}
	fclose(maps);
	assert_true(interp[0] == '/');
	fd = open(interp, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(unwind_maps_file_mark(fd, &mb.bid, &m_ld), 0);
	assert_true(m_ld.ehdr_hash != 0);
	assert_true(m_ld.ehdr_hash == lowprof_ehdr_hash(mem));
	memcpy(&in_mem, (const void *)(base + m_ld.build_id_vaddr), sizeof(in_mem));
	assert_true(m_ld.build_id == in_mem);
	/* Bytes the file does not hold there: no mark. */
	bad = mb.bid;
	bad.bytes[0] ^= 1;
	assert_int_equal(unwind_maps_file_mark(fd, &bad, &m), -1);
	assert_true(m.ehdr_hash == 0 && m.build_id_vaddr == 0);
	/* No build id (the unwinder found none): no mark. */
	memset(&bad, 0, sizeof(bad));
	assert_int_equal(unwind_maps_file_mark(fd, &bad, &m), -1);
	/* An address past the entry's 32 bits: no mark. */
	bad = mb.bid;
	bad.vaddr += 1ULL << 32;
	assert_int_equal(unwind_maps_file_mark(fd, &bad, &m), -1);
	close(fd);

	/* Another file, told ld.so's build id place: no mark (other bytes). */
	self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(self >= 0);
	assert_int_equal(unwind_maps_file_mark(self, &mb.bid, &m_self), -1);
	/* A copy of ld.so: the same mark. */
	cp = mkstemp(tmpl);
	assert_true(cp >= 0);
	fd = open(interp, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		assert_int_equal(write(cp, buf, (size_t)n), n);
	close(fd);
	assert_int_equal(unwind_maps_file_mark(cp, &mb.bid, &m_copy), 0);
	assert_memory_equal(&m_copy, &m_ld, sizeof(m_copy));
	/* Not ELF: no mark. */
	assert_int_equal(pwrite(cp, "#!/bin/sh", 9, 0), 9);
	assert_int_equal(unwind_maps_file_mark(cp, &mb.bid, &m), -1);
	/* Shorter than a header: none. */
	assert_int_equal(ftruncate(cp, 40), 0);
	assert_int_equal(pwrite(cp, "\177ELF", 4, 0), 4);
	assert_int_equal(unwind_maps_file_mark(cp, &mb.bid, &m), -1);
	close(cp);
	close(self);
	unlink(tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_cache_and_eviction),
		cmocka_unit_test(test_idle_expiry),
		cmocka_unit_test(test_cache_bounds),
		cmocka_unit_test(test_recent_tables_stay),
		cmocka_unit_test(test_page_index),
		cmocka_unit_test(test_entry_offsets),
		cmocka_unit_test(test_fp_flags),
		cmocka_unit_test(test_fp_calls_flag),
		cmocka_unit_test(test_fp_calls_compiled),
		cmocka_unit_test(test_open_identity),
		cmocka_unit_test(test_adopt_entries),
		cmocka_unit_test(test_file_mark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
