/*
 * Host load: /proc/stat and /proc/pressure/cpu parsing, the aggregate line's
 * ticks and the host's utilisation from their deltas, malformed input
 * refused, and the real files of this machine.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "measure/host_load.h"

static void parse_ok(const char *text, struct host_stat *st)
{
	char err[160] = "";
	int rc = host_load_parse_stat(text, strlen(text), st, err, sizeof(err));

	if (rc != 0)
		fail_msg("parse failed (%d): %s", rc, err);
}

static void parse_bad(const char *text, const char *needle)
{
	struct host_stat st;
	char err[160] = "";
	int rc;

	/* Whatever was there before: a refused snapshot holds nothing. */
	memset(&st, 0xa5, sizeof(st));
	rc = host_load_parse_stat(text, strlen(text), &st, err, sizeof(err));
	if (rc != -EINVAL)
		fail_msg("expected -EINVAL for \"%s\", got %d", text, rc);
	if (strstr(err, needle) == NULL)
		fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
	assert_int_equal(st.ncpus, 0);
	assert_int_equal(st.total.user, 0);
	assert_int_equal(st.total.steal, 0);
	assert_false(st.have_ctxt);
	assert_int_equal(st.ctxt, 0);
}

static const char *const stat_a =
	"cpu  100 0 100 700 100 0 0 0 0 0\n"
	"cpu0 50 0 50 350 50 0 0 0 0 0\n"
	"cpu1 50 0 50 350 50 0 0 0 0 0\n"
	"intr 136767 0 0 0\n"
	"ctxt 303713\n"
	"btime 1764475000\n"
	"processes 2000\n"
	"procs_running 1\n";

/* +100 user +50 system +300 idle +50 iowait +50 steal; guest counters grow too. */
static const char *const stat_b =
	"cpu  200 0 150 1000 150 0 0 50 999 999\n"
	"cpu0 150 0 100 350 50 0 0 0 999 0\n"
	"cpu1 50 0 50 650 100 0 0 50 0 999\n"
	"intr 136999 0 0 0\n";

/* stat_b's CPU times, 550 switches after stat_a's. */
static const char *const stat_b_ctxt =
	"cpu  200 0 150 1000 150 0 0 50 999 999\n"
	"cpu0 150 0 100 350 50 0 0 0 999 0\n"
	"cpu1 50 0 50 650 100 0 0 50 0 999\n"
	"ctxt 304263\n";

static void test_parse_fields(void **unused)
{
	struct host_stat st;

	parse_ok(stat_a, &st);
	/* The cpuN lines are counted; the aggregate's figures (not a CPU's) are kept. */
	assert_int_equal(st.ncpus, 2);
	assert_int_equal(st.total.user, 100);
	assert_int_equal(st.total.system, 100);
	assert_int_equal(st.total.idle, 700);
	assert_int_equal(st.total.iowait, 100);
	assert_true(st.have_ctxt);
	assert_int_equal(st.ctxt, 303713);

	/* Eight fields (no guest columns) are enough; more than ten are tolerated.
	 * CPU numbers need not start at 0 nor follow each other (offline CPUs). */
	parse_ok("cpu 1 2 3 4 5 6 7 8\ncpu3 1 2 3 4 5 6 7 8\ncpu7 1 2 3 4 5 6 7 8\n", &st);
	assert_int_equal(st.total.steal, 8);
	assert_int_equal(st.ncpus, 2);
	assert_false(st.have_ctxt);
	parse_ok("cpu 1 2 3 4 5 6 7 8 9 10 11\ncpu0 1 2 3 4 5 6 7 8 9 10 11", &st);
	assert_int_equal(st.total.softirq, 7);
	assert_int_equal(st.ncpus, 1);
}

/* Which of the aggregate line's fields are busy, which count only in the
 * total: each field a different power of two, so each one's place shows. */
