/* lowprof's command line: every bad value is refused with status 2 and a
 * message naming the problem; good values land in the options. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/proc_stat.h"
#include "supervisor/options.h"

static char tmpdir[64];

static int parse(struct supervisor_options *o, char *err, size_t errlen, ...)
{
	char *argv[32];
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
	err[0] = '\0';
	return supervisor_options_parse(argc, argv, o, err, errlen);
}

static void expect_usage_error(const char *needle, ...)
{
	struct supervisor_options o;
	char *argv[32], err[256];
	int argc = 0, rc;
	va_list ap;
	char *a;

	argv[argc++] = "lowprof";
	va_start(ap, needle);
	while ((a = va_arg(ap, char *)) != NULL)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	supervisor_options_defaults(&o);
	o.output_dir = tmpdir;
	err[0] = '\0';
	rc = supervisor_options_parse(argc, argv, &o, err, sizeof(err));
	assert_int_equal(rc, 2);
	if (strstr(err, needle) == NULL)
		fail_msg("error '%s' does not mention '%s'", err, needle);
	assert_null(strchr(err, '\n'));
}

static void test_defaults(void **state)
{
	struct supervisor_options o;
	char err[256];

	assert_int_equal(parse(&o, err, sizeof(err), NULL), 0);
	assert_int_equal(o.frequency_hz, 19);
	assert_int_equal(o.ringbuf_kb, 2048);
	assert_int_equal(o.interval_s, 10);
	assert_true(o.duration_s == 0);
	assert_int_equal(o.npids, 0);
	assert_int_equal(o.control_interval_s, 1);
	assert_true(o.cpu_budget_pct == 1.5);
	assert_false(o.no_throttle);
}

static void test_good_values(void **state)
{
	struct supervisor_options o;
	char err[256], pid[16];
	unsigned long long start;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_int_equal(parse(&o, err, sizeof(err), "-d", "2.5", "-F", "99", "-p", pid, "--pid", "1",
			       "--ringbuf-kb", "64", "--interval", "3", "--max-depth", "16",
			       "--cpu-budget", "0.5", "--control-interval", "2", "--no-throttle", NULL), 0);
	assert_true(o.cpu_budget_pct == 0.5);
	assert_int_equal(o.control_interval_s, 2);
	assert_true(o.no_throttle);
	assert_true(o.duration_s == 2.5);
	assert_int_equal(o.frequency_hz, 99);
	assert_int_equal(o.npids, 2);
	assert_int_equal(o.pids[0], getpid());
	assert_int_equal(o.pids[1], 1);
	/* Each target named by its pid and start time (/proc/PID/stat's 22nd field). */
	assert_int_equal(o.ntargets, 2);
	assert_int_equal(o.targets[0].pid, getpid());
	assert_int_equal(o.targets[1].pid, 1);
	assert_int_equal(proc_stat_field(getpid(), PROC_STAT_STARTTIME, &start), 0);
	assert_true(o.targets[0].start == start);
	assert_int_equal(proc_stat_field(1, PROC_STAT_STARTTIME, &start), 0);
	assert_true(o.targets[1].start == start);
	assert_int_equal(o.ringbuf_kb, 64);
	assert_int_equal(o.interval_s, 3);
	assert_int_equal(o.max_depth, 16);
}

static void *spin_thread(void *arg)
{
	*(volatile pid_t *)arg = (pid_t)syscall(SYS_gettid);
	pause();
	return NULL;
}

/* A thread's id (as `top -H` shows a busy thread) stands for its process:
 * the BPF program samples thread groups, so the thread's own id would
 * match nothing. */
static void test_thread_id_is_its_process(void **state)
{
	volatile pid_t tid = 0;
	struct supervisor_options o;
	char err[256], arg[16];
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, spin_thread, (void *)&tid), 0);
	while (tid == 0)
		usleep(1000);
	assert_int_not_equal(tid, getpid());
	snprintf(arg, sizeof(arg), "%d", (int)tid);
	assert_int_equal(parse(&o, err, sizeof(err), "-p", arg, NULL), 0);
	assert_int_equal(o.ntargets, 1);
	assert_int_equal(o.targets[0].pid, getpid());
	assert_int_equal(o.pids[0], tid); /* as given, what a reload compares */
	pthread_cancel(t);
	pthread_join(t, NULL);
}

