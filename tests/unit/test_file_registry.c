/*
 * loader/file_registry: real files opened and registered by identity. The
 * cap holds (the least recently used goes, and is reported), add and open
 * both count as use, forget closes, an fd handed out reads the very file,
 * every fd the registry held is closed, and the kernel's device encoding
 * round-trips.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_fd_count.h"

#include "loader/file_registry.h"

#define NFILES 6

static char dir[64];
static char paths[NFILES][96];
static struct lowprof_file_id ids[NFILES];

/* NFILES files, each holding its own index as text; ids[] as BPF reports them. */
static int setup(void **state)
{
	struct stat st;
	int i, fd;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lowprof-file-registry-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	for (i = 0; i < NFILES; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/f%d", dir, i);
		fd = open(paths[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dprintf(fd, "file %d", i) < 0 || fstat(fd, &st) != 0)
			return -1;
		close(fd);
		ids[i].ino = st.st_ino;
		ids[i].dev = file_registry_kdev(st.st_dev);
		ids[i].gen = 0;
	}
	return 0;
}

static int teardown(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < NFILES; i++)
		unlink(paths[i]);
	rmdir(dir);
	return 0;
}

static int open_ro(int i)
{
	int fd = open(paths[i], O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static int add(struct file_registry *r, int i, struct lowprof_file_id *evicted)
{
	return file_registry_add(r, &ids[i], open_ro(i), paths[i], evicted);
}

/* The registry's fd of file i reads file i, and its path is i's. */
static void expect_file(struct file_registry *r, int i)
{
	char path[128], buf[16], want[16];
	struct stat st;
	ssize_t n;
	int fd = file_registry_open(r, &ids[i], path, sizeof(path));

	assert_true(fd >= 0);
	assert_string_equal(path, paths[i]);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_ino, ids[i].ino);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	snprintf(want, sizeof(want), "file %d", i);
	assert_string_equal(buf, want);
	close(fd);
}

static void expect_gone(struct file_registry *r, int i)
{
	char path[16] = "x";

	assert_int_equal(file_registry_open(r, &ids[i], path, sizeof(path)), -ENOENT);
	assert_string_equal(path, "");
}

static void test_cap_and_lru_order(void **state)
{
	struct lowprof_file_id ev;
	int before = test_fd_count();
	struct file_registry *r = file_registry_new(3);

	(void)state;
	assert_non_null(r);
	assert_int_equal(add(r, 0, &ev), 0);
	assert_int_equal(add(r, 1, &ev), 0);
	assert_int_equal(add(r, 2, &ev), 0);
	assert_int_equal(test_fd_count(), before + 3);
	/* Opening 0 makes it the most recently used: 1 is the oldest now. */
	expect_file(r, 0);
	memset(&ev, 0, sizeof(ev));
	assert_int_equal(add(r, 3, &ev), 1);
	assert_int_equal(ev.ino, ids[1].ino);
	assert_int_equal(ev.dev, ids[1].dev);
	expect_gone(r, 1);
	/* Adding a known file again keeps its first fd (the new one is closed)
	 * and makes it the most recently used: 0 goes next, not 2. */
	assert_int_equal(add(r, 2, &ev), 0);
	assert_int_equal(test_fd_count(), before + 3);
	assert_int_equal(add(r, 4, &ev), 1);
	assert_int_equal(ev.ino, ids[0].ino);
	expect_gone(r, 0);
	expect_file(r, 2);
	expect_file(r, 3);
	expect_file(r, 4);
	/* Never more than the cap, whatever is added; without evicted, no report. */
	assert_int_equal(add(r, 5, NULL), 1);
	assert_int_equal(test_fd_count(), before + 3);
	file_registry_free(r);
	assert_int_equal(test_fd_count(), before);
}

static void test_forget_and_identity(void **state)
{
	struct lowprof_file_id other;
	int before = test_fd_count();
	struct file_registry *r = file_registry_new(8);

	(void)state;
	assert_non_null(r);
	assert_int_equal(add(r, 0, NULL), 0);
	assert_int_equal(add(r, 1, NULL), 0);
	/* The generation is part of the identity: a reused inode is another file. */
	other = ids[0];
	other.gen = 1;
	assert_int_equal(file_registry_open(r, &other, NULL, 0), -ENOENT);
	other = ids[0];
	other.dev ^= 1;
	assert_int_equal(file_registry_open(r, &other, NULL, 0), -ENOENT);
	file_registry_forget(r, &ids[0]);
	expect_gone(r, 0);
	expect_file(r, 1);
	assert_int_equal(test_fd_count(), before + 1);
	/* Forgetting what is not there is harmless. */
	file_registry_forget(r, &ids[0]);
	file_registry_free(r);
	assert_int_equal(test_fd_count(), before);
	file_registry_free(NULL);
}

static void test_device_encoding(void **state)
{
	static const struct {
		unsigned major, minor;
	} devs[] = {{8, 2}, {259, 3}, {0, 45}, {253, 1}, {4095, 0xfffff}, {1, 0x12345}};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		dev_t d = makedev(devs[i].major, devs[i].minor);
		uint32_t k = file_registry_kdev(d);

		/* The kernel's new_encode_dev: major in the top 12 bits, minor below. */
		assert_int_equal(k, (devs[i].major << 20) | devs[i].minor);
		assert_true(file_registry_udev(k) == d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_and_lru_order),
		cmocka_unit_test(test_forget_and_identity),
		cmocka_unit_test(test_device_encoding),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
