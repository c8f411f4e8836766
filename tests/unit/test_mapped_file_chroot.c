/*
 * mapped_file_open against a hostile process, as the loader runs it (its
 * capability set; with and without CAP_CHECKPOINT_RESTORE, so with and
 * without /proc/PID/map_files): a process of `nobody` in a real chroot
 * maps its own file, then plants symlinks that lead to a root-only file with
 * the same inode number on another file system (tmpfs numbers inodes in
 * sequence: easy to match). The loader must never hand out that file:
 *  - a symlink at the mapped path as seen through /proc/PID/root (an absolute
 *    target resolves against the opener's root): the loader opens the
 *    process's own file, by device and inode, or nothing;
 *  - the mapped name swapped for a symlink between the maps read and the
 *    open: the path is refused; map_files, where reachable, gives the mapped
 *    file itself.
 * Needs root (mounts, chroot, setuid); skipped otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "loader/mapped_file.h"
#include "seccomp/caps_limit.h"

enum outcome { GOT_NOTHING = 1, GOT_LIB = 2, GOT_SECRET = 3, GOT_OTHER = 4 };

struct fixture {
	char top[64], a[96], b[96], secret[128];
	pid_t victim;
	int go[2], ready[2];
};

static void mkdir_p(const char *path, uid_t owner)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
	assert_int_equal(chown(buf, owner, owner), 0);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	char page[4096] = {0};

	assert_true(fd >= 0);
	snprintf(page, sizeof(page), "%s", text);
	assert_int_equal(write(fd, page, sizeof(page)), (ssize_t)sizeof(page));
	close(fd);
}

/* The victim-attacker: chrooted at a, as nobody; maps /lib.so, then on each
 * byte from the test does the next step. */
static void attacker(struct fixture *f, uid_t nobody, gid_t nogroup)
{
	char mirror[256], c;
	void *map;
	int fd;

	if (chroot(f->a) != 0 || chdir("/") != 0 || setgroups(0, NULL) != 0 ||
	    setresgid(nogroup, nogroup, nogroup) != 0 || setresuid(nobody, nobody, nobody) != 0)
		_exit(10);
	fd = open("/lib.so", O_RDONLY | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		_exit(11);
	/* Inside its root, the host's path of its own file: a symlink to the secret. */
	snprintf(mirror, sizeof(mirror), "%s/lib.so", f->a);
	if (symlink(f->secret, mirror) != 0)
		_exit(12);
	if (write(f->ready[1], "1", 1) != 1 || read(f->go[0], &c, 1) != 1)
		_exit(13);
	/* The race: the mapped name becomes a symlink to the secret. */
	if (rename("/lib.so", "/lib.old") != 0 || symlink(f->secret, "/lib.so") != 0)
		_exit(14);
	if (write(f->ready[1], "2", 1) != 1)
		_exit(15);
	pause();
	_exit(0);
}

/*
 * What the loader's mapped_file_open gives, run with the loader's
 * capabilities only; without map_files: CAP_CHECKPOINT_RESTORE left out
 * (the paths alone, as on a host that does not grant it).
 */
static enum outcome open_as_loader(pid_t pid, const struct mapped_file *m, bool map_files)
{
	/* The last one is CAP_CHECKPOINT_RESTORE (map_files). */
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH,
					   CAP_SYSLOG, CAP_CHECKPOINT_RESTORE};
	size_t ncaps = sizeof(caps) / sizeof(caps[0]) - (map_files ? 0 : 1);
	char err[256], buf[16] = "";
	struct stat st;
	int kept, fd, status;
	pid_t c = fork();

	assert_true(c >= 0);
	if (c == 0) {
		if (caps_limit_to(caps, ncaps, &kept, err, sizeof(err)) != 0)
			_exit(GOT_OTHER + 10);
		fd = mapped_file_open("/proc", pid, m, true, &st);
		if (fd < 0)
			_exit(GOT_NOTHING);
		if (read(fd, buf, sizeof(buf) - 1) <= 0)
			_exit(GOT_OTHER);
		_exit(strncmp(buf, "SECRET", 6) == 0 ? GOT_SECRET
		      : strncmp(buf, "LIB", 3) == 0  ? GOT_LIB
						     : GOT_OTHER);
	}
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_true(WIFEXITED(status));
	return (enum outcome)WEXITSTATUS(status);
}