static void test_help_and_version(void **state)
{
	struct supervisor_options o;
	char err[256];

	assert_int_equal(parse(&o, err, sizeof(err), "--help", NULL), 0);
	assert_true(o.show_help);
	assert_int_equal(parse(&o, err, sizeof(err), "--version", NULL), 0);
	assert_true(o.show_version);
}

static void test_bad_duration(void **state)
{
	expect_usage_error("invalid duration '-5'", "-d", "-5", NULL);
	expect_usage_error("invalid duration 'ten'", "--duration", "ten", NULL);
	expect_usage_error("invalid duration '0'", "--duration=0", NULL);
	expect_usage_error("invalid duration '5s'", "-d", "5s", NULL);
}

static void test_bad_frequency(void **state)
{
	char above[32];
	FILE *f;
	unsigned max = 0;

	expect_usage_error("invalid frequency '0'", "-F", "0", NULL);
	expect_usage_error("invalid frequency 'fast'", "-F", "fast", NULL);
	f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	if (f != NULL) {
		assert_int_equal(fscanf(f, "%u", &max), 1);
		fclose(f);
		snprintf(above, sizeof(above), "%u", max + 1);
		expect_usage_error("perf_event_max_sample_rate", "-F", above, NULL);
	}
}

static void test_bad_pid(void **state)
{
	expect_usage_error("no process with pid 2147483647", "-p", "2147483647", NULL);
	expect_usage_error("invalid pid 'abc'", "-p", "abc", NULL);
	expect_usage_error("invalid pid '-1'", "-p", "-1", NULL);
}

static void test_bad_output_dir(void **state)
{
	char file[128];
	FILE *f;

	/* A path under a regular file can never be created. */
	snprintf(file, sizeof(file), "%s/plainfile", tmpdir);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	strcat(file, "/sub");
	expect_usage_error("cannot create output directory", "-o", file, NULL);
	expect_usage_error("not writable", "-o", "/proc/self", NULL);
}

static void test_bad_other_values(void **state)
{
	expect_usage_error("--ringbuf-kb '1000'", "--ringbuf-kb", "1000", NULL);
	expect_usage_error("--ringbuf-kb '0'", "--ringbuf-kb", "0", NULL);
	expect_usage_error("--interval '0'", "--interval", "0", NULL);
	expect_usage_error("--max-depth '500'", "--max-depth", "500", NULL);
	expect_usage_error("--cpu-budget '0'", "--cpu-budget", "0", NULL);
	expect_usage_error("--cpu-budget '101'", "--cpu-budget", "101", NULL);
	expect_usage_error("--cpu-budget 'x'", "--cpu-budget", "x", NULL);
	expect_usage_error("--control-interval '0'", "--control-interval", "0", NULL);
	expect_usage_error("--restart-backoff '5'", "--restart-backoff", "5", NULL);
	expect_usage_error("is below --restart-backoff", "--restart-backoff", "500",
			   "--restart-backoff-max", "100", NULL);
	expect_usage_error("--unwind 'frames'", "--unwind", "frames", NULL);
	expect_usage_error("--unwind-table-mb '0'", "--unwind-table-mb", "0", NULL);
	expect_usage_error("--liveness-timeout '0'", "--liveness-timeout", "0", NULL);
	expect_usage_error("--run-dir 'relative'", "--run-dir", "relative", NULL);
	/* --otlp-*: the client's own validation, before anything starts. */
	expect_usage_error("scheme must be http or https", "--otlp-endpoint", "ftp://x", NULL);
	expect_usage_error("not a URL", "--otlp-endpoint", "", NULL);
	expect_usage_error("--otlp-compression", "--otlp-endpoint", "http://127.0.0.1:4318",
			   "--otlp-compression", "zstd", NULL);
	expect_usage_error("--otlp-header", "--otlp-endpoint", "http://127.0.0.1:4318",
			   "--otlp-header", "NoEquals", NULL);
	expect_usage_error("invalid character in the name", "--otlp-endpoint", "http://127.0.0.1:4318",
			   "--otlp-header", "Bad Name=x", NULL);
	expect_usage_error("--otlp-ca", "--otlp-endpoint", "https://127.0.0.1:4318",
			   "--otlp-ca", "/nonexistent/ca.pem", NULL);
	expect_usage_error("not https", "--otlp-endpoint", "http://127.0.0.1:4318",
			   "--otlp-ca", "/etc/hostname", NULL);
	expect_usage_error("--otlp-client-key needs --otlp-client-cert", "--otlp-endpoint",
			   "https://127.0.0.1:4318", "--otlp-client-key", "/etc/hostname", NULL);
	expect_usage_error("invalid --otlp-queue-mb '0'", "--otlp-endpoint", "http://127.0.0.1:4318",
			   "--otlp-queue-mb", "0", NULL);
	expect_usage_error("need --otlp-endpoint", "--otlp-queue-mb", "2", NULL);
	expect_usage_error("unknown option '--frobnicate'", "--frobnicate", NULL);
	expect_usage_error("unknown option '-x'", "-x", NULL);
	expect_usage_error("needs a value", "-F", NULL);
	expect_usage_error("unexpected argument 'extra'", "extra", NULL);
}

