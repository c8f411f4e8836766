/*
 * `lowprof audit`'s parser: the loader's own lines parse; malformed lines
 * (truncated, trailing text, bad escapes, too deep, too many fields, too long)
 * are refused with a reason, and the table goes on past them.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/audit_read.h"

static int parse(const char *s, struct audit_entry *e, char *err, size_t errlen)
{
	return audit_read_parse_line(s, strlen(s), e, err, errlen);
}

static void test_loader_line(void **state)
{
	static struct audit_entry e;
	char err[160];
	const char *line =
		"{\"time\":\"2025-06-01T12:00:00.000001Z\",\"event\":\"map_update\",\"component\":\"controller\","
		"\"pid\":812,\"uid\":65534,\"map\":\"run_config\",\"key\":\"00000000\","
		"\"old\":{\"max_depth\":64,\"period_ns\":52631578},\"new\":{\"max_depth\":32},"
		"\"cpus\":[0,1],\"x\":-1.5e3,\"t\":true,\"n\":null,\"s\":\"a\\\"b\\\\c\\u0041\\n\","
		"\"result\":\"ok\",\"errno\":0}";

	(void)state;
	assert_int_equal(parse(line, &e, err, sizeof(err)), 0);
	assert_string_equal(audit_entry_get(&e, "event"), "map_update");
	assert_string_equal(audit_entry_get(&e, "uid"), "65534");
	assert_string_equal(audit_entry_get(&e, "old"), "{\"max_depth\":64,\"period_ns\":52631578}");
	assert_string_equal(audit_entry_get(&e, "cpus"), "[0,1]");
	assert_string_equal(audit_entry_get(&e, "s"), "a\"b\\cA\n");
	assert_string_equal(audit_entry_get(&e, "n"), "null");
	assert_null(audit_entry_get(&e, "missing"));
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"[1,2]",
		"{\"a\":1",
		"{\"a\":1}x",
		"{\"a\":1,}",
		"{\"a\" 1}",
		"{a:1}",
		"{\"a\":\"\\q\"}",
		"{\"a\":\"\\u00g1\"}",
		"{\"a\":01}",
		"{\"a\":1.}",
		"{\"a\":tru}",
		"{\"a\":\"unterminated}",
		"{\"a\":[[[[[[1]]]]]]}",
		"{\"a\":\"tab\there\"}",
		"{\"a\":1}{\"b\":2}",
	};
	static struct audit_entry e;
	char err[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (parse(bad[i], &e, err, sizeof(err)) == 0)
			fail_msg("accepted malformed line %zu: %s", i, bad[i]);
		assert_true(err[0] != '\0');
	}
}

static void test_bounds(void **state)
{
	static struct audit_entry e;
	static char line[AUDIT_READ_MAX_LINE + 64];
	char err[160];
	size_t o = 0;
	int i;

	(void)state;
	/* More fields than the bound. */
	o += (size_t)snprintf(line + o, sizeof(line) - o, "{");
	for (i = 0; i <= AUDIT_READ_MAX_FIELDS; i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s\"f%d\":%d", i ? "," : "", i, i);
	snprintf(line + o, sizeof(line) - o, "}");
	assert_int_equal(parse(line, &e, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "fields"));
	/* A string value longer than a field holds. */
	memset(line, 'a', sizeof(line));
	memcpy(line, "{\"k\":\"", 6);
	line[AUDIT_READ_VALUE_MAX + 20] = '"';
	line[AUDIT_READ_VALUE_MAX + 21] = '}';
	line[AUDIT_READ_VALUE_MAX + 22] = '\0';
	assert_int_equal(parse(line, &e, err, sizeof(err)), -1);
	/* A line above the line bound. */
	assert_int_equal(audit_read_parse_line(line, AUDIT_READ_MAX_LINE + 1, &e, err, sizeof(err)), -1);
}

/* The table goes on past malformed lines and counts them. */
static void test_print(void **state)
{
	static char big[AUDIT_READ_MAX_LINE * 2];
	char *out_buf = NULL, *err_buf = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *in, *out, *errout;
	int bad;

	(void)state;
	memset(big, 'x', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	in = tmpfile();
	assert_non_null(in);
	fputs("{\"time\":\"t1\",\"event\":\"attach\",\"component\":\"loader\",\"pid\":1,\"uid\":0,\"cpu\":0,"
	      "\"result\":\"ok\",\"errno\":0}\n", in);
	fputs("{\"broken\n", in);
	fputs(big, in);
	fputs("{\"time\":\"t2\",\"event\":\"request_refused\",\"component\":\"controller\",\"pid\":2,"
	      "\"uid\":65534,\"request\":\"set_throttle\",\"result\":\"error\",\"errno\":22}\n", in);
	rewind(in);
	out = open_memstream(&out_buf, &out_len);
	errout = open_memstream(&err_buf, &err_len);
	bad = audit_read_print(in, out, errout);
	fclose(in);
	fclose(out);
	fclose(errout);
	assert_int_equal(bad, 2);
	assert_non_null(strstr(out_buf, "attach"));
	assert_non_null(strstr(out_buf, "request_refused"));
	assert_non_null(strstr(out_buf, "controller[2] uid 65534"));
	assert_non_null(strstr(out_buf, "error (Invalid argument)"));
	assert_non_null(strstr(err_buf, "line 2: malformed"));
	assert_non_null(strstr(err_buf, "line 3: malformed: longer than"));
	free(out_buf);
	free(err_buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loader_line),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
