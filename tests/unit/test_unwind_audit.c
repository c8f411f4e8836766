/*
 * The unwind maps' writes on the audit record (loader/unwind_audit.c): a
 * file's rows are one record with its range; unwind_procs updates and
 * deletes are one record per kind per flush, counting every write, naming at
 * most UNWIND_AUDIT_LISTED pids, carrying the last error; an empty batch
 * writes nothing. Each record is checked as JSON by python3.
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

static int count_lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
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
	unwind_audit_rows("/usr/lib/libc.so.6", 2049, 1234, 100, 2500, 1);
	check_json("len(r) == 1 and r[0][\"event\"] == \"map_update\" and r[0][\"map\"] == \"unwind_rows\" "
		   "and r[0][\"first_row\"] == 100 and r[0][\"rows\"] == 2500 and "
		   "r[0][\"file\"] == \"/usr/lib/libc.so.6\" and r[0][\"ino\"] == 1234 and "
		   "r[0][\"evicted_files\"] == 1 and r[0][\"result\"] == \"ok\"");
}

static void test_proc_batches(void **state)
{
	struct unwind_audit ua;
	char *text;
	uint32_t pid;

	(void)state;
	memset(&ua, 0, sizeof(ua));
	/* Nothing written yet: no record. */
	unwind_audit_flush(&ua);
	text = test_audit_text(audit_fd);
	assert_int_equal(count_lines(text), 0);
	free(text);

	for (pid = 1000; pid < 1100; pid++)
		unwind_audit_proc_update(&ua, pid, pid == 1050 ? ENOSPC : 0);
	unwind_audit_proc_delete(&ua, 77);
	unwind_audit_flush(&ua);
	check_json("len(r) == 2 and r[0][\"map\"] == \"unwind_procs\" and r[0][\"op\"] == \"update\" "
		   "and r[0][\"count\"] == 100 and len(r[0][\"pids\"]) == 32 and r[0][\"pids\"][0] == 1000 "
		   "and r[0][\"pids_not_listed\"] == 68 and r[0][\"failed\"] == 1 and "
		   "r[0][\"result\"] == \"error\" and r[0][\"errno\"] == 28 and "
		   "r[1][\"op\"] == \"delete\" and r[1][\"count\"] == 1 and r[1][\"pids\"] == [77] "
		   "and r[1][\"result\"] == \"ok\"");
	/* The batches start afresh. */
	unwind_audit_flush(&ua);
	text = test_audit_text(audit_fd);
	assert_int_equal(count_lines(text), 2);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_batches, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
