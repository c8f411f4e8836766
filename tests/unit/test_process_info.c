/* process_info: container id parsing on fixtures of every supported layout,
 * malformed input, and the cache over a fixture /proc tree (kept after the
 * "process" exits, bounded by max_entries, read again for another image of a pid). */
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

#include "exporter/otlp/process_info.h"
#include "test_support.h"

#define ID_A "3f4e0c7a9b2d18e6f5a4c3b2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2"
#define ID_B "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static bool parse(const char *text, char *out)
{
	return process_info_parse_container_id(text, strlen(text), out);
}

static void expect_id(const char *text, const char *want)
{
	char out[PROCESS_INFO_CONTAINER_ID_LEN + 1];

	assert_true(parse(text, out));
	assert_string_equal(out, want);
}

static void expect_none(const char *text)
{
	char out[PROCESS_INFO_CONTAINER_ID_LEN + 1];

	assert_false(parse(text, out));
}

static void test_layouts(void **state)
{
	(void)state;
	/* docker, systemd driver, cgroup v2 */
	expect_id("0::/system.slice/docker-" ID_A ".scope\n", ID_A);
	/* docker, cgroupfs driver, cgroup v1 */
	expect_id("12:memory:/docker/" ID_A "\n11:cpu,cpuacct:/docker/" ID_A "\n", ID_A);
	/* containerd under kubernetes, systemd driver */
	expect_id("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d.slice/cri-containerd-" ID_A ".scope\n", ID_A);
	/* kubernetes, cgroupfs driver */
	expect_id("0::/kubepods/besteffort/pod1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d/" ID_A "\n", ID_A);
	/* cri-o */
	expect_id("0::/kubepods.slice/kubepods-pod1.slice/crio-" ID_A ".scope\n", ID_A);
	/* podman, rootless, with a nested "container" cgroup */
	expect_id("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID_A ".scope/container\n", ID_A);
	/* uppercase hex is normalised */
	expect_id("0::/docker/3F4E0C7A9B2D18E6F5A4C3B2D1E0F9A8B7C6D5E4F3A2B1C0D9E8F7A6B5C4D3E2\n", ID_A);
	/* the v2 line wins over v1 lines, wherever it is */
	expect_id("5:pids:/docker/" ID_B "\n0::/system.slice/docker-" ID_A ".scope\n", ID_A);
	/* no trailing newline */
	expect_id("0::/docker/" ID_A, ID_A);
	/* deepest component wins (docker in docker) */
	expect_id("0::/docker/" ID_B "/docker/" ID_A "\n", ID_A);
}

static void test_not_containers(void **state)
{
	(void)state;
	expect_none("");
	expect_none("0::/\n");
	expect_none("0::/user.slice/user-1000.slice/session-3.scope\n");
	expect_none("0::/system.slice/ssh.service\n");
	/* conmon is the monitor, not the container */
	expect_none("0::/machine.slice/libpod-conmon-" ID_A ".scope\n");
	expect_none("0::/kubepods.slice/crio-conmon-" ID_A ".scope\n");
	/* 63 and 65 hex digits, a non-hex digit, a letter glued to the id */
	expect_none("0::/docker/" "3f4e0c7a9b2d18e6f5a4c3b2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e" "\n");
	expect_none("0::/docker/" ID_A "0\n");
	expect_none("0::/docker/" "3f4e0c7a9b2d18e6f5a4c3b2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3eg" "\n");
	expect_none("0::/docker/x" ID_A "\n");
}

static void test_malformed(void **state)
{
	char out[PROCESS_INFO_CONTAINER_ID_LEN + 1];
	char *big;
	size_t n = 1 << 20, i;

	(void)state;
	/* no colons, one colon, NUL bytes, a NULL pointer */
	expect_none("garbage\n");
	expect_none("0:/docker/" ID_A "\n");
	assert_false(process_info_parse_container_id("0::/docker/\0" ID_A, 12 + 64, out));
	assert_false(process_info_parse_container_id(NULL, 10, out));
	/* the id cut short by len */
	assert_false(process_info_parse_container_id("0::/docker/" ID_A, 11 + 40, out));
	/* a megabyte of slashes, colons and hex */
	big = malloc(n);
	assert_non_null(big);
	for (i = 0; i < n; i++)
		big[i] = "0:/a-f"[i % 6];
	assert_false(process_info_parse_container_id(big, n, out));
	free(big);
}

static void make_pid(uint32_t pid, const char *exe, const char *cgroup)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%u", ts_tmpdir, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	if (exe != NULL) {
		snprintf(path, sizeof(path), "%s/%u/exe", ts_tmpdir, pid);
		assert_int_equal(symlink(exe, path), 0);
	}
	if (cgroup != NULL) {
		snprintf(path, sizeof(path), "%s/%u/cgroup", ts_tmpdir, pid);
		ts_write_file(path, cgroup, strlen(cgroup));
	}
}

static void remove_pid(uint32_t pid)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/%u", ts_tmpdir, pid);
	assert_int_equal(system(cmd), 0);
}

