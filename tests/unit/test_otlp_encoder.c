/* OTLP encoder: encode a model with known stacks, decode it with protoc
 * against the official schema, and check the dictionary's zero elements,
 * names, build id, resource attributes, values and every index's range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "exporter/otlp/otlp_encoder.h"
#include "exporter/otlp/process_info.h"
#include "exporter/profile/profile.h"
#include "test_support.h"

#define CHECKER LOWPROF_SOURCE_DIR "/tests/otlp/check_request.py"
#define CID "3f4e0c7a9b2d18e6f5a4c3b2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2"
#define CGROUP "0::/system.slice/docker-" CID ".scope\n"

/* The known profile plus a process whose comm and function name are invalid UTF-8. */
static struct profile *make_profile(void)
{
	struct profile *p = ts_known_profile();
	struct frame s4[] = { ts_pie_frame("bad\xff\xfename", "/usr/bin/app", 0x5000) };

	assert_int_equal(profile_add_sample(p, 300, 300, "x\xc3", s4, 1, false, 1, TS_PERIOD_NS), 0);
	return p;
}

static void fake_proc(void)
{
	char path[512];

	snprintf(path, sizeof(path), "mkdir -p %s/proc/100 %s/proc/200", ts_tmpdir, ts_tmpdir);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/proc/100/exe", ts_tmpdir);
	assert_int_equal(symlink("/usr/bin/app", path), 0);
	snprintf(path, sizeof(path), "%s/proc/100/cgroup", ts_tmpdir);
	ts_write_file(path, CGROUP, strlen(CGROUP));
}

static uint8_t *encode(struct profile *p, struct process_info_cache *procs, size_t *len)
{
	struct otlp_encoder_meta meta;
	char host[OTLP_ENCODER_HOST_NAME_MAX];
	char err[256] = "";
	uint8_t *buf = NULL;

	otlp_encoder_meta_defaults(&meta, host);
	meta.host_name = "test-host";
	meta.frequency_hz = 19;
	meta.tier = "high";
	meta.procs = procs;
	assert_int_equal(otlp_encoder_encode(p, &meta, &buf, len, err, sizeof(err)), 0);
	assert_non_null(buf);
	return buf;
}

static void test_decode(void **state)
{
	struct profile *p = make_profile();
	char procdir[512], path[512], cmd[2048];
	struct process_info_cache *procs;
	struct proc_source *procsrc;
	uint8_t *buf;
	size_t len;
	char *text;
	int status;

	(void)state;
	fake_proc();
	snprintf(procdir, sizeof(procdir), "%s/proc", ts_tmpdir);
	procsrc = proc_source_direct_new(procdir, NULL, NULL);
	procs = process_info_new(procsrc, 0);
	assert_non_null(procs);
	buf = encode(p, procs, &len);
	snprintf(path, sizeof(path), "%s/req.pb", ts_tmpdir);
	ts_write_file(path, buf, len);
	free(buf);

	snprintf(cmd, sizeof(cmd), TS_OTLP_DECODE " < %s", path);
	text = ts_run(cmd, &status);
	assert_int_equal(status, 0);
	/* names, build id, resource and sample attributes, types, time */
	assert_non_null(strstr(text, "string_table: \"write_leaf\""));
	assert_non_null(strstr(text, "string_table: \"compute_leaf\""));
	assert_non_null(strstr(text, "string_table: \"do_sys_write\""));
	assert_non_null(strstr(text, "string_table: \"[truncated]\""));
	assert_non_null(strstr(text, "string_table: \"/usr/lib/libc.so.6\""));
	assert_non_null(strstr(text, "string_table: \"process.executable.build_id.gnu\""));
	assert_non_null(strstr(text, "string_value: \"0123abcd\""));
	assert_non_null(strstr(text, "key: \"host.name\"\n      value {\n        string_value: \"test-host\""));
	assert_non_null(strstr(text, "key: \"os.type\"\n      value {\n        string_value: \"linux\""));
	assert_non_null(strstr(text, "key: \"host.arch\""));
	assert_non_null(strstr(text, "name: \"lowprof\""));
	assert_non_null(strstr(text, "string_value: \"/usr/bin/app\""));
	assert_non_null(strstr(text, "string_value: \"" CID "\""));
	assert_non_null(strstr(text, "string_value: \"worker\""));
	assert_non_null(strstr(text, "string_value: \"high\""));
	assert_non_null(strstr(text, "string_table: \"Hz\""));
	assert_non_null(strstr(text, "time_unix_nano: 1700000000000000000"));
	assert_non_null(strstr(text, "duration_nano: 10000000000"));
	assert_non_null(strstr(text, "period: 52631578"));
	/* invalid UTF-8 repaired, never passed on */
	assert_non_null(strstr(text, "string_table: \"bad\\357\\277\\275\\357\\277\\275name\""));
	free(text);

	/* Structural checks over the decoded text: zero elements, index ranges,
	 * dedup, per-function totals. */
	snprintf(cmd, sizeof(cmd), TS_OTLP_DECODE " < %s | python3 " CHECKER, path);
	text = ts_run(cmd, &status);
	printf("%s", text);
	assert_int_equal(status, 0);
	assert_non_null(strstr(text, "samples 5 stacks 5\n"));
	assert_non_null(strstr(text, "count do_sys_write 7\n"));
	assert_non_null(strstr(text, "count compute_leaf 14\n"));
	assert_non_null(strstr(text, "count deep_leaf 3\n"));
	assert_non_null(strstr(text, "nanoseconds compute_leaf 736842092\n"));
	assert_non_null(strstr(text, "total count 25\n"));
	free(text);
	process_info_free(procs);
	proc_source_free(procsrc);
	profile_free(p);
}

