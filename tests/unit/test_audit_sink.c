/*
 * The audit log's rotation and reopening (supervisor/audit_sink.c) while a
 * writer (standing in for the loader) sends records: every record lands
 * exactly once, whole, in one of the files.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/audit_sink.h"
#include "tests/unit/test_support.h"

#define RECORDS 20000

static void writer(int fd)
{
	char line[256];
	int i, n;

	for (i = 0; i < RECORDS; i++) {
		n = snprintf(line, sizeof(line),
			     "{\"time\":\"2025-01-01T00:00:00.000000Z\",\"event\":\"map_update\","
			     "\"component\":\"loader\",\"pid\":1,\"uid\":0,\"seq\":%d,\"pad\":\"%0*d\","
			     "\"result\":\"ok\",\"errno\":0}\n", i, i % 64, 0);
		if (send(fd, line, (size_t)n, 0) != n)
			_exit(1);
	}
	_exit(0);
}

/* Counts the seq of every record line of one file; every line must be whole. */
static void count_file(const char *path, unsigned char *seen, unsigned *other)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	const char *p;

	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t len = strlen(line);

		assert_true(len > 2);
		assert_int_equal(line[0], '{');
		assert_string_equal(line + len - 2, "}\n");
		p = strstr(line, "\"seq\":");
		if (p == NULL) {
			(*other)++; /* the sink's own audit_rotated / audit_reopened */
			continue;
		}
		seen[atoi(p + 6)]++;
	}
	fclose(f);
}

static void test_rotation_under_sighup(void **state)
{
	static unsigned char seen[RECORDS];
	struct audit_sink s;
	char path[TS_TMPDIR_MAX + 32], moved[TS_TMPDIR_MAX + 64], name[TS_TMPDIR_MAX + 64];
	char err[256];
	unsigned other = 0, reopens = 0, i;
	pid_t pid;
	int status;

	(void)state;
	snprintf(path, sizeof(path), "%s/audit.log", ts_tmpdir);
	/* 64 KiB files, 99 kept: ~3 MB of records rotate a few dozen times. */
	assert_int_equal(audit_sink_open(&s, path, 64 << 10, AUDIT_SINK_KEEP_MAX, err, sizeof(err)), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(s.sock);
		writer(s.loader_end);
	}
	for (;;) {
		audit_sink_drain(&s);
		/* logrotate: the file moves away, then SIGHUP. */
		if (s.records > (reopens + 1) * (RECORDS / 4) && reopens < 3) {
			snprintf(moved, sizeof(moved), "%s.logrotate-%u", path, reopens);
			assert_int_equal(rename(path, moved), 0);
			assert_int_equal(audit_sink_reopen(&s), 0);
			reopens++;
		}
		if (s.records >= RECORDS)
			break;
		usleep(1000);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	audit_sink_drain(&s);
	assert_int_equal(s.records, RECORDS);
	assert_int_equal(s.refused + s.failed, 0);
	assert_true(s.rotations > 10);
	assert_true(reopens >= 1);
	assert_int_equal(s.reopens, reopens);
	audit_sink_close(&s);

	count_file(path, seen, &other);
	for (i = 1; i <= AUDIT_SINK_KEEP_MAX; i++) {
		snprintf(name, sizeof(name), "%s.%u", path, i);
		count_file(name, seen, &other);
	}
	for (i = 0; i < reopens; i++) {
		snprintf(name, sizeof(name), "%s.logrotate-%u", path, i);
		count_file(name, seen, &other);
	}
	for (i = 0; i < RECORDS; i++)
		assert_int_equal(seen[i], 1);
	assert_true(other >= reopens);
}

/* Retention: only keep rotated files, the oldest replaced; a size bound holds. */
static void test_rotation_keeps_n(void **state)
{
	struct audit_sink s;
	char path[TS_TMPDIR_MAX + 32], name[TS_TMPDIR_MAX + 64], err[256];
	char line[128];
	struct stat st;
	int fds[2], i, n;

	(void)state;
	snprintf(path, sizeof(path), "%s/keep.log", ts_tmpdir);
	assert_int_equal(audit_sink_open(&s, path, 4096, 3, err, sizeof(err)), 0);
	fds[1] = s.loader_end;
	for (i = 0; i < 2000; i++) {
		n = snprintf(line, sizeof(line), "{\"event\":\"x\",\"seq\":%d}\n", i);
		assert_int_equal(send(fds[1], line, (size_t)n, 0), n);
		if (i % 100 == 0)
			audit_sink_drain(&s);
	}
	/* A message that is not one line is refused, and counted. */
	assert_int_equal(send(fds[1], "{\"a\":1}\n{\"b\":2}\n", 16, 0), 16);
	audit_sink_drain(&s);
	assert_int_equal(s.refused, 1);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= 4096 + 512);
	for (i = 1; i <= 3; i++) {
		snprintf(name, sizeof(name), "%s.%d", path, i);
		assert_int_equal(stat(name, &st), 0);
		assert_true(st.st_size <= 4096 + 512);
	}
	snprintf(name, sizeof(name), "%s.4", path);
	assert_int_equal(stat(name, &st), -1);
	audit_sink_close(&s);
}

/*
 * A SIGHUP whose drain rotates first: the rotation closes the file and opens
 * the next at the lowest free descriptor, which may be below the old one; the
 * reopen then gets the old number for its new file, and must not close it as
 * "the previous file". A hole below the file's descriptor makes that happen
 * every time; the records after the reopen must land in the new file.
 */
static void test_reopen_after_rotation(void **state)
{
	struct audit_sink s;
	char path[TS_TMPDIR_MAX + 32], moved[TS_TMPDIR_MAX + 48], err[256], line[128];
	char buf[4096];
	int hole, i, n, fd;
	ssize_t got;

	(void)state;
	snprintf(path, sizeof(path), "%s/hup.log", ts_tmpdir);
	snprintf(moved, sizeof(moved), "%s/hup.log.moved", ts_tmpdir);
	hole = dup(0);
	assert_true(hole >= 0);
	assert_int_equal(audit_sink_open(&s, path, 1024, 2, err, sizeof(err)), 0);
	assert_true(s.file_fd > hole);
	close(hole);
	/* More than the size bound, not yet drained: the reopen's drain rotates. */
	for (i = 0; i < 100; i++) {
		n = snprintf(line, sizeof(line), "{\"event\":\"x\",\"seq\":%d}\n", i);
		assert_int_equal(send(s.loader_end, line, (size_t)n, 0), n);
	}
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(audit_sink_reopen(&s), 0);
	assert_true(s.rotations >= 1);
	assert_int_equal(fcntl(s.file_fd, F_GETFD), FD_CLOEXEC);
	assert_int_equal(send(s.loader_end, "{\"event\":\"after\"}\n", 18, 0), 18);
	audit_sink_drain(&s);
	assert_int_equal(s.failed + s.refused, 0);
	audit_sink_close(&s);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(got > 0);
	buf[got] = '\0';
	assert_non_null(strstr(buf, "audit_reopened"));
	assert_non_null(strstr(buf, "{\"event\":\"after\"}\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rotation_under_sighup),
		cmocka_unit_test(test_rotation_keeps_n),
		cmocka_unit_test(test_reopen_after_rotation),
	};

	return cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
}
