/*
 * Samples in the file encoding (user frames as (file, offset), the file list
 * after the frames, a stop reason) through the exporter's real ingest path:
 * sample_record_decode, ingest_sample (symbolizer over a direct source that
 * knows this test's own binary by identity, the stack cache), the profile,
 * and the folded and summary.json writers. The functions are named from the
 * file alone (no maps read for them), a cut stack ends in its marker, a stack
 * of file frames is cached across pids, a frame of a file the source does not
 * know is never cached, and raw addresses still go through the maps.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/offcpu.h"
#include "exporter/formats/pprof_reader.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/formats/summary_json.h"
#include "exporter/ingest.h"
#include "exporter/profile/profile.h"
#include "exporter/symbols/proc_maps.h"
#include "exporter/symbols/proc_source.h"
#include "exporter/symbols/stack_cache.h"
#include "exporter/symbols/symbolizer.h"
#include "ipc/sample_record.h"
#include "test_support.h"

/* Non-static, not inlined: symbols of this binary the frames point into. */
__attribute__((noinline)) int lowprof_ingest_test_leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int lowprof_ingest_test_outer(int x)
{
	return lowprof_ingest_test_leaf(x) + 2;
}

struct fx {
	struct proc_source *src;
	struct symbolizer *sym;
	struct stack_cache *cache;
	struct profile *prof;
	struct profile *interval, *offcpu, *offcpu_interval; /* NULL unless a test sets them */
	struct ingest_stats st;
	struct lowprof_file_id exe_id;
	char exe[4096];
	uint64_t off_leaf, off_outer;
	uint16_t flags; /* of the next put */
};

