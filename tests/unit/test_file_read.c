/* Whole-file reads: /proc files (size 0 in stat), the size cap, and errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/file_read.h"

static void test_proc_file(void **state)
{
	char *buf, err[256];
	size_t len;

	(void)state;
	assert_int_equal(file_read_all("/proc/self/status", 1 << 20, &buf, &len, err, sizeof(err)), 0);
	assert_true(len > 100);
	assert_int_equal(buf[len], '\0');
	assert_non_null(strstr(buf, "Name:"));
	free(buf);
}

static void test_size_cap_and_growth(void **state)
{
	char path[] = "/tmp/lowprof-fileread.XXXXXX", *buf, err[256];
	size_t len, i;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	for (i = 0; i < 100000; i++)
		fputc('a' + (int)(i % 26), f);
	fclose(f);
	/* Larger than the 16 KiB first buffer: it grows, and every byte is there. */
	assert_int_equal(file_read_all(path, 1 << 20, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 100000);
	for (i = 0; i < len; i++)
		assert_int_equal(buf[i], 'a' + (int)(i % 26));
	free(buf);
	/* Over the cap: refused, not cut. */
	assert_int_equal(file_read_all(path, 99999, &buf, &len, err, sizeof(err)), -EFBIG);
	assert_null(buf);
	assert_non_null(strstr(err, "larger than 99999 bytes"));
	assert_int_equal(file_read_all(path, 100000, &buf, &len, err, sizeof(err)), 0);
	free(buf);
	unlink(path);
}

static void test_errors(void **state)
{
	char *buf, err[256];
	size_t len;

	(void)state;
	assert_int_equal(file_read_all("/nonexistent/lowprof", 10, &buf, &len, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/lowprof: No such file"));
	assert_int_equal(file_read_all("/proc", 10, &buf, &len, err, sizeof(err)), -EISDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_file),
		cmocka_unit_test(test_size_cap_and_growth),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
