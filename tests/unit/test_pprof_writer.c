/* pprof encoder: write a known profile, decode it with protoc against the
 * official schema, and read it with `go tool pprof -top` when go is present. */
#define _GNU_SOURCE /* fopencookie */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "exporter/formats/pprof_reader.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/profile/profile.h"
#include "test_support.h"

/* Decodes the gzipped pprof file named by %s as text, against the reference
 * schema (ts_run finds the folder: ts_reference_proto_dir). */
#define PPROF_DECODE "gzip -dc %s | protoc --decode perftools.profiles.Profile " \
	"-I \"$LOWPROF_REFERENCE_PROTO_DIR/pprof\" profile.proto"

static size_t count_substr(const char *hay, const char *needle)
{
	size_t n = 0;

	for (hay = strstr(hay, needle); hay != NULL; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

static void write_profile_file(const struct profile *p, const char *path)
{
	char err[256] = "";
	char *mem = NULL;
	size_t memlen = 0;
	FILE *ms = open_memstream(&mem, &memlen);

	/* Encode into a memory stream (what the exporter's writers see), then save. */
	assert_non_null(ms);
	assert_int_equal(pprof_write(p, ms, err, sizeof(err)), 0);
	fclose(ms);
	assert_true(memlen > 18);
	assert_int_equal((unsigned char)mem[0], 0x1f); /* gzip magic */
	assert_int_equal((unsigned char)mem[1], 0x8b);
	ts_write_file(path, mem, memlen);
	free(mem);
}

static void test_protoc_decode(void **state)
{
	struct profile *p = ts_known_profile();
	char path[512], cmd[1024];
	char *text;
	int status;

	(void)state;
	snprintf(path, sizeof(path), "%s/profile.pb.gz", ts_tmpdir);
	write_profile_file(p, path);
	snprintf(cmd, sizeof(cmd), PPROF_DECODE, path);
	text = ts_run(cmd, &status);
	assert_int_equal(status, 0);

	/* Four distinct stacks (the two worker threads merged). */
	assert_int_equal(count_substr(text, "\nsample {"), 4);
	assert_non_null(strstr(text, "string_table: \"\"\n")); /* index 0 */
	assert_true(strstr(text, "string_table: \"") == strstr(text, "string_table: \"\"\n"));
	assert_non_null(strstr(text, "string_table: \"write_leaf\""));
	assert_non_null(strstr(text, "string_table: \"compute_leaf\""));
	assert_non_null(strstr(text, "string_table: \"do_sys_write\""));
	assert_non_null(strstr(text, "string_table: \"[kernel.kallsyms]\""));
	assert_non_null(strstr(text, "string_table: \"[truncated]\""));
	assert_non_null(strstr(text, "string_table: \"samples\""));
	assert_non_null(strstr(text, "string_table: \"nanoseconds\""));
	assert_non_null(strstr(text, "string_table: \"0123abcd\""));
	/* Values [count, cpu_ns]. */
	assert_non_null(strstr(text, "value: 7\n  value: 368421046\n"));
	assert_non_null(strstr(text, "value: 11\n  value: 578947358\n"));
	assert_non_null(strstr(text, "value: 3\n  value: 157894734\n"));
	/* pid and tid labels, tid only where a single thread was seen. */
	assert_non_null(strstr(text, "num: 100\n"));
	assert_non_null(strstr(text, "num: 101\n"));
	assert_null(strstr(text, "num: 201\n")); /* worker stack 2 saw tids 201 and 202 */
	assert_non_null(strstr(text, "num: 203\n"));
	assert_non_null(strstr(text, "time_nanos: 1700000000000000000"));
	assert_non_null(strstr(text, "duration_nanos: 10000000000"));
	assert_non_null(strstr(text, "period: 52631578"));
	/* Mappings: the neutral main mapping first, then libc, app, kernel. */
	assert_int_equal(count_substr(text, "\nmapping {"), 4);
	assert_non_null(strstr(text, "mapping {\n  id: 1\n  filename: "));
	assert_non_null(strstr(text, "memory_start: 93823560581120")); /* 0x555500000000 */
	free(text);

	/* The truncated stack: leaf first, the [truncated] location last. */
	snprintf(cmd, sizeof(cmd), PPROF_DECODE " | grep -c 'location_id'", path);
	text = ts_run(cmd, &status);
	assert_int_equal(atoi(text), 3 + 2 + 2 + 2); /* 3 + 2 + 2 + (1 + [truncated]) */
	free(text);
	profile_free(p);
}

static void test_go_pprof(void **state)
{
	struct profile *p = ts_known_profile();
	char path[512], cmd[1024];
	char *text;
	int status;

	(void)state;
	if (system("command -v go >/dev/null 2>&1") != 0) {
		printf("# skipped go tool pprof check: go is not installed\n");
		profile_free(p);
		return;
	}
	snprintf(path, sizeof(path), "%s/go.pb.gz", ts_tmpdir);
	write_profile_file(p, path);
	snprintf(cmd, sizeof(cmd),
		 "HOME=%s GOCACHE=%s/gocache PPROF_TMPDIR=%s go tool pprof -top %s 2>&1",
		 ts_tmpdir, ts_tmpdir, ts_tmpdir, path);
	text = ts_run(cmd, &status);
	printf("%s", text);
	assert_int_equal(status, 0);
	assert_non_null(strstr(text, "compute_leaf"));
	assert_non_null(strstr(text, "write_leaf"));
	assert_non_null(strstr(text, "deep_leaf"));
	assert_non_null(strstr(text, "Type: cpu"));
	/* pprof names the profile after its first mapping: never a binary. */
	assert_non_null(strstr(text, "File: " PROFILE_MAIN_MAPPING_NAME "\n"));
	free(text);
	profile_free(p);
}

static void test_empty_profile(void **state)
{
	struct profile *p = profile_new();
	char path[512], cmd[1024];
	char *text;
	int status;

	(void)state;
	snprintf(path, sizeof(path), "%s/empty.pb.gz", ts_tmpdir);
	write_profile_file(p, path);
	snprintf(cmd, sizeof(cmd), PPROF_DECODE, path);
	text = ts_run(cmd, &status);
	assert_int_equal(status, 0);
	assert_null(strstr(text, "sample {"));
	free(text);
	profile_free(p);
}

/* A stream that notes the thread's CPU time at each write reaching it. */
struct timed_stream {
	uint64_t last_ns, max_gap_ns;
	size_t writes, bytes;
	FILE *copy; /* the bytes, for reading back */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void timed_note(struct timed_stream *t)
{
	uint64_t now = thread_cpu_ns();

	if (now - t->last_ns > t->max_gap_ns)
		t->max_gap_ns = now - t->last_ns;
	t->last_ns = now;
}

static ssize_t timed_write(void *cookie, const char *buf, size_t n)
{
	struct timed_stream *t = cookie;

	timed_note(t);
	t->writes++;
	t->bytes += n;
	return fwrite(buf, 1, n, t->copy) == n ? (ssize_t)n : -1;
}

/*
 * A large profile (more of every table than one piece holds) is written in
 * pieces: its output reaches the stream as the work goes, so that no stretch
 * of CPU between two writes is more than a small part of the whole (a paced
 * exporter pauses between writes; a message packed whole before its first
 * byte was one stretch of most of it), and what comes out reads back whole.
 */
static void test_written_in_pieces(void **state)
{
	enum { STACKS = 6000 };
	struct profile *p = profile_new(), *back = NULL;
	struct timed_stream t = {0};
	cookie_io_functions_t io = {.write = timed_write};
	char names[3][64], err[256] = "";
	struct frame fr[3];
	char *mem = NULL;
	size_t memlen = 0;
	uint64_t start, total;
	FILE *f;
	int i, k;

	(void)state;
	for (i = 0; i < STACKS; i++) {
		memset(fr, 0, sizeof(fr));
		for (k = 0; k < 3; k++) {
			snprintf(names[k], sizeof(names[k]), "function_%d_level_%d_of_a_long_name", i, k);
			fr[k].function = names[k];
			fr[k].module = "/usr/lib/x86_64-linux-gnu/libexample.so.1";
			fr[k].address = 0x7f0000001000ull + (uint64_t)i * 64 + (uint64_t)k * 16;
			fr[k].module_offset = 0x1000ull + (uint64_t)i * 64 + (uint64_t)k * 16;
			fr[k].symbolized = true;
		}
		assert_int_equal(profile_add_sample(p, 100 + (uint32_t)(i % 50), 0, "app", fr, 3, false,
						    1 + (uint64_t)(i % 7), 1000), 0);
	}
	t.copy = open_memstream(&mem, &memlen);
	assert_non_null(t.copy);
	f = fopencookie(&t, "w", io);
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	start = thread_cpu_ns();
	t.last_ns = start;
	assert_int_equal(pprof_write(p, f, err, sizeof(err)), 0);
	timed_note(&t); /* the stretch after the last write */
	total = thread_cpu_ns() - start;
	fclose(f);
	fclose(t.copy);
	printf("# %zu writes, %zu bytes, %.2f ms in all, at most %.2f ms between two\n", t.writes,
	       t.bytes, (double)total / 1e6, (double)t.max_gap_ns / 1e6);
	assert_true(t.writes >= 8);
	assert_true(t.max_gap_ns * 4 <= total);

	assert_int_equal(pprof_reader_load((const uint8_t *)mem, memlen, &back, err, sizeof(err)), 0);
	assert_int_equal(profile_stack_count(back), STACKS);
	assert_int_equal(profile_function_count(back), profile_function_count(p));
	assert_int_equal(profile_location_count(back), profile_location_count(p));
	profile_free(back);
	free(mem);
	profile_free(p);
}

/* p encoded by pprof_write into memory; *len its bytes. */
static char *encode(const struct profile *p, size_t *len)
{
	char err[256] = "";
	char *mem = NULL;
	FILE *ms = open_memstream(&mem, len);

	assert_non_null(ms);
	assert_int_equal(pprof_write(p, ms, err, sizeof(err)), 0);
	fclose(ms);
	return mem;
}

/* A stream that, at the first bytes reaching it, writes another profile:
 * a write started while one is paused halfway (the exporter's pacing). */
struct nesting_stream {
	const struct profile *inner;
	char *inner_mem;
	size_t inner_len;
	FILE *copy;
};

static ssize_t nesting_write(void *cookie, const char *buf, size_t n)
{
	struct nesting_stream *ns = cookie;

	if (ns->inner_mem == NULL)
		ns->inner_mem = encode(ns->inner, &ns->inner_len);
	return fwrite(buf, 1, n, ns->copy) == n ? (ssize_t)n : -1;
}

/*
 * The compressor is kept from one write to the next and reset for each:
 * writes after the first give the same bytes as the first, and a write
 * started while another is paused halfway gets a compressor of its own,
 * neither output mixed with the other.
 */
static void test_compressor_reused(void **state)
{
	struct profile *p = ts_known_profile(), *q = profile_new(), *back = NULL;
	cookie_io_functions_t io = {.write = nesting_write};
	struct nesting_stream ns = {0};
	size_t len1, len2, len_q, outer_len = 0;
	char *first, *second, *alone_q, *outer = NULL, err[256] = "";
	struct frame fr;
	FILE *f;

	(void)state;
	memset(&fr, 0, sizeof(fr));
	fr.function = "inner_only";
	fr.module = "/usr/bin/inner";
	fr.address = 0x401000;
	fr.module_offset = 0x1000;
	fr.symbolized = true;
	assert_int_equal(profile_add_sample(q, 7, 7, "inner", &fr, 1, false, 3, 1000), 0);

	first = encode(p, &len1);
	second = encode(p, &len2);
	assert_int_equal(len1, len2);
	assert_memory_equal(first, second, len1);
	alone_q = encode(q, &len_q);

	ns.inner = q;
	ns.copy = open_memstream(&outer, &outer_len);
	assert_non_null(ns.copy);
	f = fopencookie(&ns, "w", io);
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(pprof_write(p, f, err, sizeof(err)), 0);
	fclose(f);
	fclose(ns.copy);
	assert_non_null(ns.inner_mem);
	assert_int_equal(outer_len, len1);
	assert_memory_equal(outer, first, len1);
	assert_int_equal(ns.inner_len, len_q);
	assert_memory_equal(ns.inner_mem, alone_q, len_q);
	assert_int_equal(pprof_reader_load((const uint8_t *)ns.inner_mem, ns.inner_len, &back, err,
					   sizeof(err)), 0);
	assert_int_equal(profile_stack_count(back), 1);
	profile_free(back);

	/* And the kept one again after the nested write. */
	free(second);
	second = encode(p, &len2);
	assert_int_equal(len2, len1);
	assert_memory_equal(second, first, len1);
	free(first);
	free(second);
	free(alone_q);
	free(outer);
	free(ns.inner_mem);
	profile_free(q);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protoc_decode),
		cmocka_unit_test(test_go_pprof),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_written_in_pieces),
		cmocka_unit_test(test_compressor_reused),
	};

	return cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
}
