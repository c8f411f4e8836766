/* The configuration file: its lines go through the option table (the same
 * conversions and messages as the command line), a bad line is named
 * FILE:LINE: KEY, the command line wins over the file, and a reload keeps
 * what cannot change at run time. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "settings/config_file.h"
#include "supervisor/config_reload.h"
#include "supervisor/options.h"

static char tmpdir[64], conf[128];

static void write_conf(const char *text)
{
	FILE *f = fopen(conf, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int apply(const char *text, const struct option_spec *specs, char *err, size_t errlen)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", text);
	err[0] = '\0';
	return config_file_apply(buf, strlen(buf), "t.conf", specs, err, errlen);
}

static void test_lines(void **state)
{
	unsigned u = 0;
	bool flag = true;
	const char *s = NULL;
	const struct option_spec specs[] = {
		{.name = "interval", .kind = OPTION_UINT, .dest = &u, .min = 1, .max = 100,
		 .unit = " seconds"},
		{.name = "no-throttle", .kind = OPTION_FLAG, .dest = &flag},
		{.name = "name", .kind = OPTION_STRING, .dest = &s},
		{.name = "help", .kind = OPTION_FLAG, .flags = OPTION_CLI_ONLY},
		{.name = NULL},
	};
	char err[256], text[128];

	snprintf(text, sizeof(text), "# c\n\n  interval = 7  \r\nno-throttle=off\nname = \" a b \"");
	assert_int_equal(config_file_apply(text, strlen(text), "t.conf", specs, err, sizeof(err)), 0);
	assert_int_equal(u, 7);
	assert_false(flag);
	assert_string_equal(s, " a b ");

	assert_int_equal(apply("\ninterval = 0\n", specs, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:2: interval: invalid value '0': expected 1 to 100 seconds");
	assert_int_equal(apply("inter = 3\n", specs, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "t.conf:1: inter: unknown key");
	assert_int_equal(apply("help = true\n", specs, err, sizeof(err)), -EPERM);
	assert_string_equal(err, "t.conf:1: help: only accepted on the command line");
	assert_int_equal(apply("no-throttle = maybe\n", specs, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:1: no-throttle: invalid value 'maybe': expected true or false");
	assert_int_equal(apply("# ok\ninterval 3\n", specs, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:2: expected KEY = VALUE");
	assert_int_equal(apply("= 3\n", specs, err, sizeof(err)), -EINVAL);
	assert_int_equal(apply("Interval = 3\n", specs, err, sizeof(err)), -EINVAL);
	assert_int_equal(apply("name = \"x\n", specs, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:1: name: unbalanced quotes");
}

static int load(struct supervisor_options *o, char *err, size_t errlen, ...)
{
	static char *argv[32];
	int argc = 0;
	va_list ap;
	char *a;

	argv[argc++] = "lowprof";
	va_start(ap, errlen);
	while ((a = va_arg(ap, char *)) != NULL)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	supervisor_options_defaults(o);
	o->output_dir = tmpdir;
	o->default_config_path = conf;
	err[0] = '\0';
	return supervisor_options_load(argc, argv, o, err, errlen);
}

static void test_precedence(void **state)
{
	struct supervisor_options o;
	char err[256];

	write_conf("cpu-budget = 2.5\ninterval = 5\npid = 1\nunwind = fp\n");
	assert_int_equal(load(&o, err, sizeof(err), "--interval=7", NULL), 0);
	assert_string_equal(o.config_used, conf);
	assert_true(o.cpu_budget_pct == 2.5);
	assert_int_equal(o.interval_s, 7); /* the command line wins */
	assert_int_equal(o.unwind, SETTINGS_UNWIND_FP);
	assert_int_equal(o.npids, 1);
	supervisor_options_free(&o);
	/* A repeatable option on the command line replaces the file's list. */
	assert_int_equal(load(&o, err, sizeof(err), "-p", "1", "-p", "1", NULL), 0);
	assert_int_equal(o.npids, 2);
	supervisor_options_free(&o);
	/* --config names another file; a missing one is an error. */
	assert_int_equal(load(&o, err, sizeof(err), "--config=/nonexistent/x.conf", NULL), 2);
	assert_string_equal(err, "/nonexistent/x.conf: No such file or directory");
	supervisor_options_free(&o);
	write_conf("interval = 5\nfrequency = 0\n");
	assert_int_equal(load(&o, err, sizeof(err), NULL), 2);
	if (strstr(err, ":2: frequency: invalid frequency '0'") == NULL)
		fail_msg("unexpected error '%s'", err);
	supervisor_options_free(&o);
	/* The cross-option checks apply to the file too. */
	write_conf("otlp-compression = none\n");
	assert_int_equal(load(&o, err, sizeof(err), NULL), 2);
	assert_string_equal(err, "--otlp-* options need --otlp-endpoint");
	supervisor_options_free(&o);
	/* Header values never come from a file. */
	write_conf("otlp-endpoint = http://127.0.0.1:4318\notlp-header = a=b\n");
	assert_int_equal(load(&o, err, sizeof(err), NULL), 2);
	supervisor_options_free(&o);
}

