/*
 * A file the supervisor holds for the exporter (exporter/formats/held_file.h),
 * on a real memfd: written whole and cut to its length, read back whole; a
 * write past its bound, or one its writer gave up, leaves it empty rather
 * than a mix of two writes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporter/formats/held_file.h"

struct job {
	const char *text;
	size_t repeat;
	int fail; /* returned after writing */
};

static int job_writer(FILE *out, void *arg)
{
	const struct job *j = arg;
	size_t i;

	for (i = 0; i < j->repeat; i++)
		if (fputs(j->text, out) == EOF)
			return -EIO;
	return j->fail;
}

static off_t size_of(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_size;
}

static void expect_content(int fd, const char *want)
{
	char err[128];
	uint8_t *buf;
	size_t len;

	assert_int_equal(held_file_read(fd, 1 << 20, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(buf, want, len);
	free(buf);
}

static void test_write_read(void **state)
{
	struct job big = {.text = "0123456789", .repeat = 1000}, small = {.text = "abc", .repeat = 1};
	int fd = memfd_create("test-held", MFD_CLOEXEC);
	char err[128];
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_true(fd >= 0);
	/* Empty: nothing, no error. */
	assert_int_equal(held_file_read(fd, 1 << 20, &buf, &len, err, sizeof(err)), 0);
	assert_null(buf);
	assert_int_equal(len, 0);
	/* Through stdio's buffer and past it. */
	assert_int_equal(held_file_write(fd, job_writer, &big, 1 << 20, err, sizeof(err)), 0);
	assert_int_equal(size_of(fd), 10000);
	/* A shorter one replaces it whole: its length, not the last one's. */
	assert_int_equal(held_file_write(fd, job_writer, &small, 1 << 20, err, sizeof(err)), 0);
	assert_int_equal(size_of(fd), 3);
	expect_content(fd, "abc");
	/* A read bounded below the size: refused, said so. */
	assert_int_equal(held_file_write(fd, job_writer, &big, 1 << 20, err, sizeof(err)), 0);
	assert_int_equal(held_file_read(fd, 100, &buf, &len, err, sizeof(err)), -EFBIG);
	assert_null(buf);
	assert_non_null(strstr(err, "bound"));
	close(fd);
}

static void test_failures_leave_nothing(void **state)
{
	struct job big = {.text = "0123456789", .repeat = 1000}, small = {.text = "abc", .repeat = 1};
	struct job quits = {.text = "xyz", .repeat = 2, .fail = -EINVAL};
	int fd = memfd_create("test-held", MFD_CLOEXEC);
	char err[128];

	(void)state;
	assert_true(fd >= 0);
	/* Past the bound: -EFBIG, and neither the old content nor a part of the new. */
	assert_int_equal(held_file_write(fd, job_writer, &small, 1 << 20, err, sizeof(err)), 0);
	assert_int_equal(held_file_write(fd, job_writer, &big, 5000, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "bound"));
	assert_int_equal(size_of(fd), 0);
	/* The writer's own failure, likewise. */
	assert_int_equal(held_file_write(fd, job_writer, &small, 1 << 20, err, sizeof(err)), 0);
	assert_int_equal(held_file_write(fd, job_writer, &quits, 1 << 20, err, sizeof(err)), -EINVAL);
	assert_int_equal(size_of(fd), 0);
	/* Not a file at all. */
	assert_true(held_file_write(-1, job_writer, &small, 1 << 20, err, sizeof(err)) < 0);
	assert_int_equal(held_file_clear(fd), 0);
	assert_int_equal(held_file_clear(-1), -EBADF);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_read),
		cmocka_unit_test(test_failures_leave_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
