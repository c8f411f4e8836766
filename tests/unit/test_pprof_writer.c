/* pprof encoder: write a known profile, decode it with protoc against the
 * official schema, and read it with `go tool pprof -top` when go is present. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "exporter/pprof_writer.h"
#include "exporter/profile.h"

#define PPROF_PROTO_DIR "/work/shared/reference/proto/pprof"

static char tmpdir[] = "/tmp/test_pprof_XXXXXX";

static struct frame uf(const char *fn, const char *mod, uint64_t off)
{
	struct frame f = {
		.function = fn, .module = mod, .build_id = "0123abcd",
		.address = 0x555500000000ULL + off, .module_offset = off,
		.map_start = 0x555500000000ULL, .map_end = 0x555500100000ULL,
		.map_file_offset = 0, .symbolized = true,
	};
	return f;
}

static struct frame kf(const char *fn, uint64_t addr)
{
	struct frame f = { .function = fn, .module = "[kernel.kallsyms]", .address = addr,
			   .kernel = true, .symbolized = true };
	return f;
}

static struct profile *make_profile(void)
{
	struct profile *p = profile_new();
	struct frame s1[] = { kf("do_sys_write", 0xffffffff81100000ULL),
			      uf("write_leaf", "/usr/lib/libc.so.6", 0x1000),
			      uf("main", "/usr/bin/app", 0x2000) };
	struct frame s2[] = { uf("compute_leaf", "/usr/bin/app", 0x3000),
			      uf("main", "/usr/bin/app", 0x2000) };
	struct frame s3[] = { uf("deep_leaf", "/usr/bin/app", 0x4000) };

	assert_non_null(p);
	assert_int_equal(profile_add_sample(p, 100, 101, "app", s1, 3, false, 7, 7 * 52631578ULL), 0);
	assert_int_equal(profile_add_sample(p, 100, 101, "app", s2, 2, false, 11, 11 * 52631578ULL), 0);
	assert_int_equal(profile_add_sample(p, 200, 201, "worker", s2, 2, false, 2, 2 * 52631578ULL), 0);
	assert_int_equal(profile_add_sample(p, 200, 202, "worker", s2, 2, false, 1, 52631578ULL), 0);
	assert_int_equal(profile_add_sample(p, 200, 203, "worker", s3, 1, true, 3, 3 * 52631578ULL), 0);
	profile_set_time(p, 1700000000000000000ULL, 1700000010000000000ULL);
	return p;
}

/* Runs cmd, returns its stdout (caller frees), and its exit status in *status. */
static char *run(const char *cmd, int *status)
{
	FILE *f = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, n;
	char chunk[4096];

	assert_non_null(f);
	for (;;) {
		n = fread(chunk, 1, sizeof(chunk), f);
		if (n == 0)
			break;
		buf = realloc(buf, len + n + 1);
		assert_non_null(buf);
		memcpy(buf + len, chunk, n);
		len += n;
	}
	if (buf == NULL)
		buf = calloc(1, 1);
	buf[len] = '\0';
	*status = pclose(f);
	return buf;
}

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
	FILE *f;

	/* Encode into a memory stream (what the exporter's writers see), then save. */
	assert_non_null(ms);
	assert_int_equal(pprof_write(p, ms, err, sizeof(err)), 0);
	fclose(ms);
	assert_true(memlen > 18);
	assert_int_equal((unsigned char)mem[0], 0x1f); /* gzip magic */
	assert_int_equal((unsigned char)mem[1], 0x8b);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(mem, 1, memlen, f), memlen);
	fclose(f);
	free(mem);
}

static void test_protoc_decode(void **state)
{
	struct profile *p = make_profile();
	char path[512], cmd[1024];
	char *text;
	int status;

	(void)state;
	snprintf(path, sizeof(path), "%s/profile.pb.gz", tmpdir);
	write_profile_file(p, path);
	snprintf(cmd, sizeof(cmd),
		 "gzip -dc %s | protoc --decode perftools.profiles.Profile -I %s profile.proto",
		 path, PPROF_PROTO_DIR);
	text = run(cmd, &status);
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
	/* Mappings: libc, app, kernel. */
	assert_int_equal(count_substr(text, "\nmapping {"), 3);
	assert_non_null(strstr(text, "memory_start: 93823560581120")); /* 0x555500000000 */
	free(text);

	/* The truncated stack: leaf first, the [truncated] location last. */
	snprintf(cmd, sizeof(cmd),
		 "gzip -dc %s | protoc --decode perftools.profiles.Profile -I %s profile.proto"
		 " | grep -c 'location_id'", path, PPROF_PROTO_DIR);
	text = run(cmd, &status);
	assert_int_equal(atoi(text), 3 + 2 + 2 + 2); /* 3 + 2 + 2 + (1 + [truncated]) */
	free(text);
	profile_free(p);
}

static void test_go_pprof(void **state)
{
	struct profile *p = make_profile();
	char path[512], cmd[1024];
	char *text;
	int status;

	(void)state;
	if (system("command -v go >/dev/null 2>&1") != 0) {
		printf("# skipped go tool pprof check: go is not installed\n");
		profile_free(p);
		return;
	}
	snprintf(path, sizeof(path), "%s/go.pb.gz", tmpdir);
	write_profile_file(p, path);
	snprintf(cmd, sizeof(cmd),
		 "HOME=%s GOCACHE=%s/gocache PPROF_TMPDIR=%s go tool pprof -top %s 2>&1",
		 tmpdir, tmpdir, tmpdir, path);
	text = run(cmd, &status);
	printf("%s", text);
	assert_int_equal(status, 0);
	assert_non_null(strstr(text, "compute_leaf"));
	assert_non_null(strstr(text, "write_leaf"));
	assert_non_null(strstr(text, "deep_leaf"));
	assert_non_null(strstr(text, "Type: cpu"));
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
	snprintf(path, sizeof(path), "%s/empty.pb.gz", tmpdir);
	write_profile_file(p, path);
	snprintf(cmd, sizeof(cmd),
		 "gzip -dc %s | protoc --decode perftools.profiles.Profile -I %s profile.proto",
		 path, PPROF_PROTO_DIR);
	text = run(cmd, &status);
	assert_int_equal(status, 0);
	assert_null(strstr(text, "sample {"));
	free(text);
	profile_free(p);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protoc_decode),
		cmocka_unit_test(test_go_pprof),
		cmocka_unit_test(test_empty_profile),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
