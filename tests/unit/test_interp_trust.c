/*
 * Which files may stand for every process's dynamic loader (loader/
 * interp_trust.h): the rule on a file's status, then on real files, owned
 * by root and by another user, with and without group or other write
 * permission (the owner part needs root to give a file away).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "loader/interp_trust.h"

#define EXT4_MAGIC 0xEF53UL

static struct stat status(uid_t uid, mode_t mode)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_uid = uid;
	st.st_gid = 0;
	st.st_mode = mode;
	return st;
}

static void test_rule(void **state)
{
	struct stat st;

	(void)state;
	st = status(0, S_IFREG | 0755);
	assert_true(interp_trust_status(&st, EXT4_MAGIC));
	st = status(0, S_IFREG | 0644);
	assert_true(interp_trust_status(&st, EXT4_MAGIC));
	/* Another owner, even one whose file root can read. */
	st = status(65534, S_IFREG | 0755);
	assert_false(interp_trust_status(&st, EXT4_MAGIC));
	st = status(1000, S_IFREG | 0555);
	assert_false(interp_trust_status(&st, EXT4_MAGIC));
	/* Root's, but a group or everyone may write it. */
	st = status(0, S_IFREG | 0775);
	assert_false(interp_trust_status(&st, EXT4_MAGIC));
	st = status(0, S_IFREG | 0757);
	assert_false(interp_trust_status(&st, EXT4_MAGIC));
	st = status(0, S_IFREG | 0620);
	assert_false(interp_trust_status(&st, EXT4_MAGIC));
	/* On FUSE its server chose the owner and mode it reports. */
	st = status(0, S_IFREG | 0755);
	assert_false(interp_trust_status(&st, INTERP_TRUST_FUSE_MAGIC));
	/* Not a regular file. */
	st = status(0, S_IFDIR | 0755);
	assert_false(interp_trust_status(&st, EXT4_MAGIC));
	st = status(0, S_IFCHR | 0644);
	assert_false(interp_trust_status(&st, EXT4_MAGIC));
}

static void test_files(void **state)
{
	char path[] = "/tmp/lowprof-interp-trust.XXXXXX";
	struct statfs fs;
	int fd;

	(void)state;
	if (geteuid() != 0) {
		print_message("not root: no file can be given to another owner\n");
		skip();
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	/* On FUSE every file would be refused whatever its owner: the cases
	 * below would prove nothing. */
	assert_int_equal(fstatfs(fd, &fs), 0);
	assert_int_not_equal((unsigned long)fs.f_type, INTERP_TRUST_FUSE_MAGIC);

	assert_int_equal(fchmod(fd, 0755), 0);
	assert_true(interp_trust_fd(fd));
	assert_int_equal(fchmod(fd, 0775), 0);
	assert_false(interp_trust_fd(fd));
	assert_int_equal(fchmod(fd, 0757), 0);
	assert_false(interp_trust_fd(fd));
	/* Given to nobody: what any user's own file is. */
	assert_int_equal(fchmod(fd, 0755), 0);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	assert_false(interp_trust_fd(fd));
	/* Back to root: trusted again (the check is on the file now, not a
	 * remembered verdict). */
	assert_int_equal(fchown(fd, 0, 0), 0);
	assert_int_equal(fchmod(fd, 0755), 0);
	assert_true(interp_trust_fd(fd));
	close(fd);
	unlink(path);
	/* A descriptor that is no file: refused, not trusted. */
	assert_false(interp_trust_fd(-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
