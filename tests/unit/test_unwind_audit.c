/*
 * The unwind maps' writes on the audit record (loader/unwind_audit.c): a
 * file's rows are one record with its range and identity; a dropped table
 * is one record with the file's identity and the reason. Each record is
 * checked as JSON by python3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_audit_capture.h"

#include "loader/audit_log.h"
#include "loader/unwind_audit.h"

static int audit_fd;

static int setup(void **state)
{
	(void)state;
	audit_fd = memfd_create("audit", MFD_CLOEXEC);
	assert_true(audit_fd >= 0);
	audit_log_open(dup(audit_fd));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	audit_log_close();
	close(audit_fd);
	return 0;
}

/* python3 parses every line and runs check (a Python expression over r, the records). */
static void check_json(const char *check)
{
	char path[] = "/tmp/lowprof-unwind-audit-XXXXXX", cmd[1024];
	char *text = test_audit_text(audit_fd);
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; "
		 "sys.exit(0 if (%s) else 1)' %s",
		 check, path);
	if (system(cmd) != 0)
		fail_msg("audit records fail the check %s:\n%s", check, text);
	unlink(path);
	free(text);
}

static void test_rows_record(void **state)
{
	(void)state;
	struct lowprof_file_id id = {.ino = 1234, .dev = 8 << 20 | 1, .gen = 99};

	unwind_audit_rows("/usr/lib/libc.so.6", &id, 100, 2500, 1);
	check_json("len(r) == 1 and r[0][\"event\"] == \"map_update\" and r[0][\"map\"] == \"unwind_rows\" "
		   "and r[0][\"first_row\"] == 100 and r[0][\"rows\"] == 2500 and "
		   "r[0][\"file\"] == \"/usr/lib/libc.so.6\" and r[0][\"ino\"] == 1234 and "
		   "r[0][\"gen\"] == 99 and r[0][\"dev\"] == 8388609 and "
		   "r[0][\"evicted_files\"] == 1 and r[0][\"result\"] == \"ok\"");
}

/* A dropped table: one record naming the file's identity and why. */
static void test_evict_record(void **state)
{
	struct lowprof_file_id id = {.ino = 42, .dev = 259 << 20 | 3, .gen = 5};

	(void)state;
	unwind_audit_evict(&id, "least recently used");
	check_json("len(r) == 1 and r[0][\"event\"] == \"unwind_evict\" and "
		   "r[0][\"map\"] == \"unwind_files\" and r[0][\"ino\"] == 42 and "
		   "r[0][\"dev\"] == (259 << 20 | 3) and r[0][\"gen\"] == 5 and "
		   "r[0][\"why\"] == \"least recently used\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evict_record, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
