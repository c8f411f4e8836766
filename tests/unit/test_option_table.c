/* The table-driven option parser: each kind's conversion and range, the
 * error lines every program prints, repeatable options, operands, stops. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "settings/option_specs.h"
#include "settings/option_table.h"

struct values {
	bool flag, help, seen;
	unsigned u, kb, e;
	int pids[3];
	size_t npids;
	size_t z;
	double d, positive;
	const char *s;
};

static int check_not_42(const struct option_spec *spec, const char *value, void *slot, char *err,
			size_t errlen)
{
	if (*(const int *)slot == 42) {
		snprintf(err, errlen, "no process with pid 42");
		return -ESRCH;
	}
	return 0;
}

static int check_no_dots(const struct option_spec *spec, const char *value, void *slot, char *err,
			 size_t errlen)
{
	return strstr(value, "..") != NULL ? -EINVAL : 0;
}

static const char *const colours[] = {"red", "green", "blue", NULL};

/* Parses "prog ARGS... NULL" with a table over v; returns the parser's result. */
static int parse(struct values *v, char *err, size_t errlen, int *operands, ...)
{
	const struct option_spec specs[] = {
		{.name = "flag", .short_name = 'f', .kind = OPTION_FLAG, .dest = &v->flag},
		{.name = "count", .short_name = 'c', .kind = OPTION_UINT, .dest = &v->u, .min = 1,
		 .max = 86400, .unit = " seconds"},
		SETTINGS_OPT_RINGBUF_KB(&v->kb),
		{.name = "colour", .kind = OPTION_ENUM, .dest = &v->e, .names = colours,
		 .seen = &v->seen},
		{.name = "pid", .short_name = 'p', .kind = OPTION_INT, .dest = v->pids, .min = 1,
		 .max = 0x7fffffff, .count = &v->npids, .max_count = 3, .label = "pid", .expect = "",
		 .check = check_not_42},
		{.name = "bytes", .kind = OPTION_SIZE, .dest = &v->z, .min = 1024,
		 .max = (double)(1ULL << 40)},
		SETTINGS_OPT_CPU_BUDGET(&v->d),
		{.name = "duration", .kind = OPTION_DOUBLE, .dest = &v->positive, .min = 0, .max = 10,
		 .flags = OPTION_ABOVE_MIN, .label = "duration", .expect = "a positive number of seconds"},
		{.name = "path", .kind = OPTION_STRING, .dest = &v->s, .check = check_no_dots},
		{.name = "help", .short_name = 'h', .kind = OPTION_FLAG, .dest = &v->help,
		 .flags = OPTION_STOP},
		{.name = NULL},
	};
	struct option_parser p = {.specs = specs, .first = 1, .hint = " (see prog --help)",
				  .operands = operands};
	char *argv[32];
	int argc = 0;
	va_list ap;
	char *a;

	argv[argc++] = "prog";
	va_start(ap, operands);
	while ((a = va_arg(ap, char *)) != NULL)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	memset(v, 0, sizeof(*v));
	err[0] = '\0';
	return option_table_parse(&p, argc, argv, err, errlen);
}

#define EXPECT_ERROR(line, ...)                                                                  \
	do {                                                                                     \
		assert_int_equal(parse(&v, err, sizeof(err), NULL, __VA_ARGS__, NULL), -EINVAL); \
		assert_string_equal(err, line);                                                  \
	} while (0)

static void test_values(void **state)
{
	struct values v;
	char err[256];

	(void)state;
	if (parse(&v, err, sizeof(err), NULL, "-f", "--count=86400", "--ringbuf-kb", "64",
		  "--colour=blue", "-p", "7", "--pid=8", "--bytes", "2048", "--cpu-budget", "0.01",
		  "--duration=0.5", "--path", "/a/b", NULL) != 0)
		fail_msg("%s", err);
	assert_true(v.flag);
	assert_int_equal(v.u, 86400);
	assert_int_equal(v.kb, 64);
	assert_int_equal(v.e, 2);
	assert_true(v.seen);
	assert_int_equal(v.npids, 2);
	assert_int_equal(v.pids[0], 7);
	assert_int_equal(v.pids[1], 8);
	assert_int_equal(v.z, 2048);
	assert_true(v.d == 0.01);
	assert_true(v.positive == 0.5);
	assert_string_equal(v.s, "/a/b");
	/* Given again: the last one wins (the loader's wrapper in the tests appends). */
	assert_int_equal(parse(&v, err, sizeof(err), NULL, "-c", "5", "--count", "6", NULL), 0);
	assert_int_equal(v.u, 6);
	assert_false(v.seen);
}

