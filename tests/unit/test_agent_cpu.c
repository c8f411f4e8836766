/* agent_cpu: /proc/PID/stat parsing, and a real read of this process tree. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "measure/agent_cpu.h"

static void test_parse_plain(void **state)
{
	static const char line[] =
		"1234 (lowprof-loader) S 1200 1234 1200 0 -1 4194560 300 0 0 0 "
		"17 5 3 2 20 0 1 0 100 1000 200";
	struct agent_cpu_stat st;

	(void)state;
	assert_int_equal(agent_cpu_parse_stat(line, strlen(line), &st), 0);
	assert_int_equal(st.ppid, 1200);
	assert_int_equal(st.utime, 17);
	assert_int_equal(st.stime, 5);
	assert_int_equal(st.cutime, 3);
	assert_int_equal(st.cstime, 2);
}

static void test_parse_hostile_comm(void **state)
{
	/* A command name with spaces and parentheses cannot shift the fields. */
	static const char line[] =
		"77 (a) b (c) d) R 1 77 77 0 -1 0 0 0 0 0 9 8 7 6 20 0 1 0 1 1 1";
	struct agent_cpu_stat st;

	(void)state;
	assert_int_equal(agent_cpu_parse_stat(line, strlen(line), &st), 0);
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.utime, 9);
	assert_int_equal(st.cstime, 6);
}

static void test_parse_refuses(void **state)
{
	static const char *const bad[] = {
		"",
		"12 no-parens S 1 2 3",
		"12 (x) S 1 2 3 4",               /* too few fields */
		"12 (x) S one 2 3 4 5 6 7 8 9 10 11 12 13 14",
		"12 (x)S 1 2 3 4 5 6 7 8 9 10 11 12 13 14",
	};
	struct agent_cpu_stat st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(agent_cpu_parse_stat(bad[i], strlen(bad[i]), &st), -EINVAL);
}

static void test_read_counts_children(void **state)
{
	uint64_t before, after;
	struct timespec t1;
	int status, done[2];
	char byte;
	pid_t kid;

	(void)state;
	assert_int_equal(agent_cpu_read("/proc", getpid(), &before), 0);
	assert_int_equal(pipe(done), 0);
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		/* Burn 300 ms of CPU time (not wall time: the host may be busy), say so,
		 * then stay alive a moment to be counted live. */
		volatile uint64_t x = 0;

		do {
			for (int i = 0; i < 100000; i++)
				x += (uint64_t)i;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
		} while (t1.tv_sec * 1000 + t1.tv_nsec / 1000000 < 300);
		if (write(done[1], "x", 1) != 1)
			_exit(1);
		sleep(1);
		_exit(0);
	}
	close(done[1]);
	assert_int_equal(read(done[0], &byte, 1), 1);
	close(done[0]);
	assert_int_equal(agent_cpu_read("/proc", getpid(), &after), 0);
	/* The live child's ~300 ms show up (clock ticks: 10 ms resolution). */
	assert_true(after - before >= 200000000ULL);
	assert_int_equal(waitpid(kid, &status, 0), kid);
	/* Reaped: now in our cutime, still counted. */
	assert_int_equal(agent_cpu_read("/proc", getpid(), &after), 0);
	assert_true(after - before >= 200000000ULL);
	assert_int_equal(agent_cpu_read("/proc", 0x7ffffff0, &after), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_plain),
		cmocka_unit_test(test_parse_hostile_comm),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_read_counts_children),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
