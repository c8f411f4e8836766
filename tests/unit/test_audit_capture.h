/*
 * Reading back what the loader audited into a memfd (audit_log_open(dup(fd)))
 * in the tests of the audit's producers. Include after <cmocka.h>.
 */
#ifndef LOWPROF_TESTS_TEST_AUDIT_CAPTURE_H
#define LOWPROF_TESTS_TEST_AUDIT_CAPTURE_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Everything audited so far, NUL-terminated; the caller frees it. */
static inline char *test_audit_text(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)len + 1);

	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
	return buf;
}

/* Occurrences of needle in the audit log. */
static inline int test_audit_count(int fd, const char *needle)
{
	char *text = test_audit_text(fd), *p = text;
	int n = 0;

	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	free(text);
	return n;
}

#endif
