/* Helpers shared by the exporter's unit tests: see test_support.h. */
#define _GNU_SOURCE /* program_invocation_short_name */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "exporter/formats/folded_writer.h"
#include "exporter/profile/profile.h"
#include "test_support.h"

char ts_tmpdir[TS_TMPDIR_MAX];

int ts_tmpdir_setup(void **state)
{
	int n = snprintf(ts_tmpdir, sizeof(ts_tmpdir), "/tmp/%s_XXXXXX",
			 program_invocation_short_name);

	(void)state;
	if (n < 0 || (size_t)n >= sizeof(ts_tmpdir))
		return -1;
	return mkdtemp(ts_tmpdir) == NULL ? -1 : 0;
}

int ts_tmpdir_teardown(void **state)
{
	char cmd[TS_TMPDIR_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", ts_tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

const char *ts_reference_proto_dir(void)
{
	const char *dir = getenv("LOWPROF_REFERENCE_PROTO_DIR");
	const char *require = getenv("LOWPROF_REQUIRE_REFERENCE");
	struct stat st;

	if (dir == NULL || dir[0] == '\0')
		dir = LOWPROF_REFERENCE_PROTO_DIR;
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		assert_int_equal(setenv("LOWPROF_REFERENCE_PROTO_DIR", dir, 1), 0);
		return dir;
	}
	/* The schemas live outside the repository: a checkout without them
	 * can still run every other check. */
	if (require != NULL && strcmp(require, "1") == 0)
		fail_msg("reference schemas required (LOWPROF_REQUIRE_REFERENCE=1) but %s is "
			 "not a directory: set LOWPROF_REFERENCE_PROTO_DIR", dir);
	printf("# SKIP: reference schemas not found at %s (set LOWPROF_REFERENCE_PROTO_DIR "
	       "in the environment or as a CMake cache variable)\n", dir);
	skip();
	return NULL;
}

char *ts_run(const char *cmd, int *status)
{
	FILE *f;
	char *buf = NULL;
	size_t len = 0, n;
	char chunk[4096];

	if (strstr(cmd, "$LOWPROF_REFERENCE_PROTO_DIR") != NULL)
		ts_reference_proto_dir();
	f = popen(cmd, "r");
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

void ts_write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

struct frame ts_user_frame(const char *function, const char *module, uint64_t off)
{
	struct frame f = { .function = function, .module = module, .address = 0x400000 + off,
			   .module_offset = off, .map_start = 0x400000, .map_end = 0x500000,
			   .symbolized = true };
	return f;
}

struct frame ts_pie_frame(const char *function, const char *module, uint64_t off)
{
	struct frame f = {
		.function = function, .module = module, .build_id = "0123abcd",
		.address = 0x555500000000ULL + off, .module_offset = off,
		.map_start = 0x555500000000ULL, .map_end = 0x555500100000ULL,
		.map_file_offset = 0, .symbolized = true,
	};
	return f;
}

struct frame ts_kernel_frame(const char *function, uint64_t addr)
{
	struct frame f = { .function = function, .module = "[kernel.kallsyms]", .address = addr,
			   .kernel = true, .symbolized = true };
	return f;
}

struct profile *ts_known_profile(void)
{
	struct profile *p = profile_new();
	struct frame s1[] = { ts_kernel_frame("do_sys_write", 0xffffffff81100000ULL),
			      ts_pie_frame("write_leaf", "/usr/lib/libc.so.6", 0x1000),
			      ts_pie_frame("main", "/usr/bin/app", 0x2000) };
	struct frame s2[] = { ts_pie_frame("compute_leaf", "/usr/bin/app", 0x3000),
			      ts_pie_frame("main", "/usr/bin/app", 0x2000) };
	struct frame s3[] = { ts_pie_frame("deep_leaf", "/usr/bin/app", 0x4000) };

	assert_non_null(p);
	assert_int_equal(profile_add_sample(p, 100, 101, "app", s1, 3, false, 7, 7 * TS_PERIOD_NS), 0);
	assert_int_equal(profile_add_sample(p, 100, 101, "app", s2, 2, false, 11, 11 * TS_PERIOD_NS), 0);
	assert_int_equal(profile_add_sample(p, 200, 201, "worker", s2, 2, false, 2, 2 * TS_PERIOD_NS), 0);
	assert_int_equal(profile_add_sample(p, 200, 202, "worker", s2, 2, false, 1, TS_PERIOD_NS), 0);
	assert_int_equal(profile_add_sample(p, 200, 203, "worker", s3, 1, true, 3, 3 * TS_PERIOD_NS), 0);
	profile_set_time(p, 1700000000000000000ULL, 1700000010000000000ULL);
	return p;
}

char *ts_folded_text(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&buf, &len);

	assert_non_null(ms);
	assert_int_equal(folded_write(p, ms), 0);
	fclose(ms);
	return buf;
}
