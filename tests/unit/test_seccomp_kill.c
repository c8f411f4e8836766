/*
 * A component that makes a forbidden syscall dies by SIGSYS: each component's
 * filter is installed in a forked child that then calls ptrace (on no
 * allowlist), and the parent sees the signal. With the LOG flavour the same
 * call returns instead. An allowed call (getpid) and an EACCES probe work.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp/seccomp_install.h"

static int run_child(const char *component, bool log_only, int what)
{
	char err[256];
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (seccomp_install(component, log_only, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			_exit(10);
		}
		if (what == 0) {
			ptrace(PTRACE_TRACEME, 0, NULL, NULL);
			_exit(0);
		}
		if (what == 1)
			_exit(getpid() > 0 ? 0 : 11);
		/* unwinder: opening a path is a harmless probe answered with EACCES */
		_exit(open("/etc/hostname", O_RDONLY) < 0 && errno == EACCES ? 0 : 12);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void expect_sigsys(const char *component)
{
	int status = run_child(component, false, 0);

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
		fail_msg("%s: child status 0x%x, expected death by SIGSYS", component, status);
}

static void test_kill(void **state)
{
	(void)state;
	expect_sigsys("loader");
	expect_sigsys("exporter");
	expect_sigsys("controller");
	expect_sigsys("unwinder");
	expect_sigsys("supervisor");
}

static void test_log_mode_survives(void **state)
{
	int status = run_child("controller", true, 0);

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_allowed_and_probe(void **state)
{
	int status;

	(void)state;
	status = run_child("exporter", false, 1);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	status = run_child("unwinder", false, 2);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill),
		cmocka_unit_test(test_log_mode_survives),
		cmocka_unit_test(test_allowed_and_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