static void test_ticks_of_fields(void **unused)
{
	struct host_stat st;
	struct host_ticks t;

	(void)unused;
	/* user 1, nice 2, system 4, idle 8, iowait 16, irq 32, softirq 64,
	 * steal 128, guest 256, guest_nice 512. */
	parse_ok("cpu  1 2 4 8 16 32 64 128 256 512\n"
		 "cpu0 1 2 4 8 16 32 64 128 256 512\n"
		 "ctxt 77\n",
		 &st);
	host_ticks_of(&st, &t);
	/* Steal is busy; guest and guest_nice are inside user and nice already. */
	assert_int_equal(t.busy, 1 + 2 + 4 + 32 + 64 + 128);
	/* idle and iowait count in the total, not as busy. */
	assert_int_equal(t.total, 1 + 2 + 4 + 8 + 16 + 32 + 64 + 128);
	assert_true(t.have_ctxt);
	assert_int_equal(t.ctxt, 77);

	/* No ctxt line: no switch count to send. */
	parse_ok("cpu  1 2 4 8 16 32 64 128\ncpu0 1 2 4 8 16 32 64 128\n", &st);
	memset(&t, 0xa5, sizeof(t));
	host_ticks_of(&st, &t);
	assert_false(t.have_ctxt);
	assert_int_equal(t.ctxt, 0);
	assert_int_equal(t.busy, 231);
	assert_int_equal(t.total, 255);
}

/* The loader's way: one read an interval, the ticks' deltas to the controller. */
static void test_ticks(void **unused)
{
	struct host_stat a, b, c;
	struct host_ticks ta, tb, tc;
	struct host_load l;
	long hz = sysconf(_SC_CLK_TCK);

	(void)unused;
	parse_ok(stat_a, &a);
	parse_ok(stat_b_ctxt, &b);
	host_ticks_of(&a, &ta);
	host_ticks_of(&b, &tb);
	assert_true(ta.have_ctxt && tb.have_ctxt);
	/* +100 user +50 system +50 steal busy, +300 idle +50 iowait not; the
	 * guest columns' growth ignored. */
	assert_int_equal(tb.busy - ta.busy, 200);
	assert_int_equal(tb.total - ta.total, 550);
	assert_int_equal(tb.ctxt - ta.ctxt, 550);
	assert_true(host_load_of_ticks(tb.busy - ta.busy, tb.total - ta.total, true,
				       tb.ctxt - ta.ctxt, &l));
	assert_float_equal(l.host_cpu_pct, 100.0 * 200 / 550, 1e-9);
	assert_true(l.switches_valid);
	/* 550 jiffies of two CPUs' capacity passed: 550 / hz CPU-seconds. */
	assert_float_equal(l.switches_per_cpu_s, 550.0 / (550.0 / (double)hz), 1e-6);

	/* A snapshot without the line: the rate is unknown, the load is not. */
	parse_ok(stat_b, &c);
	host_ticks_of(&c, &tc);
	assert_false(tc.have_ctxt);
	assert_true(host_load_of_ticks(tc.busy - ta.busy, tc.total - ta.total,
				       ta.have_ctxt && tc.have_ctxt, 0, &l));
	assert_false(l.switches_valid);
	assert_float_equal(l.host_cpu_pct, 100.0 * 200 / 550, 1e-9);
}

/* The host's switch rate: per second of CPU capacity (total ticks / USER_HZ). */
static void test_switch_rate(void **unused)
{
	struct host_load l;
	long hz = sysconf(_SC_CLK_TCK);

	(void)unused;
	/* 400 ticks: 400 / hz CPU-seconds, whatever the number of CPUs. */
	assert_true(host_load_of_ticks(100, 400, true, 1000, &l));
	assert_true(l.switches_valid);
	assert_float_equal(l.switches_per_cpu_s, 1000.0 / (400.0 / (double)hz), 1e-6);
	assert_float_equal(l.host_cpu_pct, 25.0, 1e-9);
	/* None in the interval: a rate of zero, not an unknown one. */
	assert_true(host_load_of_ticks(100, 400, true, 0, &l));
	assert_true(l.switches_valid);
	assert_float_equal(l.switches_per_cpu_s, 0.0, 1e-12);
	/* Unknown: no rate, whatever ctxt_d says; the load all the same. */
	assert_true(host_load_of_ticks(100, 400, false, 1000, &l));
	assert_false(l.switches_valid);
	assert_float_equal(l.switches_per_cpu_s, 0.0, 1e-12);
	assert_float_equal(l.host_cpu_pct, 25.0, 1e-9);

	/* Malformed or repeated: the snapshot is refused, like a bad cpu line. */
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\nctxt x\n", "ctxt line");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\nctxt 5 6\n", "ctxt line");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\nctxt \n", "ctxt line");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\nctxt 5\nctxt 6\n", "ctxt line");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\nctxt 99999999999999999999\n", "ctxt line");
}