static uint64_t own_offset(const void *fn, char *path, size_t pathlen)
{
	uint64_t addr = (uint64_t)(uintptr_t)fn, off;
	struct proc_maps *m = NULL;
	const struct proc_maps_entry *e;
	char err[128];

	assert_int_equal(proc_maps_read_path("/proc/self/maps", &m, err, sizeof(err)), 0);
	e = proc_maps_find(m, addr);
	assert_non_null(e);
	off = addr - e->start + e->offset;
	if (path != NULL)
		snprintf(path, pathlen, "%s", e->path);
	proc_maps_free(m);
	return off;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	assert_non_null(f);
	f->off_leaf = own_offset((const void *)&lowprof_ingest_test_leaf, f->exe, sizeof(f->exe));
	f->off_outer = own_offset((const void *)&lowprof_ingest_test_outer, NULL, 0);
	f->src = proc_source_direct_new("/proc", "", NULL);
	assert_non_null(f->src);
	assert_int_equal(proc_source_direct_add_file(f->src, f->exe, &f->exe_id), 0);
	f->sym = symbolizer_new(f->src, err, sizeof(err));
	f->cache = stack_cache_new(64);
	f->prof = profile_new();
	assert_true(f->sym != NULL && f->cache != NULL && f->prof != NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	profile_free(f->prof);
	profile_free(f->interval);
	profile_free(f->offcpu);
	profile_free(f->offcpu_interval);
	stack_cache_free(f->cache);
	symbolizer_free(f->sym);
	proc_source_free(f->src);
	free(f);
	return 0;
}

/* Decode and ingest one sample of user frames uf (LOWPROF_FRAME_MAKE words)
 * and files; the decoder is the exporter's, so the sample is checked too. */
static void put(struct fx *f, uint32_t pid, uint8_t stop, const uint64_t *uf, uint16_t nu,
		const struct lowprof_file_id *files, uint8_t nfiles)
{
	static uint64_t buf[LOWPROF_SAMPLE_MAX_SIZE / 8];
	struct lowprof_sample *s = (struct lowprof_sample *)buf;
	struct ingest_targets t = {.cumulative = f->prof,
				   .interval = f->interval,
				   .offcpu = f->offcpu,
				   .offcpu_interval = f->offcpu_interval,
				   .stacks = f->cache};
	struct sample_view sv;
	char err[160];
	size_t len;

	memset(buf, 0, sizeof(buf));
	s->period_ns = (f->flags & LOWPROF_SAMPLE_OFF_CPU) ? 2000000 : 10000000;
	s->pid = s->tid = pid;
	s->user_depth = nu;
	s->nfiles = nfiles;
	s->user_stop = stop;
	s->flags = f->flags;
	memcpy(s->comm, "churn", 6);
	if (nu > 0)
		memcpy(s->frames, uf, nu * sizeof(*uf));
	if (nfiles > 0)
		memcpy(s->frames + nu, files, nfiles * sizeof(*files));
	len = LOWPROF_SAMPLE_HEADER_SIZE + nu * sizeof(*uf) + nfiles * sizeof(*files);
	assert_int_equal(sample_record_decode(buf, len, &sv, err, sizeof(err)), 0);
	assert_int_equal(ingest_sample(&t, f->sym, &sv, &f->st), 0);
}

/* summary.json's text without the extras the exporter adds. */
static char *summary_text(const struct profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	assert_non_null(mem);
	assert_int_equal(summary_json_write(p, NULL, mem), 0);
	fclose(mem);
	return text;
}

static void test_file_frames_through_outputs(void **state)
{
	struct fx *f = *state;
	const uint64_t uf[] = {LOWPROF_FRAME_MAKE(1, f->off_leaf + 2),
			       LOWPROF_FRAME_MAKE(1, f->off_outer + 6)};
	const uint64_t whole[] = {LOWPROF_FRAME_MAKE(1, f->off_leaf)};
	struct lowprof_file_id ghost = {.ino = 99, .dev = (8u << 20) | 1, .gen = 0};
	const struct lowprof_file_id both[] = {f->exe_id, ghost};
	const uint64_t mixed[] = {LOWPROF_FRAME_MAKE(2, 0x40), LOWPROF_FRAME_MAKE(1, f->off_outer + 6)};
	const uint64_t raw[] = {LOWPROF_FRAME_MAKE(0, (uint64_t)(uintptr_t)&lowprof_ingest_test_leaf)};
	struct stack_cache_stats cs;
	struct symbolizer_stats ss;
	struct stat sb;
	char *folded, *summary;
	size_t i;
	bool seen = false;

	/* Two processes of the same binary, cut for want of a table. */
	put(f, 5001, LOWPROF_STOP_NO_TABLE, uf, 2, &f->exe_id, 1);
	put(f, 5002, LOWPROF_STOP_NO_TABLE, uf, 2, &f->exe_id, 1);
	stack_cache_stats(f->cache, &cs);
	assert_int_equal(cs.hits, 1); /* the second pid reused the first's frames */
	/* A whole stack: no marker. */
	put(f, 5003, LOWPROF_STOP_NONE, whole, 1, &f->exe_id, 1);
	/* A frame in a file the source does not know: named by identity, never cached. */
	put(f, 5004, LOWPROF_STOP_UNWIND_FAILED, mixed, 2, both, 2);
	put(f, 5004, LOWPROF_STOP_UNWIND_FAILED, mixed, 2, both, 2);
	stack_cache_stats(f->cache, &cs);
	assert_int_equal(cs.hits, 1);
	symbolizer_stats(f->sym, &ss);
	assert_int_equal(ss.maps_reads, 0);
	/* A raw address (no file list): through this process's maps, as before. */
	put(f, (uint32_t)getpid(), LOWPROF_STOP_NONE, raw, 1, NULL, 0);
	symbolizer_stats(f->sym, &ss);
	assert_int_equal(ss.maps_reads, 1);
	assert_int_equal(f->st.samples, 6);

	folded = ts_folded_text(f->prof);
	assert_non_null(strstr(folded, "churn;[no_unwind_table];lowprof_ingest_test_outer;"
				       "lowprof_ingest_test_leaf 2\n"));
	assert_non_null(strstr(folded, "churn;lowprof_ingest_test_leaf 2\n"));
	assert_non_null(strstr(folded, "churn;[unwind_failed];lowprof_ingest_test_outer;"
				       "[file_8:1_inode_99]+0x40 2\n"));
	free(folded);
	summary = summary_text(f->prof);
	assert_non_null(strstr(summary, "\"cut_stacks\": {\"samples\": 4, \"no_unwind_table\": 2, "
					"\"unwind_failed\": 2, \"no_frame_pointers\": 0"));
	free(summary);

	/* The file is the mapping: its path, from offset 0 to its size. */
	assert_int_equal(stat(f->exe, &sb), 0);
	for (i = 0; i < profile_mapping_count(f->prof); i++) {
		const struct profile_mapping *m = profile_mapping_at(f->prof, (uint32_t)i);

		if (strcmp(profile_string(f->prof, m->filename), f->exe) != 0 || m->memory_start != 0)
			continue;
		assert_int_equal(m->memory_limit, (uint64_t)sb.st_size);
		assert_int_equal(m->file_offset, 0);
		seen = true;
	}
	assert_true(seen);
}

/* A restarted exporter reloads profile.pb.gz: the markers, the file mappings
 * and the cut counts come back as they were written. */
static void test_restart_keeps_markers(void **state)
{
	struct fx *f = *state;
	const uint64_t uf[] = {LOWPROF_FRAME_MAKE(1, f->off_leaf + 2),
			       LOWPROF_FRAME_MAKE(1, f->off_outer + 6)};
	struct profile *back = NULL;
	char *gz = NULL, *before, *after, *sum_before, *sum_after, err[160];
	size_t len = 0;
	FILE *mem;

	put(f, 6001, LOWPROF_STOP_NO_FRAME_POINTERS, uf, 2, &f->exe_id, 1);
	put(f, 6002, LOWPROF_STOP_NONE, uf, 2, &f->exe_id, 1);
	mem = open_memstream(&gz, &len);
	assert_non_null(mem);
	assert_int_equal(pprof_write(f->prof, mem, err, sizeof(err)), 0);
	fclose(mem);
	assert_int_equal(pprof_reader_load((const uint8_t *)gz, len, &back, err, sizeof(err)), 0);
	before = ts_folded_text(f->prof);
	after = ts_folded_text(back);
	assert_string_equal(after, before);
	assert_non_null(strstr(after, "churn;[no_frame_pointers];lowprof_ingest_test_outer;"));
	sum_before = summary_text(f->prof);
	sum_after = summary_text(back);
	assert_non_null(strstr(sum_after, "\"cut_stacks\": {\"samples\": 1, \"no_unwind_table\": 0, "
					  "\"unwind_failed\": 0, \"no_frame_pointers\": 1"));
	assert_non_null(strstr(sum_before, "\"no_frame_pointers\": 1"));
	free(sum_before);
	free(sum_after);
	free(before);
	free(after);
	free(gz);
	profile_free(back);
}

/* A sample without a single frame (the BPF guard skipped its user stack in
 * user mode, or there was none) still gets one: its marker, never an empty
 * stack (which OTLP and flame graphs cannot show); the two are told apart
 * although their cache keys differ only by the flag. */
static void test_frameless_samples_marked(void **state)
{
	struct fx *f = *state;
	char *folded, *summary;
	size_t i;

	f->flags = LOWPROF_SAMPLE_USER_SKIPPED;
	put(f, 7001, LOWPROF_STOP_NONE, NULL, 0, NULL, 0);
	f->flags = LOWPROF_SAMPLE_NO_USER_STACK;
	put(f, 7002, LOWPROF_STOP_NONE, NULL, 0, NULL, 0);
	put(f, 7003, LOWPROF_STOP_NONE, NULL, 0, NULL, 0);
	f->flags = 0;
	for (i = 0; i < profile_stack_count(f->prof); i++)
		assert_true(profile_stack_at(f->prof, i)->nlocations > 0);
	folded = ts_folded_text(f->prof);
	assert_non_null(strstr(folded, "churn;[user_stack_skipped] 1\n"));
	assert_non_null(strstr(folded, "churn;[no_stack] 2\n"));
	free(folded);
	summary = summary_text(f->prof);
	assert_non_null(strstr(summary, "\"user_stack_skipped\": 1, \"no_stack\": 2}"));
	free(summary);
}

/* A file the source does not know yet (the loader registers it at its next
 * pass, after the sample came): its frames are unnamed, not cached, and named
 * once the source knows it, after a second, not the ten of a failed open. */
static void test_file_known_later(void **state)
{
	struct fx *f = *state;
	struct proc_source *src = proc_source_direct_new("/proc", "", NULL);
	char err[256], *folded;
	struct symbolizer *sym;
	struct lowprof_file_id id;
	const uint64_t uf[] = {LOWPROF_FRAME_MAKE(1, f->off_leaf + 2)};

	assert_non_null(src);
	sym = symbolizer_new(src, err, sizeof(err));
	assert_non_null(sym);
	symbolizer_free(f->sym);
	proc_source_free(f->src);
	f->sym = sym;
	f->src = src;
	put(f, 8001, LOWPROF_STOP_NONE, uf, 1, &f->exe_id, 1);
	assert_int_equal(proc_source_direct_add_file(src, f->exe, &id), 0);
	assert_memory_equal(&id, &f->exe_id, sizeof(id));
	put(f, 8002, LOWPROF_STOP_NONE, uf, 1, &f->exe_id, 1); /* before the retry: still unnamed */
	usleep(1100 * 1000);
	put(f, 8003, LOWPROF_STOP_NONE, uf, 1, &f->exe_id, 1);
	folded = ts_folded_text(f->prof);
	assert_non_null(strstr(folded, "churn;lowprof_ingest_test_leaf 1\n"));
	assert_null(strstr(folded, "churn;lowprof_ingest_test_leaf 2"));
	free(folded);
}

/* With OTLP a sample goes to the run's profile and the interval's, each
 * through a memo of its own in the stack cache entry (stack_cache.h): both
 * hold the same stacks, a new interval's profile starts empty (a memo of
 * the last interval's is not its), and off-CPU records go to their own two
 * profiles the same way, not to the on-CPU ones. */
static void test_interval_profile_through_memos(void **state)
{
	struct fx *f = *state;
	const uint64_t a[] = {LOWPROF_FRAME_MAKE(1, f->off_leaf + 2),
			      LOWPROF_FRAME_MAKE(1, f->off_outer + 6)};
	const uint64_t b[] = {LOWPROF_FRAME_MAKE(1, f->off_outer + 6)};
	struct stack_cache_stats cs;
	char *run, *interval, *offcpu, *offcpu_interval;
	int i;

	f->interval = profile_new();
	f->offcpu = profile_new();
	f->offcpu_interval = profile_new();
	assert_true(f->interval != NULL && f->offcpu != NULL && f->offcpu_interval != NULL);
	for (i = 0; i < 5; i++) {
		put(f, 5001, LOWPROF_STOP_NONE, a, 2, &f->exe_id, 1);
		if (i < 2)
			put(f, 5002, LOWPROF_STOP_NONE, b, 1, &f->exe_id, 1);
	}
	stack_cache_stats(f->cache, &cs);
	assert_int_equal(cs.hits, 5); /* all but the first of each stack */
	run = ts_folded_text(f->prof);
	interval = ts_folded_text(f->interval);
	assert_string_equal(interval, run);
	assert_non_null(strstr(run, "churn;lowprof_ingest_test_outer;lowprof_ingest_test_leaf 5\n"));
	assert_non_null(strstr(run, "churn;lowprof_ingest_test_outer 2\n"));
	free(run);
	free(interval);

	/* The next interval: a new profile, the cache's entries and memos kept.
	 * b first, so that its locations are numbered otherwise than in the
	 * run's profile: a memo shared by the two would then name wrong ones. */
	profile_free(f->interval);
	f->interval = profile_new();
	assert_non_null(f->interval);
	put(f, 5002, LOWPROF_STOP_NONE, b, 1, &f->exe_id, 1);
	put(f, 5001, LOWPROF_STOP_NONE, a, 2, &f->exe_id, 1);
	put(f, 5001, LOWPROF_STOP_NONE, a, 2, &f->exe_id, 1);
	interval = ts_folded_text(f->interval);
	assert_non_null(strstr(interval, "churn;lowprof_ingest_test_outer;lowprof_ingest_test_leaf 2\n"));
	assert_non_null(strstr(interval, "churn;lowprof_ingest_test_outer 1\n"));
	assert_int_equal(profile_stack_count(f->interval), 2);
	free(interval);
	run = ts_folded_text(f->prof);
	assert_non_null(strstr(run, "churn;lowprof_ingest_test_outer;lowprof_ingest_test_leaf 7\n"));
	assert_non_null(strstr(run, "churn;lowprof_ingest_test_outer 3\n"));
	assert_int_equal(profile_stack_count(f->prof), 2);

	/* Off-CPU records of the same stack (2 ms each, counted in us). */
	f->flags = LOWPROF_SAMPLE_OFF_CPU;
	put(f, 5001, LOWPROF_STOP_NONE, a, 2, &f->exe_id, 1);
	put(f, 5001, LOWPROF_STOP_NONE, a, 2, &f->exe_id, 1);
	put(f, 5001, LOWPROF_STOP_NONE, a, 2, &f->exe_id, 1);
	f->flags = 0;
	offcpu = ts_folded_text(f->offcpu);
	offcpu_interval = ts_folded_text(f->offcpu_interval);
	assert_string_equal(offcpu, "churn;lowprof_ingest_test_outer;lowprof_ingest_test_leaf 6000\n");
	assert_string_equal(offcpu_interval, offcpu);
	interval = ts_folded_text(f->interval);
	assert_non_null(strstr(interval, "churn;lowprof_ingest_test_outer;lowprof_ingest_test_leaf 2\n"));
	free(interval);
	interval = ts_folded_text(f->prof);
	assert_string_equal(interval, run);
	/* And on-CPU again after them: the memos they wrote over are refilled. */
	put(f, 5001, LOWPROF_STOP_NONE, a, 2, &f->exe_id, 1);
	free(interval);
	interval = ts_folded_text(f->interval);
	assert_non_null(strstr(interval, "churn;lowprof_ingest_test_outer;lowprof_ingest_test_leaf 3\n"));
	assert_int_equal(profile_stack_count(f->interval), 2);
	assert_int_equal(f->st.samples, 11);
	assert_int_equal(f->st.offcpu, 3);
	assert_int_equal(f->st.interval_refused, 0);
	free(interval);
	free(run);
	free(offcpu);
	free(offcpu_interval);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_file_frames_through_outputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_keeps_markers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frameless_samples_marked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_known_later, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interval_profile_through_memos, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