/* `-- COMMAND [ARG]...`: the options end at the first `--`; what follows is
 * the command, whatever it looks like; `--` alone is refused. */
static void test_command(void **state)
{
	struct supervisor_options o;
	char err[256];

	assert_int_equal(parse(&o, err, sizeof(err), "-F", "49", NULL), 0);
	assert_null(o.command);
	assert_int_equal(parse(&o, err, sizeof(err), "-F", "49", "--", "make", "-F", "5", "--", NULL), 0);
	assert_int_equal(o.frequency_hz, 49);
	assert_non_null(o.command);
	assert_string_equal(o.command[0], "make");
	assert_string_equal(o.command[1], "-F");
	assert_string_equal(o.command[2], "5");
	assert_string_equal(o.command[3], "--");
	assert_null(o.command[4]);
	/* The options alone are kept for a reload. */
	assert_int_equal(o.argc, 3);
	assert_int_equal(parse(&o, err, sizeof(err), "--", "true", NULL), 0);
	assert_string_equal(o.command[0], "true");
	assert_int_equal(o.frequency_hz, 19);
	expect_usage_error("'--' must be followed by a command", "--", NULL);
	expect_usage_error("'--' must be followed by a command", "-F", "49", "--", NULL);
	/* A word before `--` is still no command. */
	expect_usage_error("unexpected argument 'make'", "make", "--", "x", NULL);
}

static void test_creates_output_dir(void **state)
{
	struct supervisor_options o;
	char err[256], nested[128];
	struct stat st;

	snprintf(nested, sizeof(nested), "%s/a/b/c", tmpdir);
	assert_int_equal(parse(&o, err, sizeof(err), "-o", nested, NULL), 0);
	assert_int_equal(stat(nested, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_good_values),
		cmocka_unit_test(test_thread_id_is_its_process),
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_bad_duration),
		cmocka_unit_test(test_bad_frequency),
		cmocka_unit_test(test_bad_pid),
		cmocka_unit_test(test_bad_output_dir),
		cmocka_unit_test(test_bad_other_values),
		cmocka_unit_test(test_creates_output_dir),
		cmocka_unit_test(test_command),
	};
	int rc;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/lowprof-opt.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	/* Only this run's directory: another copy of the test may be running. */
	{
		char cmd[sizeof(tmpdir) + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "cleanup failed\n");
	}
	return rc;
}
