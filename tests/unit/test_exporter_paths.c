/*
 * The exporter's file system confinement, from inside a real sandboxed
 * exporter-like process: as `nobody`, with no capabilities, the output
 * directory at LOWPROF_FD_OUTDIR, Landlock (sandbox_confine_to_dir) and the
 * exporter's own seccomp filter, exactly as lowprof-exporter enters them.
 * Outside the directory nothing opens, however the path is spelled (the
 * filter alone compares the dirfd only, which an absolute path ignores):
 * an absolute path, "..", a symlink out of it; inside, the exporter's own
 * work (create, write, rename over, remove) still succeeds.
 * Needs root (to switch to nobody); skipped otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipc/lowprof_fds.h"
#include "seccomp/sandbox.h"

/* Exit status bits of the sandboxed child: one per escape that worked or
 * per own operation that failed. */
#define ESCAPE_ABSOLUTE 0x01
#define ESCAPE_DOTDOT 0x02
#define ESCAPE_SYMLINK 0x04
#define ESCAPE_DOTDOT_CREATE 0x08
#define OWN_FAILED 0x10
#define SETUP_FAILED 0x40

static char top[64], outdir[96], outside[128];

static int opened(int fd)
{
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int sandboxed_child(uid_t uid, gid_t gid)
{
	int dfd, bits = 0, fd;

	dfd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || dup2(dfd, LOWPROF_FD_OUTDIR) < 0 || setgroups(0, NULL) != 0 ||
	    setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
		return SETUP_FAILED;
	close(dfd);
	sandbox_not_dumpable("exporter");
	sandbox_confine_to_dir("exporter", LOWPROF_FD_OUTDIR);
	sandbox_enter("exporter", false);

	if (opened(openat(LOWPROF_FD_OUTDIR, outside, O_RDONLY | O_CLOEXEC)))
		bits |= ESCAPE_ABSOLUTE;
	if (opened(openat(LOWPROF_FD_OUTDIR, "../outside.txt", O_RDONLY | O_CLOEXEC)))
		bits |= ESCAPE_DOTDOT;
	if (opened(openat(LOWPROF_FD_OUTDIR, "link", O_RDONLY | O_CLOEXEC)))
		bits |= ESCAPE_SYMLINK;
	if (opened(openat(LOWPROF_FD_OUTDIR, "../planted", O_WRONLY | O_CREAT | O_CLOEXEC, 0644)))
		bits |= ESCAPE_DOTDOT_CREATE;
	/* What the exporter does: NAME.tmp written, renamed over NAME, a stale one removed. */
	fd = openat(LOWPROF_FD_OUTDIR, "profile.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0 || write(fd, "x", 1) != 1 || ftruncate(fd, 0) != 0 || close(fd) != 0 ||
	    renameat(LOWPROF_FD_OUTDIR, "profile.tmp", LOWPROF_FD_OUTDIR, "profile") != 0 ||
	    !opened(openat(LOWPROF_FD_OUTDIR, "profile", O_RDONLY | O_CLOEXEC)) ||
	    unlinkat(LOWPROF_FD_OUTDIR, "profile", 0) != 0)
		bits |= OWN_FAILED;
	return bits;
}

static void test_no_path_out_of_the_directory(void **state)
{
	struct passwd *pw = getpwnam("nobody");
	char path[192];
	int status, fd;
	pid_t c;

	(void)state;
	if (geteuid() != 0 || pw == NULL)
		skip();
	snprintf(top, sizeof(top), "/tmp/lowprof-paths-XXXXXX");
	assert_non_null(mkdtemp(top));
	assert_int_equal(chmod(top, 0755), 0);
	snprintf(outdir, sizeof(outdir), "%s/out", top);
	snprintf(outside, sizeof(outside), "%s/outside.txt", top);
	assert_int_equal(mkdir(outdir, 0755), 0);
	assert_int_equal(chown(outdir, pw->pw_uid, pw->pw_gid), 0);
	/* Readable by anyone, and its directory writable by nobody: only the
	 * confinement stands between the exporter and these. */
	fd = open(outside, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chown(top, pw->pw_uid, pw->pw_gid), 0);
	snprintf(path, sizeof(path), "%s/link", outdir);
	assert_int_equal(symlink(outside, path), 0);

	c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(sandboxed_child(pw->pw_uid, pw->pw_gid));
	assert_int_equal(waitpid(c, &status, 0), c);

	unlink(path);
	snprintf(path, sizeof(path), "%s/planted", top);
	unlink(path);
	unlink(outside);
	rmdir(outdir);
	rmdir(top);
	assert_true(WIFEXITED(status));
	assert_false(WEXITSTATUS(status) & SETUP_FAILED);
	assert_false(WEXITSTATUS(status) & ESCAPE_ABSOLUTE);
	assert_false(WEXITSTATUS(status) & ESCAPE_DOTDOT);
	assert_false(WEXITSTATUS(status) & ESCAPE_SYMLINK);
	assert_false(WEXITSTATUS(status) & ESCAPE_DOTDOT_CREATE);
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_path_out_of_the_directory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