/* No ticks in the interval (or none read): the load is unknown, not 0% nor 100%. */
static void test_unknown_total(void **unused)
{
	struct host_load l;

	(void)unused;
	memset(&l, 0xa5, sizeof(l));
	assert_false(host_load_of_ticks(0, 0, true, 10, &l));
	assert_float_equal(l.host_cpu_pct, 0.0, 1e-12);
	assert_false(l.switches_valid);
	/* Busy ticks without a total are no less unknown. */
	assert_false(host_load_of_ticks(5, 0, false, 0, &l));
}

/* The kernel's idle and iowait can step back a little (NO_HZ): the load stays
 * a percentage, never a failure nor above 100%. */
static void test_iowait_dip_tolerated(void **unused)
{
	struct host_stat a, b;
	struct host_ticks ta, tb;
	struct host_load l;

	(void)unused;
	/* +100 user +100 idle -10 iowait: 100 busy of 190. */
	parse_ok("cpu 100 0 0 100 50 0 0 0\ncpu0 100 0 0 100 50 0 0 0\n", &a);
	parse_ok("cpu 200 0 0 200 40 0 0 0\ncpu0 200 0 0 200 40 0 0 0\n", &b);
	host_ticks_of(&a, &ta);
	host_ticks_of(&b, &tb);
	assert_true(host_load_of_ticks(tb.busy - ta.busy, tb.total - ta.total, false, 0, &l));
	assert_float_equal(l.host_cpu_pct, 100.0 * 100 / 190, 1e-9);

	/* A dip larger than idle's growth: busy outgrows the total, all of it busy. */
	assert_true(host_load_of_ticks(120, 100, false, 0, &l));
	assert_float_equal(l.host_cpu_pct, 100.0, 1e-9);
	assert_true(host_load_of_ticks(100, 100, false, 0, &l));
	assert_float_equal(l.host_cpu_pct, 100.0, 1e-9);
}

static void test_malformed(void **unused)
{
	struct host_stat st;
	char err[160];
	/* Not NUL-terminated: the length ends the text mid-number of a later line. */
	static const char cut[] = "cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\ncpu1 1 2 3";

	parse_bad("", "no aggregate cpu line");
	parse_bad("intr 1 2 3\nctxt 5\n", "no aggregate cpu line");
	parse_bad("cpu 1 2 3 4 5 6 7 8\n", "no cpuN lines");
	parse_bad("cpu 1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7 8\n", "has 7 fields, needs at least 8");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7\n", "has 7 fields");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3x 4 5 6 7 8\n", "field 3 is not a number");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1 -2 3 4 5 6 7 8\n", "field 2 is not a number");
	parse_bad("cpu 1 2 3 4 5 6 7 99999999999999999999\ncpu0 1 2 3 4 5 6 7 8\n",
		  "field 8 is not a number");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpux 1 2 3 4 5 6 7 8\n", "neither cpu nor cpuN");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0: 1 2 3 4 5 6 7 8\n", "neither cpu nor cpuN");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n",
		  "cpu0 out of order or repeated");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu1 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n",
		  "out of order");
	parse_bad("cpu0 1 2 3 4 5 6 7 8\ncpu 1 2 3 4 5 6 7 8\n", "out of order");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n",
		  "repeated");
	parse_bad("cpu 1 2 3 4 5 6 7 8\ncpu0 1\t2 3 4 5 6 7 8\n", "not a number");
	/* A later bad line refuses what parsed before it too (ctxt already seen). */
	parse_bad("cpu 1 2 3 4 5 6 7 8\nctxt 9\ncpu0 1 2 3 4 5 6 7 8\ncpu1 1 2 3\n",
		  "has 3 fields");

	assert_int_equal(host_load_parse_stat(cut, sizeof(cut) - 1, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "has 3 fields"));
	/* The same bytes cut before the third line parse fine. */
	assert_int_equal(host_load_parse_stat(cut, 40, &st, err, sizeof(err)), 0);
	assert_int_equal(st.ncpus, 1);
}

static void burn_cpu(double seconds)
{
	struct timespec start;
	struct timespec now;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 100000; i++)
			x = x + (uint64_t)i; /* volatile: each add is done */
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 <
		 seconds);
}