/* An off-CPU model: one Profile, sample type off_cpu/nanoseconds, values the
 * blocked time, period 0, the probability as a profile attribute; decoded
 * against the official schema and checked like the on-CPU one. */
static void test_decode_offcpu(void **state)
{
	struct profile *p = profile_new();
	struct frame s1[] = { ts_kernel_frame("__schedule", 0xffffffff81200000ULL),
			      ts_pie_frame("read_wait", "/usr/bin/app", 0x1000),
			      ts_pie_frame("main", "/usr/bin/app", 0x2000) };
	struct frame s2[] = { ts_kernel_frame("__schedule", 0xffffffff81200000ULL),
			      ts_pie_frame("lock_wait", "/usr/bin/app", 0x3000) };
	struct otlp_encoder_meta meta;
	char host[OTLP_ENCODER_HOST_NAME_MAX], err[256] = "", path[512], cmd[2048];
	uint8_t *buf = NULL;
	size_t len;
	char *text;
	int status;

	(void)state;
	assert_non_null(p);
	/* count: microseconds, cpu_ns: the weighted blocked time (as ingest adds them) */
	assert_int_equal(profile_add_sample(p, 100, 101, "app", s1, 3, false, 2500, 2500000000ULL), 0);
	assert_int_equal(profile_add_sample(p, 100, 102, "app", s2, 2, false, 40, 40000000ULL), 0);
	profile_set_time(p, 1700000000000000000ULL, 1700000010000000000ULL);
	otlp_encoder_meta_defaults(&meta, host);
	meta.host_name = "test-host";
	meta.frequency_hz = 19;
	meta.off_cpu = true;
	meta.offcpu_prob_ppm = 62500;
	assert_int_equal(otlp_encoder_encode(p, &meta, &buf, &len, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/offcpu.pb", ts_tmpdir);
	ts_write_file(path, buf, len);
	free(buf);
	snprintf(cmd, sizeof(cmd), TS_OTLP_DECODE " < %s", path);
	text = ts_run(cmd, &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(text, "string_table: \"off_cpu\""));
	assert_non_null(strstr(text, "string_table: \"lowprof.offcpu.probability\""));
	assert_non_null(strstr(text, "string_table: \"ppm\""));
	assert_non_null(strstr(text, "int_value: 62500"));
	/* One profile: no samples/count type, no period. */
	assert_null(strstr(text, "string_table: \"samples\""));
	assert_null(strstr(text, "period: "));
	free(text);
	snprintf(cmd, sizeof(cmd), TS_OTLP_DECODE " < %s | python3 " CHECKER, path);
	text = ts_run(cmd, &status);
	printf("%s", text);
	assert_int_equal(status, 0);
	assert_non_null(strstr(text, "samples 2 stacks 3\n")); /* with the zero element */
	/* Leaf first: both stacks end in __schedule; the values are nanoseconds. */
	assert_non_null(strstr(text, "total nanoseconds 2540000000\n"));
	assert_null(strstr(text, "total count"));
	free(text);
	profile_free(p);
}

static void test_empty(void **state)
{
	struct profile *p = profile_new();
	char path[512], cmd[2048];
	uint8_t *buf;
	size_t len;
	char *text;
	int status;

	(void)state;
	buf = encode(p, NULL, &len);
	snprintf(path, sizeof(path), "%s/empty.pb", ts_tmpdir);
	ts_write_file(path, buf, len);
	free(buf);
	snprintf(cmd, sizeof(cmd), TS_OTLP_DECODE " < %s | python3 " CHECKER, path);
	text = ts_run(cmd, &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(text, "samples 0 stacks 1\n"));
	free(text);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_offcpu),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
}
