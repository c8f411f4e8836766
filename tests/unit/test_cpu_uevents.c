/* The kernel's CPU uevents (loader/cpu_uevents.h): the parser of one
 * message, and the socket filter that passes only CPUs going online and
 * offline, tried on a real socket. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "loader/cpu_uevents.h"

/* A uevent as the kernel sends it: header, then KEY=VALUE fields, each
 * NUL-terminated. Returns its length. */
static size_t uevent(char *buf, size_t cap, const char *action, const char *devpath,
		     const char *subsystem)
{
	int n = snprintf(buf, cap, "%s@%s%cACTION=%s%cDEVPATH=%s%cSUBSYSTEM=%s%cSEQNUM=4711%c",
			 action, devpath, 0, action, 0, devpath, 0, subsystem, 0, 0);

	assert_true(n > 0 && (size_t)n < cap);
	return (size_t)n;
}

static bool parse(const char *msg, size_t len, int *cpu, bool *online)
{
	*cpu = -1;
	return cpu_uevent_parse(msg, len, cpu, online);
}

static void test_online_and_offline(void **state)
{
	char b[512];
	bool online = false;
	int cpu;

	(void)state;
	assert_true(parse(b, uevent(b, sizeof(b), "online", "/devices/system/cpu/cpu3", "cpu"),
			  &cpu, &online));
	assert_int_equal(cpu, 3);
	assert_true(online);
	assert_true(parse(b, uevent(b, sizeof(b), "offline", "/devices/system/cpu/cpu0", "cpu"),
			  &cpu, &online));
	assert_int_equal(cpu, 0);
	assert_false(online);
	assert_true(parse(b, uevent(b, sizeof(b), "online", "/devices/system/cpu/cpu4095", "cpu"),
			  &cpu, &online));
	assert_int_equal(cpu, 4095);
}

static void test_other_devices_and_actions(void **state)
{
	char b[512];
	bool online;
	int cpu;

	(void)state;
	assert_false(parse(b, uevent(b, sizeof(b), "add", "/devices/system/cpu/cpu3", "cpu"),
			   &cpu, &online));
	assert_false(parse(b, uevent(b, sizeof(b), "change", "/devices/system/cpu/cpu3", "cpu"),
			   &cpu, &online));
	assert_false(parse(b, uevent(b, sizeof(b), "online", "/devices/system/memory/memory3",
				     "memory"), &cpu, &online));
	assert_false(parse(b, uevent(b, sizeof(b), "online", "/devices/system/cpu/cpufreq", "cpu"),
			   &cpu, &online));
	assert_false(parse(b, uevent(b, sizeof(b), "online", "/devices/system/cpu/cpu3", "memory"),
			   &cpu, &online));
	assert_int_equal(cpu, -1);
}

static void test_cpu_numbers(void **state)
{
	static const char *const bad[] = {"cpu", "cpu4096", "cpu99999999999999999999", "cpu03",
					  "cpu-1", "cpu3x", "cpu 3", "cpu+3"};
	char b[512], path[64];
	bool online;
	size_t i;
	int cpu;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "/devices/system/cpu/%s", bad[i]);
		assert_false(parse(b, uevent(b, sizeof(b), "online", path, "cpu"), &cpu, &online));
		assert_int_equal(cpu, -1);
	}
}

