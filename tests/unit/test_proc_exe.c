/*
 * proc_exe_is, which the loader's monitor uses to check that a sender runs
 * lowprof-controller or lowprof-exporter, and bpf_pins that a pin directory's
 * pid runs lowprof: on a real process running a copy of sleep(1) named like
 * a component, before and after the file is replaced on disk (a package
 * upgrade while lowprof runs: /proc/PID/exe then reads "NAME (deleted)",
 * and the component that was started must still be recognised).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/proc_stat.h"

/* A copy of sleep at dir/name, started; its pid. */
static pid_t start_copy(const char *dir, const char *name, char *path, size_t len)
{
	struct stat st;
	int in, out;
	pid_t pid;

	snprintf(path, len, "%s/%s", dir, name);
	in = open("/bin/sleep", O_RDONLY | O_CLOEXEC);
	assert_true(in >= 0);
	assert_int_equal(fstat(in, &st), 0);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(out >= 0);
	assert_int_equal(sendfile(out, in, NULL, (size_t)st.st_size), st.st_size);
	close(in);
	close(out);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(path, name, "30", (char *)NULL);
		_exit(127);
	}
	/* Until the exec is done: exe names the copy. */
	for (int i = 0; i < 500; i++) {
		char exe[256];
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (strstr(exe, name) != NULL)
				return pid;
		}
		usleep(2000);
	}
	fail_msg("%s did not start", path);
	return -1;
}

static void stop(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static void test_component_names(void **state)
{
	char dir[] = "/tmp/lowprof-proc-exe.XXXXXX", path[256], exe[512];
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	pid = start_copy(dir, "lowprof-controller", path, sizeof(path));
	assert_true(proc_exe_is(pid, "lowprof-controller", exe, sizeof(exe)));
	assert_false(proc_exe_is(pid, "lowprof-exporter", exe, sizeof(exe)));
	assert_false(proc_exe_is(pid, "lowprof-control", exe, sizeof(exe)));
	assert_false(proc_exe_is(pid, "sleep", exe, sizeof(exe)));

	/* Replaced on disk (removed here, as an upgrade's rename does to the
	 * old inode): exe is "... (deleted)", still lowprof-controller. */
	assert_int_equal(unlink(path), 0);
	assert_true(proc_exe_is(pid, "lowprof-controller", exe, sizeof(exe)));
	assert_non_null(strstr(exe, " (deleted)"));
	assert_false(proc_exe_is(pid, "lowprof-controller (deleted)", exe, sizeof(exe)));
	assert_false(proc_exe_is(pid, "lowprof-control", exe, sizeof(exe)));
	assert_false(proc_exe_is(pid, "lowprof-controller (", exe, sizeof(exe)));
	stop(pid);

	/* Gone: no program at all, and why. */
	assert_false(proc_exe_is(pid, "lowprof-controller", exe, sizeof(exe)));
	assert_non_null(strstr(exe, "unknown"));
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_component_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