static int find_lib(pid_t pid, struct mapped_file *m)
{
	char path[64], line[8192];
	int found = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fp = fopen(path, "re");
	assert_non_null(fp);
	while (!found && fgets(line, sizeof(line), fp)) {
		found = mapped_file_parse_line(line, m) && mapped_file_executable(m) &&
			strstr(m->path, "/a/lib.so") != NULL;
	}
	fclose(fp);
	return found;
}

static void test_chrooted_symlinks(void **state)
{
	struct fixture f;
	struct mapped_file m;
	struct passwd *pw = getpwnam("nobody");
	struct stat sst, lst;
	char path[256], c;
	int i;

	(void)state;
	if (geteuid() != 0 || pw == NULL)
		skip();
	memset(&f, 0, sizeof(f));
	snprintf(f.top, sizeof(f.top), "/tmp/lowprof-chroot-XXXXXX");
	assert_non_null(mkdtemp(f.top));
	snprintf(f.a, sizeof(f.a), "%s/a", f.top);
	snprintf(f.b, sizeof(f.b), "%s/b", f.top);
	snprintf(f.secret, sizeof(f.secret), "%s/secret", f.b);
	assert_int_equal(mkdir(f.a, 0755), 0);
	assert_int_equal(mkdir(f.b, 0700), 0);
	if (mount("tmpfs", f.a, "tmpfs", 0, "mode=0755") != 0 ||
	    mount("tmpfs", f.b, "tmpfs", 0, "mode=0700") != 0) {
		umount(f.a);
		rmdir(f.a);
		rmdir(f.b);
		rmdir(f.top);
		skip();
	}
	/* The chroot is the attacker's (a container image it built). */
	assert_int_equal(chown(f.a, pw->pw_uid, pw->pw_gid), 0);
	write_file(f.secret, "SECRET", 0600);
	assert_int_equal(stat(f.secret, &sst), 0);
	/* The attacker's file with the secret's inode number (another device). */
	for (i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "%s/cand%d", f.a, i);
		write_file(path, "LIB", 0755);
		assert_int_equal(stat(path, &lst), 0);
		if (lst.st_ino == sst.st_ino)
			break;
		unlink(path);
	}
	assert_int_equal(lst.st_ino, sst.st_ino);
	snprintf(path, sizeof(path), "%s/cand%d", f.a, i);
	{
		char lib[128];

		snprintf(lib, sizeof(lib), "%s/lib.so", f.a);
		assert_int_equal(rename(path, lib), 0);
	}
	/* Inside the chroot, the directories of the host's path to it, the attacker's. */
	snprintf(path, sizeof(path), "%s%s", f.a, f.a);
	mkdir_p(path, pw->pw_uid);

	assert_int_equal(pipe2(f.go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(f.ready, O_CLOEXEC), 0);
	f.victim = fork();
	assert_true(f.victim >= 0);
	if (f.victim == 0)
		attacker(&f, pw->pw_uid, pw->pw_gid);
	close(f.ready[1]);
	close(f.go[0]);
	if (read(f.ready[0], &c, 1) != 1) {
		int status = 0;

		waitpid(f.victim, &status, 0);
		fail_msg("the attacker stopped early: status %d", WEXITSTATUS(status));
	}
	assert_true(find_lib(f.victim, &m));
	assert_int_equal(m.ino, sst.st_ino);

	/* The symlink inside its root: the process's own file (by device), or nothing. */
	enum outcome o1 = open_as_loader(f.victim, &m, true);
	enum outcome o1p = open_as_loader(f.victim, &m, false);

	/* The swap after the maps read. */
	assert_int_equal(write(f.go[1], "g", 1), 1);
	assert_int_equal(read(f.ready[0], &c, 1), 1);
	enum outcome o2 = open_as_loader(f.victim, &m, true);
	enum outcome o2p = open_as_loader(f.victim, &m, false);

	kill(f.victim, SIGKILL);
	waitpid(f.victim, NULL, 0);
	umount2(f.a, MNT_DETACH);
	umount2(f.b, MNT_DETACH);
	rmdir(f.a);
	rmdir(f.b);
	rmdir(f.top);
	assert_int_not_equal(o1, GOT_SECRET);
	assert_int_equal(o1, GOT_LIB);
	assert_int_not_equal(o1p, GOT_SECRET);
	assert_int_equal(o1p, GOT_LIB);
	/* The path refuses the symlink; map_files reaches the mapped file itself. */
	assert_int_not_equal(o2, GOT_SECRET);
	assert_int_equal(o2, GOT_LIB);
	assert_int_not_equal(o2p, GOT_SECRET);
	assert_int_equal(o2p, GOT_NOTHING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chrooted_symlinks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
