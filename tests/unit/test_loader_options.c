/* The loader's command line as the supervisor writes it: the -p targets,
 * each --pid with its --pid-start, and what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ipc/lowprof_fds.h"
#include "loader/loader_options.h"

static struct loader_options opt;

static int parse(char *err, size_t errlen, ...)
{
	char *argv[16] = {"lowprof-loader"};
	int argc = 1;
	va_list ap;
	char *a;

	va_start(ap, errlen);
	while ((a = va_arg(ap, char *)) != NULL && argc < 15)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	err[0] = '\0';
	return loader_options_parse(argc, argv, &opt, err, errlen);
}

static void test_targets_with_start_times(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(parse(err, sizeof(err), "--pid=10", "--pid-start=500", "--pid=20",
			       "--pid-start=700", NULL), 0);
	assert_int_equal(opt.npids, 2);
	assert_int_equal(opt.npid_starts, 2);
	assert_int_equal(opt.pids[0], 10);
	assert_int_equal(opt.pids[1], 20);
	assert_int_equal(opt.pid_starts[0], 500);
	assert_int_equal(opt.pid_starts[1], 700);
	/* Without start times: the pids alone (a loader run by hand). */
	assert_int_equal(parse(err, sizeof(err), "--pid=10", NULL), 0);
	assert_int_equal(opt.npids, 1);
	assert_int_equal(opt.npid_starts, 0);
}

static void test_start_times_refused(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(parse(err, sizeof(err), "--pid=10", "--pid=20", "--pid-start=5", NULL),
			 LOWPROF_EXIT_USAGE);
	assert_non_null(strstr(err, "1 --pid-start for 2 --pid"));
	assert_int_equal(parse(err, sizeof(err), "--pid-start=5", NULL), LOWPROF_EXIT_USAGE);
	assert_non_null(strstr(err, "1 --pid-start for 0 --pid"));
	assert_int_equal(parse(err, sizeof(err), "--pid=10", "--pid-start=0", NULL), LOWPROF_EXIT_USAGE);
	assert_non_null(strstr(err, "pid-start"));
	assert_int_equal(parse(err, sizeof(err), "--pid=10", "--pid-start=12x", NULL),
			 LOWPROF_EXIT_USAGE);
	assert_non_null(strstr(err, "pid-start"));
}

/* --follow-pid names one of the --pid targets (a command's), nothing else. */
static void test_follow_pid(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(parse(err, sizeof(err), "--pid=10", "--pid=20", "--follow-pid=20", NULL), 0);
	assert_int_equal(opt.follow_pid, 20);
	assert_int_equal(parse(err, sizeof(err), "--pid=10", NULL), 0);
	assert_int_equal(opt.follow_pid, 0);
	assert_int_equal(parse(err, sizeof(err), "--pid=10", "--follow-pid=11", NULL),
			 LOWPROF_EXIT_USAGE);
	assert_non_null(strstr(err, "--follow-pid 11 is not one of the --pid targets"));
	assert_int_equal(parse(err, sizeof(err), "--follow-pid=11", NULL), LOWPROF_EXIT_USAGE);
	assert_non_null(strstr(err, "--follow-pid 11"));
	assert_int_equal(parse(err, sizeof(err), "--pid=10", "--follow-pid=0", NULL),
			 LOWPROF_EXIT_USAGE);
	assert_non_null(strstr(err, "follow-pid"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_targets_with_start_times),
		cmocka_unit_test(test_start_times_refused),
		cmocka_unit_test(test_follow_pid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