static void test_cache(void **state)
{
	struct proc_source *src = proc_source_direct_new(ts_tmpdir, NULL, NULL);
	struct process_info_cache *c = process_info_new(src, 4);
	const struct process_info *pi;
	uint32_t pid;

	(void)state;
	assert_non_null(c);
	make_pid(100, "/usr/bin/app", "0::/system.slice/docker-" ID_A ".scope\n");
	make_pid(200, "/opt/old/worker (deleted)", "0::/user.slice\n");
	make_pid(300, NULL, NULL);

	pi = process_info_lookup(c, 100);
	assert_int_equal(pi->pid, 100);
	assert_string_equal(pi->exe_path, "/usr/bin/app");
	assert_string_equal(pi->exe_name, "app");
	assert_string_equal(pi->container_id, ID_A);

	pi = process_info_lookup(c, 200);
	assert_string_equal(pi->exe_path, "/opt/old/worker");
	assert_string_equal(pi->exe_name, "worker");
	assert_string_equal(pi->container_id, "");

	/* unreadable: known to be unknown */
	pi = process_info_lookup(c, 300);
	assert_string_equal(pi->exe_path, "");
	assert_string_equal(pi->exe_name, "");
	assert_string_equal(pi->container_id, "");

	/* the process exits: what was read is kept */
	remove_pid(100);
	pi = process_info_lookup(c, 100);
	assert_string_equal(pi->exe_name, "app");
	assert_string_equal(pi->container_id, ID_A);
	assert_true(process_info_peek(c, 100, &pi));
	assert_false(process_info_peek(c, 999, &pi));

	/* bounded: past 4 entries the oldest is forgotten */
	for (pid = 1000; pid < 1010; pid++)
		process_info_lookup(c, pid);
	assert_int_equal(process_info_count(c), 4);
	assert_false(process_info_peek(c, 100, &pi));
	assert_false(process_info_peek(c, 1005, &pi));
	assert_true(process_info_peek(c, 1006, &pi));
	assert_true(process_info_peek(c, 1009, &pi));
	/* an evicted pid is read again, from what /proc now says */
	pi = process_info_lookup(c, 100);
	assert_string_equal(pi->exe_path, "");
	process_info_free(c);
	proc_source_free(src);
}

/* A process sampled before its exec (a wrapper such as nice, a shell's
 * child) and after, and a reused pid: a sample with another image_id reads
 * it again; the same one reads nothing. */
static void test_image_changes(void **state)
{
	struct proc_source *src = proc_source_direct_new(ts_tmpdir, NULL, NULL);
	struct process_info_cache *c = process_info_new(src, 4);
	const struct process_info *pi;

	(void)state;
	assert_non_null(c);
	make_pid(400, "/usr/bin/nice", "0::/user.slice\n");
	pi = process_info_observe(c, 400, 0x1234);
	assert_string_equal(pi->exe_path, "/usr/bin/nice");
	/* nice execs the program it runs */
	remove_pid(400);
	make_pid(400, "/opt/app/newcomer", "0::/system.slice/docker-" ID_B ".scope\n");
	pi = process_info_observe(c, 400, 0x1234);
	assert_string_equal(pi->exe_path, "/usr/bin/nice"); /* same image: not read */
	pi = process_info_observe(c, 400, 0x8001);
	assert_string_equal(pi->exe_path, "/opt/app/newcomer");
	assert_string_equal(pi->exe_name, "newcomer");
	assert_string_equal(pi->container_id, ID_B);
	assert_int_equal(process_info_count(c), 1);
	/* the encoder's lookup reads nothing */
	remove_pid(400);
	make_pid(400, "/usr/bin/nice", NULL);
	pi = process_info_lookup(c, 400);
	assert_string_equal(pi->exe_path, "/opt/app/newcomer");
	/* the pid is another process's now: whatever its image_id, it is read */
	pi = process_info_observe(c, 400, 0x0007);
	assert_string_equal(pi->exe_path, "/usr/bin/nice");
	assert_string_equal(pi->container_id, "");

	/* an entry the encoder read first takes the next sample's image_id as is */
	make_pid(500, "/usr/bin/env", NULL);
	pi = process_info_lookup(c, 500);
	remove_pid(500);
	make_pid(500, "/usr/bin/python3", NULL);
	pi = process_info_observe(c, 500, 0xffff);
	assert_string_equal(pi->exe_path, "/usr/bin/env");
	pi = process_info_observe(c, 500, 0);
	assert_string_equal(pi->exe_path, "/usr/bin/python3");
	assert_int_equal(process_info_count(c), 2);

	/* re-reads stay within the bound: a pid whose image changes at every sample */
	remove_pid(500);
	make_pid(500, "/usr/bin/true", NULL);
	for (unsigned i = 1; i <= 20; i++)
		(void)process_info_observe(c, 500, (uint16_t)i);
	assert_true(process_info_count(c) <= 4);
	assert_true(process_info_peek(c, 500, &pi));
	assert_string_equal(pi->exe_path, "/usr/bin/true");
	process_info_free(c);
	proc_source_free(src);
	remove_pid(400);
	remove_pid(500);
}

static void test_self(void **state)
{
	struct proc_source *src = proc_source_direct_new("/proc", NULL, NULL);
	struct process_info_cache *c = process_info_new(src, 0);
	const struct process_info *pi;

	(void)state;
	assert_non_null(c);
	pi = process_info_lookup(c, (uint32_t)getpid());
	assert_string_equal(pi->exe_name, "test_process_info");
	assert_true(pi->exe_path[0] == '/');
	process_info_free(c);
	proc_source_free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_not_containers),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_image_changes),
		cmocka_unit_test(test_self),
	};

	return cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
}
