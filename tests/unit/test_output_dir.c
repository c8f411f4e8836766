/*
 * Handing the output directory to the exporter's user (supervisor/output_dir.c),
 * checked with real ownership changes and a real unprivileged process: the
 * user can create and replace its own files but not remove root's audit log;
 * lowprof's files left by root are given to the user, but never through a
 * symlink or a hard link. Needs root (chown); skipped, saying why, without it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/output_dir.h"

static struct privdrop_user nobody;

static void touch_at(int dirfd, const char *name, mode_t mode)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
}

/* In a child switched to the user: 0, or the number of the step that failed. */
static int as_user(int dirfd)
{
	int fd;

	if (setgroups(0, NULL) != 0 || setresgid(nobody.gid, nobody.gid, nobody.gid) != 0 ||
	    setresuid(nobody.uid, nobody.uid, nobody.uid) != 0)
		return 1;
	fd = openat(dirfd, "summary.json.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return 2;
	close(fd);
	/* Replacing its own file: the one root left was handed over. */
	if (renameat(dirfd, "summary.json.tmp", dirfd, "summary.json") != 0)
		return 3;
	/* The sticky bit: root's audit log cannot be removed or replaced. */
	if (unlinkat(dirfd, "audit.log", 0) == 0 || errno != EPERM)
		return 4;
	fd = openat(dirfd, "x.tmp", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 5;
	close(fd);
	if (renameat(dirfd, "x.tmp", dirfd, "audit.log") == 0 || errno != EPERM)
		return 6;
	if (openat(dirfd, "audit.log", O_WRONLY | O_CLOEXEC) >= 0)
		return 7;
	return 0;
}

static void test_hand_over(void **state)
{
	char dir[] = "/tmp/lowprof-outdir-XXXXXX", other[] = "/tmp/lowprof-outdir-target-XXXXXX";
	char err[256], cmd[128];
	struct stat st;
	int dirfd, status, tfd;
	pid_t pid;

	(void)state;
	if (geteuid() != 0) {
		printf("SKIP: handing a directory to another user needs root\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	/* What an earlier run as root left, and the root-only audit log. */
	touch_at(dirfd, "summary.json", 0644);
	touch_at(dirfd, "audit.log", 0600);
	/* A symlink and a hard link under lowprof's names must not be followed. */
	tfd = mkstemp(other);
	assert_true(tfd >= 0);
	close(tfd);
	assert_int_equal(symlinkat(other, dirfd, "profile.pb.gz"), 0);
	assert_int_equal(linkat(AT_FDCWD, other, dirfd, "flamegraph.svg", 0), 0);

	assert_int_equal(output_dir_hand_over(dirfd, dir, &nobody, err, sizeof(err)), 0);
	assert_int_equal(fstat(dirfd, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, nobody.gid);
	assert_int_equal(st.st_mode & 07777, 01775);
	assert_int_equal(fstatat(dirfd, "summary.json", &st, 0), 0);
	assert_int_equal(st.st_uid, nobody.uid);
	assert_int_equal(fstatat(dirfd, "audit.log", &st, 0), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(stat(other, &st), 0);
	assert_int_equal(st.st_uid, 0); /* neither through the symlink nor the hard link */

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(as_user(dirfd));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("as %s: status 0x%x (exit code = failed step)", nobody.name, status);

	/* A directory the user can already write is left alone. */
	assert_int_equal(fchmod(dirfd, 0777), 0);
	assert_int_equal(fchown(dirfd, 0, 0), 0);
	assert_int_equal(output_dir_hand_over(dirfd, dir, &nobody, err, sizeof(err)), 0);
	assert_int_equal(fstat(dirfd, &st), 0);
	assert_int_equal(st.st_gid, 0);
	assert_int_equal(st.st_mode & 07777, 0777);

	close(dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir, other);
	assert_int_equal(system(cmd), 0);
}

static int find_user(void **state)
{
	char err[256];

	(void)state;
	if (privdrop_lookup("nobody", &nobody, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_over),
	};

	return cmocka_run_group_tests(tests, find_user, NULL);
}