static void test_real_proc_stat(void **unused)
{
	struct host_stat a;
	struct host_stat b;
	struct host_ticks ta, tb;
	struct host_load l;
	char err[160] = "";
	int rc;

	rc = host_load_read_stat("/proc/stat", &a, err, sizeof(err));
	if (rc != 0)
		fail_msg("/proc/stat: %s", err);
	assert_true(a.ncpus >= 1);
	assert_int_equal(a.ncpus, (size_t)sysconf(_SC_NPROCESSORS_ONLN));
	/* One CPU kept busy for 0.3 s: at least a few jiffies pass. */
	burn_cpu(0.3);
	rc = host_load_read_stat("/proc/stat", &b, err, sizeof(err));
	if (rc != 0)
		fail_msg("/proc/stat: %s", err);
	host_ticks_of(&a, &ta);
	host_ticks_of(&b, &tb);
	assert_true(tb.busy > ta.busy && tb.total > ta.total);
	assert_true(host_load_of_ticks(tb.busy - ta.busy, tb.total - ta.total,
				       ta.have_ctxt && tb.have_ctxt, tb.ctxt - ta.ctxt, &l));
	print_message("host %.1f%% over %zu CPUs, %.0f switches/CPU/s\n", l.host_cpu_pct, b.ncpus,
		      l.switches_per_cpu_s);
	assert_true(l.host_cpu_pct > 0.0 && l.host_cpu_pct <= 100.0);
	/* Our burner alone keeps one of the CPUs mostly busy (half of one: margin
	 * for the tick's sampling). */
	assert_true(l.host_cpu_pct >= 50.0 / (double)b.ncpus);
	/* The tick and this process's own reads switch: a rate, small and real. */
	assert_true(l.switches_valid);
	assert_true(l.switches_per_cpu_s > 0.0);
}

static void test_read_from_path(void **unused)
{
	char path[] = "/tmp/lowprof-test-stat-XXXXXX";
	struct host_stat st;
	char err[160] = "";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, stat_a, strlen(stat_a)), (ssize_t)strlen(stat_a));
	close(fd);
	assert_int_equal(host_load_read_stat(path, &st, err, sizeof(err)), 0);
	assert_int_equal(st.ncpus, 2);
	assert_int_equal(st.total.idle, 700);
	unlink(path);

	assert_int_equal(host_load_read_stat("/nonexistent/stat", &st, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/stat"));
}

static void test_pressure(void **unused)
{
	static const char psi[] =
		"some avg10=2.66 avg60=0.63 avg300=0.65 total=4935037\n"
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
	char err[160] = "";
	double v = -1;
	int rc;

	assert_int_equal(host_load_parse_pressure(psi, strlen(psi), &v, err, sizeof(err)), 0);
	assert_float_equal(v, 2.66, 1e-9);
	/* Only "full" (the kernel never prints that alone, but a broken file might). */
	assert_int_equal(host_load_parse_pressure(psi + 53, strlen(psi + 53), &v, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "no \"some\" line"));
#define BAD(text, needle)                                                                    \
	do {                                                                                 \
		assert_int_equal(host_load_parse_pressure(text, strlen(text), &v, err, sizeof(err)), \
				 -EINVAL);                                                   \
		assert_non_null(strstr(err, needle));                                        \
	} while (0)
	BAD("some avg60=0.63 total=1\n", "without avg10");
	BAD("some avg10=abc avg60=0.63\n", "\"abc\" is not a percentage");
	BAD("some avg10= avg60=0.63\n", "is not a percentage");
	BAD("some avg10=101.5 avg60=0.63\n", "\"101.5\" is not a percentage");
	BAD("some avg10=-1 avg60=0.63\n", "is not a percentage");
	BAD("some avg10=nan avg60=0.63\n", "is not a percentage");
#undef BAD

	/* The real file when this kernel has PSI; absent is a valid answer too. */
	rc = host_load_read_pressure("/proc/pressure/cpu", &v, err, sizeof(err));
	if (rc == -ENOENT || rc == -EOPNOTSUPP) {
		print_message("no PSI here: %s\n", err);
	} else {
		if (rc != 0)
			fail_msg("/proc/pressure/cpu: %s", err);
		assert_true(v >= 0.0 && v <= 100.0);
	}
	assert_int_equal(host_load_read_pressure("/nonexistent/cpu", &v, err, sizeof(err)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_ticks_of_fields),
		cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_switch_rate),
		cmocka_unit_test(test_unknown_total),
		cmocka_unit_test(test_iowait_dip_tolerated),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_real_proc_stat),
		cmocka_unit_test(test_read_from_path),
		cmocka_unit_test(test_pressure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