/* Malformed messages: each rejected, none read past its length. */
static void test_malformed(void **state)
{
	static const char dup_action[] = "online@/devices/system/cpu/cpu1\0ACTION=online\0"
					 "ACTION=online\0DEVPATH=/devices/system/cpu/cpu1\0SUBSYSTEM=cpu";
	static const char disagree_action[] = "online@/devices/system/cpu/cpu1\0ACTION=offline\0"
					      "DEVPATH=/devices/system/cpu/cpu1\0SUBSYSTEM=cpu";
	static const char disagree_path[] = "online@/devices/system/cpu/cpu1\0ACTION=online\0"
					    "DEVPATH=/devices/system/cpu/cpu2\0SUBSYSTEM=cpu";
	static const char no_subsystem[] = "online@/devices/system/cpu/cpu1\0ACTION=online\0"
					   "DEVPATH=/devices/system/cpu/cpu1";
	static const char no_at[] = "online/devices/system/cpu/cpu1\0ACTION=online\0"
				    "DEVPATH=/devices/system/cpu/cpu1\0SUBSYSTEM=cpu";
	char b[512];
	bool online;
	size_t len;
	int cpu;

	(void)state;
	/* The string literals above end with the NUL the kernel puts after each field. */
	assert_false(parse(dup_action, sizeof(dup_action), &cpu, &online));
	assert_false(parse(disagree_action, sizeof(disagree_action), &cpu, &online));
	assert_false(parse(disagree_path, sizeof(disagree_path), &cpu, &online));
	assert_false(parse(no_subsystem, sizeof(no_subsystem), &cpu, &online));
	assert_false(parse(no_at, sizeof(no_at), &cpu, &online));
	assert_false(parse("", 0, &cpu, &online));
	/* Cut anywhere: no NUL at the end, or keys missing. */
	len = uevent(b, sizeof(b), "online", "/devices/system/cpu/cpu1", "cpu");
	for (size_t cut = 0; cut < len - strlen("SEQNUM=4711") - 1; cut++)
		assert_false(parse(b, cut, &cpu, &online));
	/* The last byte not a NUL: rejected, even with everything before it right. */
	b[len - 1] = 'x';
	assert_false(parse(b, len, &cpu, &online));
	assert_int_equal(cpu, -1);
}

/* The filter on a datagram socketpair: only the CPU messages come through. */
static void test_filter(void **state)
{
	struct {
		const char *action, *devpath, *subsystem;
		bool passes;
	} msgs[] = {
		{"add", "/devices/virtual/net/veth0a1b2c3", "net", false},
		{"online", "/devices/system/cpu/cpu7", "cpu", true},
		{"remove", "/devices/system/cpu/cpu7", "cpu", false},
		{"online", "/devices/system/memory/memory12", "memory", false},
		{"offline", "/devices/system/cpu/cpu12", "cpu", true},
		{"offlin", "/devices/system/cpu/cpu1", "cpu", false},
		{"change", "/devices/system/cpu/cpu2", "cpu", false},
	};
	char b[512], got[512];
	int sv[2];
	size_t i, expect = 0;
	ssize_t n;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	assert_int_equal(cpu_uevents_filter(sv[1]), 0);
	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		size_t len = uevent(b, sizeof(b), msgs[i].action, msgs[i].devpath, msgs[i].subsystem);

		assert_int_equal(send(sv[0], b, len, 0), (ssize_t)len);
		expect += msgs[i].passes;
	}
	/* Short ones end inside the compared prefix: dropped, not read past. */
	assert_int_equal(send(sv[0], "online@", 7, 0), 7);
	assert_int_equal(send(sv[0], "o", 1, 0), 1);
	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		int cpu;
		bool online;

		if (!msgs[i].passes)
			continue;
		n = recv(sv[1], got, sizeof(got), MSG_DONTWAIT);
		assert_true(n > 0);
		assert_true(cpu_uevent_parse(got, (size_t)n, &cpu, &online));
		assert_string_equal(got + strlen(msgs[i].action) + 1, msgs[i].devpath);
		expect--;
	}
	assert_int_equal(expect, 0);
	n = recv(sv[1], got, sizeof(got), MSG_DONTWAIT);
	assert_int_equal(n, -1);
	assert_int_equal(errno, EAGAIN);
	close(sv[0]);
	close(sv[1]);
}

/* A CPU message from anyone but the kernel (here: another socket) is counted
 * and ignored by the reader. */
static void test_read_ignores_others(void **state)
{
	static struct cpu_uevent_changes ch;
	char b[512];
	int sv[2];
	size_t len;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv), 0);
	len = uevent(b, sizeof(b), "offline", "/devices/system/cpu/cpu1", "cpu");
	assert_int_equal(send(sv[0], b, len, 0), (ssize_t)len);
	assert_int_equal(cpu_uevents_read(sv[1], &ch), 0);
	assert_int_equal(ch.ignored, 1);
	assert_int_equal(ch.count, 0);
	assert_int_equal(ch.state[1], CPU_UEVENT_NONE);
	assert_false(ch.overflow);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_online_and_offline),
		cmocka_unit_test(test_other_devices_and_actions),
		cmocka_unit_test(test_cpu_numbers),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_read_ignores_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
