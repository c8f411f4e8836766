/*
 * A component that makes a forbidden syscall dies by SIGSYS: each component's
 * filter is installed in a forked child that then calls ptrace (on no
 * allowlist), and the parent sees the signal. With the LOG flavour the same
 * call returns instead. An allowed call (getpid) and an EACCES probe work.
 * The exporter's filter confines every path call to its output directory fd
 * and its sockets to TCP/IP.
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
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/lowprof_fds.h"
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

/* In the child, under the exporter's filter: each step's failure is its own exit code. */
static int exporter_paths_child(const char *dir)
{
	int fd, d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char err[256];

	if (d < 0 || dup2(d, LOWPROF_FD_OUTDIR) != LOWPROF_FD_OUTDIR)
		return 20;
	if (seccomp_install("exporter", false, err, sizeof(err)) != 0)
		return 21;
	/* Inside the output directory: create, rename, remove. */
	fd = openat(LOWPROF_FD_OUTDIR, "a.tmp", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 22;
	close(fd);
	if (renameat(LOWPROF_FD_OUTDIR, "a.tmp", LOWPROF_FD_OUTDIR, "a") != 0)
		return 23;
	/* Anywhere else: EACCES, whatever the path (even the same directory by name). */
	if (openat(AT_FDCWD, "/etc/hostname", O_RDONLY) >= 0 || errno != EACCES)
		return 24;
	if (open("/etc/hostname", O_RDONLY) >= 0 || errno != EACCES)
		return 25;
	if (openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY) >= 0 || errno != EACCES)
		return 26;
	if (renameat(LOWPROF_FD_OUTDIR, "a", AT_FDCWD, "/tmp/lowprof-escaped") == 0 || errno != EACCES)
		return 27;
	if (renameat(AT_FDCWD, "/tmp/x", LOWPROF_FD_OUTDIR, "b") == 0 || errno != EACCES)
		return 28;
	if (unlinkat(AT_FDCWD, "/tmp/x", 0) == 0 || errno != EACCES)
		return 29;
	if (unlinkat(LOWPROF_FD_OUTDIR, "a", 0) != 0)
		return 30;
	/* The network as OTLP needs it: TCP over IPv4 or IPv6, no other family. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 31;
	close(fd);
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && errno == EACCES)
		return 32;
	if (fd >= 0)
		close(fd);
	if (socket(AF_UNIX, SOCK_STREAM, 0) >= 0 || errno != EACCES)
		return 33;
	if (socket(AF_NETLINK, SOCK_RAW, 0) >= 0 || errno != EACCES)
		return 34;
	if (socket(AF_PACKET, SOCK_RAW, 0) >= 0 || errno != EACCES)
		return 35;
	return 0;
}

static void test_exporter_paths_and_sockets(void **state)
{
	char dir[] = "/tmp/lowprof-seccomp-XXXXXX";
	int status;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(exporter_paths_child(dir));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	rmdir(dir);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("exporter path confinement: child status 0x%x (exit code = failed step)", status);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill),
		cmocka_unit_test(test_log_mode_survives),
		cmocka_unit_test(test_allowed_and_probe),
		cmocka_unit_test(test_exporter_paths_and_sockets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