static void test_error_lines(void **state)
{
	struct values v;
	char err[256];

	(void)state;
	EXPECT_ERROR("invalid --count '0': expected 1 to 86400 seconds", "--count", "0");
	EXPECT_ERROR("invalid --count '86401': expected 1 to 86400 seconds", "-c", "86401");
	EXPECT_ERROR("invalid --count '-1': expected 1 to 86400 seconds", "--count=-1");
	EXPECT_ERROR("invalid --count ' 5': expected 1 to 86400 seconds", "--count= 5");
	EXPECT_ERROR("invalid --count '5s': expected 1 to 86400 seconds", "--count", "5s");
	EXPECT_ERROR("invalid --ringbuf-kb '1000': expected a power of two from 4 to 1048576",
		     "--ringbuf-kb", "1000");
	EXPECT_ERROR("invalid --colour 'pink': expected red, green or blue", "--colour", "pink");
	EXPECT_ERROR("invalid pid 'abc'", "-p", "abc");
	EXPECT_ERROR("no process with pid 42", "--pid", "42");
	EXPECT_ERROR("too many --pid options (at most 3)", "-p", "1", "-p", "2", "-p", "3", "-p", "4");
	EXPECT_ERROR("invalid --bytes '1023': expected 1024 to 1099511627776", "--bytes", "1023");
	EXPECT_ERROR("invalid --cpu-budget '101': expected a percentage from 0.01 to 100",
		     "--cpu-budget", "101");
	EXPECT_ERROR("invalid --cpu-budget 'x': expected a percentage from 0.01 to 100",
		     "--cpu-budget", "x");
	EXPECT_ERROR("invalid duration '0': expected a positive number of seconds", "--duration", "0");
	EXPECT_ERROR("invalid --path '/a/../b'", "--path", "/a/../b");
	EXPECT_ERROR("unknown option '--frobnicate' (see prog --help)", "--frobnicate");
	EXPECT_ERROR("unknown option '-x' (see prog --help)", "-x");
	/* Inside a cluster: the letter, not the argument before it. */
	EXPECT_ERROR("unknown option '-x' (see prog --help)", "-xf");
	EXPECT_ERROR("unknown option '-x' (see prog --help)", "-fx");
	/* A flag given a value names the argument. */
	EXPECT_ERROR("unknown option '--flag=1' (see prog --help)", "--flag=1");
	EXPECT_ERROR("option '-c' needs a value", "-c");
	EXPECT_ERROR("option '--count' needs a value", "--count");
	EXPECT_ERROR("unexpected argument 'extra' (see prog --help)", "extra");
}

static void test_stop_and_operands(void **state)
{
	struct values v;
	char err[256];
	int operands = -1;

	(void)state;
	/* --help wins over what follows it, not over what came before. */
	assert_int_equal(parse(&v, err, sizeof(err), NULL, "--help", "--frobnicate", NULL),
			 OPTION_TABLE_STOP);
	assert_true(v.help);
	assert_int_equal(parse(&v, err, sizeof(err), NULL, "--frobnicate", "--help", NULL), -EINVAL);
	/* Operands allowed: moved after the options. */
	assert_int_equal(parse(&v, err, sizeof(err), &operands, "one", "-f", "two", NULL), 0);
	assert_true(v.flag);
	assert_int_equal(operands, 2);
	assert_int_equal(parse(&v, err, sizeof(err), &operands, "-f", NULL), 0);
	assert_int_equal(operands, 2);
}

/* After a command word: options from argv[2] on (lowprof status --json). */
static void test_first(void **state)
{
	bool json = false;
	const struct option_spec specs[] = {
		{.name = "json", .kind = OPTION_FLAG, .dest = &json},
		{.name = NULL},
	};
	char *argv[] = {"lowprof", "restart", "loader", "--json", NULL};
	int operands = -1;
	struct option_parser p = {.specs = specs, .first = 2, .operands = &operands};
	char err[128];

	(void)state;
	assert_int_equal(option_table_parse(&p, 4, argv, err, sizeof(err)), 0);
	assert_true(json);
	assert_int_equal(operands, 3);
	assert_string_equal(argv[operands], "loader");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_error_lines),
		cmocka_unit_test(test_stop_and_operands),
		cmocka_unit_test(test_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
