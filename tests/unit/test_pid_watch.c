/* pid_watch: real processes held by pidfds, named by pid and start time. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/pid_watch.h"
#include "common/proc_stat.h"

static pid_t sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static unsigned long long start_of(pid_t pid)
{
	unsigned long long start = 0;

	assert_int_equal(proc_stat_field(pid, PROC_STAT_STARTTIME, &start), 0);
	return start;
}

/* A held process is said once, when it exits (not reaped yet: a zombie has
 * exited), and its exit makes the watch's fd readable. */
static void test_exit_said_once(void **state)
{
	struct pollfd p = {.events = POLLIN};
	struct pid_watch w;
	size_t out[2];
	pid_t a = sleeper(), b = sleeper();

	(void)state;
	assert_int_equal(pid_watch_init(&w, 2), 0);
	pid_watch_add(&w, a, start_of(a));
	pid_watch_add(&w, b, start_of(b));
	assert_int_equal(pid_watch_exited(&w, out), 0);
	assert_int_equal(w.live, 2);
	p.fd = pid_watch_fd(&w);
	assert_true(p.fd >= 0);
	assert_int_equal(poll(&p, 1, 0), 0);

	kill(b, SIGKILL);
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(pid_watch_exited(&w, out), 1);
	assert_int_equal(out[0], 1);
	assert_int_equal(w.live, 1);
	assert_int_equal(pid_watch_exited(&w, out), 0);
	waitpid(b, NULL, 0);
	assert_int_equal(pid_watch_exited(&w, out), 0);

	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	assert_int_equal(pid_watch_exited(&w, out), 1);
	assert_int_equal(out[0], 0);
	assert_int_equal(w.live, 0);
	assert_int_equal(pid_watch_fd(&w), -1);
	pid_watch_close(&w);
}

/* The pid of a process that started at another time names another process:
 * exited from the start, as is a pid no process has. start 0: the pid alone. */
static void test_start_time_names_the_process(void **state)
{
	struct pid_watch w;
	size_t out[4];
	pid_t a = sleeper(), gone = sleeper();

	(void)state;
	kill(gone, SIGKILL);
	waitpid(gone, NULL, 0);
	assert_int_equal(pid_watch_init(&w, 4), 0);
	pid_watch_add(&w, a, start_of(a) + 1);
	pid_watch_add(&w, a, start_of(a));
	pid_watch_add(&w, a, 0);
	pid_watch_add(&w, gone, 0);
	assert_int_equal(pid_watch_exited(&w, out), 2);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 3);
	assert_int_equal(w.live, 2);
	assert_int_equal(pid_watch_exited(&w, out), 0);
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	assert_int_equal(pid_watch_exited(&w, out), 2);
	assert_int_equal(w.live, 0);
	pid_watch_close(&w);
}

/* Past its room a pid is not held (nor counted); none: no fd to poll. */
static void test_bounds(void **state)
{
	struct pid_watch w;
	size_t out[1];

	(void)state;
	assert_int_equal(pid_watch_init(&w, 1), 0);
	pid_watch_add(&w, getpid(), start_of(getpid()));
	pid_watch_add(&w, getppid(), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.live, 1);
	assert_int_equal(pid_watch_exited(&w, out), 0);
	pid_watch_close(&w);
	assert_int_equal(pid_watch_init(&w, 0), 0);
	assert_int_equal(pid_watch_fd(&w), -1);
	assert_int_equal(pid_watch_exited(&w, out), 0);
	pid_watch_close(&w);
}

/* -p takes up to 1024 pids, the usual soft limit on open files: each is
 * held by a pidfd all the same (the limit raised toward the hard one), not
 * kept by number with its exit never seen. */
static void test_room_for_every_pidfd(void **state)
{
	struct rlimit r, low;
	struct pid_watch w;
	size_t i, held = 0, out[100];

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &r), 0);
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max < 200)
		skip();
	low = r;
	low.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	assert_int_equal(pid_watch_init(&w, 100), 0);
	for (i = 0; i < 100; i++)
		pid_watch_add(&w, getpid(), start_of(getpid()));
	for (i = 0; i < w.n; i++)
		held += w.pidfd[i] >= 0;
	assert_int_equal(held, 100);
	assert_int_equal(pid_watch_exited(&w, out), 0);
	pid_watch_close(&w);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_said_once),
		cmocka_unit_test(test_start_time_names_the_process),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_room_for_every_pidfd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
