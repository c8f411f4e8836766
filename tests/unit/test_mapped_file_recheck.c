/*
 * mapped_file_open's last check (docs/SECURITY.md, "The very file mapped"):
 * after opening the file a maps line named, the loader reads the process's
 * maps again and hands out the fd only if the process still maps that device
 * and inode at that range. A real child maps a real file executable; between
 * the loader's read of its maps and the open, it unmaps the file, or maps
 * another file at the same address. The file itself is still there, with the
 * identity the first read saw, so only the re-check can tell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "loader/mapped_file.h"

#define PAGE 4096

enum child_step { STEP_KEEP = 'k', STEP_UNMAP = 'u', STEP_REPLACE = 'r' };

struct child {
	pid_t pid;
	int cmd;   /* we write a step */
	int done;  /* it answers one byte per step */
	char dir[64];
	char mapped[96], other[96];
};

static void make_file(const char *path, char fill)
{
	char page[PAGE];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	memset(page, fill, sizeof(page));
	assert_int_equal(write(fd, page, sizeof(page)), PAGE);
	close(fd);
}

/* The child: maps `mapped` executable, then does each step it is told. */
static void child_run(const struct child *c, int cmd, int done)
{
	char step;
	void *at;
	int fd = open(c->mapped, O_RDONLY | O_CLOEXEC), other;

	if (fd < 0)
		_exit(10);
	at = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (at == MAP_FAILED)
		_exit(11);
	if (write(done, "m", 1) != 1)
		_exit(12);
	while (read(cmd, &step, 1) == 1) {
		if (step == STEP_UNMAP && munmap(at, PAGE) != 0)
			_exit(13);
		if (step == STEP_REPLACE) {
			other = open(c->other, O_RDONLY | O_CLOEXEC);
			if (other < 0 || mmap(at, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
					      other, 0) != at)
				_exit(14);
			close(other);
		}
		if (write(done, &step, 1) != 1)
			_exit(15);
	}
	_exit(0);
}

static void child_start(struct child *c)
{
	int to[2], from[2];
	char b;

	snprintf(c->dir, sizeof(c->dir), "/tmp/lowprof-recheck.XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	snprintf(c->mapped, sizeof(c->mapped), "%s/mapped.so", c->dir);
	snprintf(c->other, sizeof(c->other), "%s/other.so", c->dir);
	make_file(c->mapped, 'a');
	make_file(c->other, 'b');
	assert_int_equal(pipe2(to, O_CLOEXEC), 0);
	assert_int_equal(pipe2(from, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		close(to[1]);
		close(from[0]);
		child_run(c, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	c->cmd = to[1];
	c->done = from[0];
	assert_int_equal(read(c->done, &b, 1), 1);
}

static void child_step(struct child *c, char step)
{
	char b;

	assert_int_equal(write(c->cmd, &step, 1), 1);
	assert_int_equal(read(c->done, &b, 1), 1);
	assert_int_equal(b, step);
}

static void child_stop(struct child *c)
{
	int status;

	close(c->cmd);
	close(c->done);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	unlink(c->mapped);
	unlink(c->other);
	rmdir(c->dir);
}

/* The child's maps line of `mapped`, as the loader reads it first. */
static void child_mapping(const struct child *c, struct mapped_file *m)
{
	char path[64], line[8192];
	bool found = false;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)c->pid);
	fp = fopen(path, "re");
	assert_non_null(fp);
	while (!found && fgets(line, sizeof(line), fp))
		found = mapped_file_parse_line(line, m) && mapped_file_executable(m) &&
			strcmp(m->path, c->mapped) == 0;
	fclose(fp);
	assert_true(found);
}

/* Still mapped: the very file, by fd. */
static void test_still_mapped_opens(void **state)
{
	struct mapped_file m;
	struct child c;
	struct stat st;
	int fd;

	(void)state;
	child_start(&c);
	child_mapping(&c, &m);
	child_step(&c, STEP_KEEP);
	fd = mapped_file_open("/proc", c.pid, &m, true, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_ino, m.ino);
	close(fd);
	child_stop(&c);
}

/*
 * The child does `step` after the loader read its maps: the file is still on
 * disk with the identity first seen (without the re-check it opens), but no
 * fd is handed out.
 */
static void assert_refused_after(char step)
{
	struct mapped_file m, now;
	struct child c;
	struct stat st;
	int fd;

	child_start(&c);
	child_mapping(&c, &m);
	child_step(&c, step);
	if (step == STEP_REPLACE) {
		/* The range is still there, with the other file. */
		assert_int_equal(mapped_file_find("/proc", c.pid, m.start, m.end, &now), 0);
		assert_int_not_equal(now.ino, m.ino);
	}
	fd = mapped_file_open("/proc", c.pid, &m, false, &st);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mapped_file_open("/proc", c.pid, &m, true, &st), -ESTALE);
	child_stop(&c);
}

/* Unmapped since. */
static void test_unmapped_refused(void **state)
{
	(void)state;
	assert_refused_after(STEP_UNMAP);
}

/* Another file mapped at the same range since. */
static void test_replaced_refused(void **state)
{
	(void)state;
	assert_refused_after(STEP_REPLACE);
}

/* The process gone (reaped) after its maps were read: refused. */
static void test_gone_refused(void **state)
{
	struct mapped_file m;
	struct child c;
	struct stat st;
	pid_t pid;
	int status;

	(void)state;
	child_start(&c);
	child_mapping(&c, &m);
	pid = c.pid;
	close(c.cmd);
	close(c.done);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(mapped_file_open("/proc", pid, &m, true, &st) < 0);
	unlink(c.mapped);
	unlink(c.other);
	rmdir(c.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_still_mapped_opens),
		cmocka_unit_test(test_unmapped_refused),
		cmocka_unit_test(test_replaced_refused),
		cmocka_unit_test(test_gone_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