static void test_show(void **state)
{
	struct supervisor_options o;
	char err[256], out[8192];
	FILE *f;
	size_t n;

	write_conf("cpu-budget = 2.5\n");
	assert_int_equal(load(&o, err, sizeof(err), "--no-throttle", NULL), 0);
	f = fmemopen(out, sizeof(out) - 1, "w");
	supervisor_options_print(&o, f);
	n = ftell(f);
	fclose(f);
	out[n] = '\0';
	assert_non_null(strstr(out, "\ncpu-budget = 2.5\n"));
	assert_non_null(strstr(out, "\nno-throttle = true\n"));
	assert_non_null(strstr(out, "\n# duration = (none)\n"));
	assert_null(strstr(out, "help"));
	supervisor_options_free(&o);
	/* What show prints, read back as a file, gives the same settings. */
	write_conf(out);
	if (load(&o, err, sizeof(err), NULL) != 0)
		fail_msg("show's output read back: %s", err);
	assert_true(o.cpu_budget_pct == 2.5);
	assert_true(o.no_throttle);
	supervisor_options_free(&o);
}

static void test_reload(void **state)
{
	struct supervisor_options o, *next;
	char err[256];
	bool changed;

	write_conf("cpu-budget = 2.5\nringbuf-kb = 4096\n");
	assert_int_equal(load(&o, err, sizeof(err), NULL), 0);
	/* A bad file: nothing changes. */
	write_conf("cpu-budget = 0\n");
	assert_null(config_reload_load(&o, &changed, err, sizeof(err)));
	assert_non_null(strstr(err, ":1: cpu-budget:"));
	assert_true(o.cpu_budget_pct == 2.5);
	/* The budget applies, the ring's size waits for a restart. */
	write_conf("cpu-budget = 3\nringbuf-kb = 16\ninterval = 2\n");
	next = config_reload_load(&o, &changed, err, sizeof(err));
	assert_non_null(next);
	assert_true(changed);
	assert_true(next->cpu_budget_pct == 3);
	assert_int_equal(next->interval_s, 2);
	assert_int_equal(next->ringbuf_kb, 4096);
	assert_null(o.config_text); /* moved: kept values may point into it */
	supervisor_options_free(next);
	free(next);
	/* The same file again: nothing to apply. */
	write_conf("cpu-budget = 2.5\nringbuf-kb = 4096\n");
	next = config_reload_load(&o, &changed, err, sizeof(err));
	assert_non_null(next);
	assert_false(changed);
	supervisor_options_free(next);
	free(next);
	supervisor_options_free(&o);
	assert_true(config_reload_applies("otlp-endpoint"));
	assert_false(config_reload_applies("output"));
}

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/lowprof-test-config-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	snprintf(conf, sizeof(conf), "%s/lowprof.conf", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	unlink(conf);
	rmdir(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_reload),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
