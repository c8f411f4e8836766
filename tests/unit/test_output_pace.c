/* The pacing of the files' writes (exporter/output_pace.h): which job runs in
 * which slot, how often a heavy one is written, what is counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/mono_clock.h"
#include "exporter/output_pace.h"

#define MS NSEC_PER_MSEC

static void test_allowance(void **state)
{
	(void)state;
	/* 1.5% of 2 CPUs over 1 s is 30 ms; a quarter of it 7.5 ms. */
	assert_int_equal(output_pace_allowance_ns(1.5, 2, 1.0, 0.25), 7500 * 1000);
	assert_int_equal(output_pace_allowance_ns(1.5, 4, 2.0, 0.5), 60 * MS);
	assert_true(output_pace_allowance_ns(100.0, 2, 1.0, 0.25) == UINT64_MAX);
}

/* Runs the slot's jobs as the exporter does, each costing cost[job]; returns
 * a bit mask of the jobs run. */
static unsigned run_slot(struct output_pace *p, const uint64_t cost[OUTPUT_PACE_N], uint64_t now)
{
	unsigned ran = 0;
	int j;

	output_pace_slot(p);
	while ((j = output_pace_next(p)) >= 0) {
		ran |= 1u << j;
		output_pace_done(p, (enum output_pace_job)j, cost[j], cost[j], now, false);
	}
	return ran;
}

#define BIT(j) (1u << (j))

/* Never measured: a file is expected to cost twice the merge; the merge
 * itself, first, runs alone unless it is the slot's first job. */
static void test_first_interval(void **state)
{
	static const uint64_t cost[OUTPUT_PACE_N] = {1 * MS, 1 * MS, 1 * MS, 1 * MS, 0, 1 * MS};
	static const uint64_t heavy[OUTPUT_PACE_N] = {6 * MS, 3 * MS, 3 * MS, 3 * MS, 0, 1 * MS};
	struct output_pace p;

	(void)state;
	/* A cheap merge: its files are expected cheap, all in the first slot. */
	output_pace_init(&p, 10 * MS, 10, OUTPUT_PACE_MAX_EVERY);
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	assert_int_equal(output_pace_interval(&p), 5);
	assert_int_equal(run_slot(&p, cost, 1), BIT(OUTPUT_PACE_MERGE) | BIT(OUTPUT_PACE_PPROF) |
						       BIT(OUTPUT_PACE_FOLDED) | BIT(OUTPUT_PACE_SVG) |
						       BIT(OUTPUT_PACE_SUMMARY));
	/* A merge of 6 ms: each file expected at 12 ms, more than the slot
	 * holds, runs first in a slot of its own until measured (3 ms). */
	output_pace_init(&p, 10 * MS, 10, OUTPUT_PACE_MAX_EVERY);
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	output_pace_interval(&p);
	assert_int_equal(run_slot(&p, heavy, 1), BIT(OUTPUT_PACE_MERGE));
	assert_int_equal(run_slot(&p, heavy, 2), BIT(OUTPUT_PACE_PPROF));
	assert_int_equal(run_slot(&p, heavy, 3), BIT(OUTPUT_PACE_FOLDED));
	assert_int_equal(run_slot(&p, heavy, 4), BIT(OUTPUT_PACE_SVG));
	assert_int_equal(run_slot(&p, heavy, 5), BIT(OUTPUT_PACE_SUMMARY));
	assert_false(output_pace_pending(&p));
	/* Measured: merge 6 + pprof 3 fit a slot, folded 3 + svg 3 + summary 1 the next. */
	assert_int_equal(output_pace_interval(&p), 5);
	assert_int_equal(run_slot(&p, heavy, 6), BIT(OUTPUT_PACE_MERGE) | BIT(OUTPUT_PACE_PPROF));
	assert_int_equal(run_slot(&p, heavy, 7), BIT(OUTPUT_PACE_FOLDED) | BIT(OUTPUT_PACE_SVG) |
						       BIT(OUTPUT_PACE_SUMMARY));
	assert_false(output_pace_pending(&p));
	output_pace_init(&p, 10 * MS, 10, OUTPUT_PACE_MAX_EVERY);
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	output_pace_interval(&p);
	run_slot(&p, cost, 0);
	/* Measured and cheap: the next interval's jobs all fit one slot. */
	assert_int_equal(output_pace_interval(&p), 5);
	assert_int_equal(run_slot(&p, cost, 6), BIT(OUTPUT_PACE_MERGE) | BIT(OUTPUT_PACE_PPROF) |
						       BIT(OUTPUT_PACE_FOLDED) | BIT(OUTPUT_PACE_SVG) |
						       BIT(OUTPUT_PACE_SUMMARY));
	assert_int_equal(p.slots_over, 0);
	assert_int_equal(p.max_slot_ns, 5 * MS);
}

/* Jobs that do not fit together are spread over slots, in order, and no slot
 * takes more than the allowance. */
static void test_spread_within_allowance(void **state)
{
	static const uint64_t cost[OUTPUT_PACE_N] = {4 * MS, 5 * MS, 5 * MS, 8 * MS, 0, 1 * MS};
	struct output_pace p;
	int i;

	(void)state;
	output_pace_init(&p, 10 * MS, 10, OUTPUT_PACE_MAX_EVERY);
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	/* Measure each once. */
	output_pace_interval(&p);
	for (i = 0; i < 5; i++)
		run_slot(&p, cost, 1);
	p.max_slot_ns = 0;
	output_pace_interval(&p);
	assert_int_equal(run_slot(&p, cost, 2), BIT(OUTPUT_PACE_MERGE) | BIT(OUTPUT_PACE_PPROF));
	assert_int_equal(run_slot(&p, cost, 3), BIT(OUTPUT_PACE_FOLDED));
	assert_int_equal(run_slot(&p, cost, 4), BIT(OUTPUT_PACE_SVG) | BIT(OUTPUT_PACE_SUMMARY));
	assert_false(output_pace_pending(&p));
	assert_int_equal(p.max_slot_ns, 9 * MS);
	assert_int_equal(p.slots_over, 0);
	assert_true(p.deferred > 0);
	/* Nothing pending: a slot runs nothing. */
	assert_int_equal(run_slot(&p, cost, 5), 0);
}

/* A job costing more than its share of an interval is written every N
 * intervals (N = cost / share, at most max_every); the others every one. */
static void test_heavy_less_often(void **state)
{
	/* allowance 1 ms x 10 slots shared by 5 jobs: 2 ms each. */
	uint64_t cost[OUTPUT_PACE_N] = {1 * MS, 5 * MS, 7 * MS, 1 * MS, 0, 1 * MS / 2};
	struct output_pace p;
	unsigned folded = 0, pprof = 0, mask;
	int iv, s;

	(void)state;
	output_pace_init(&p, 1 * MS, 10, 6);
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	for (iv = 0; iv < 13; iv++) {
		output_pace_interval(&p);
		for (s = 0; s < 10; s++) {
			mask = run_slot(&p, cost, (uint64_t)iv * 10 + (uint64_t)s + 1);
			folded += (mask & BIT(OUTPUT_PACE_FOLDED)) != 0;
			pprof += (mask & BIT(OUTPUT_PACE_PPROF)) != 0;
			/* One job at most per slot here: each costs the allowance or more. */
			assert_true(mask == 0 || (mask & (mask - 1)) == 0);
		}
		assert_false(output_pace_pending(&p));
	}
	assert_int_equal(p.job[OUTPUT_PACE_FOLDED].every, 4);
	/* profile.pb.gz, what a restart reloads, every interval however heavy. */
	assert_int_equal(p.job[OUTPUT_PACE_PPROF].every, 1);
	assert_int_equal(pprof, 13);
	/* Intervals 1, 5, 9, 13. */
	assert_int_equal(folded, 4);
	/* Bounded: however heavy, at least every max_every intervals. */
	cost[OUTPUT_PACE_FOLDED] = 1000 * MS;
	output_pace_done(&p, OUTPUT_PACE_FOLDED, cost[OUTPUT_PACE_FOLDED], 0, 1, true);
	assert_int_equal(p.job[OUTPUT_PACE_FOLDED].every, 6);
	/* The estimate comes down a quarter of the way per cheaper run. */
	output_pace_done(&p, OUTPUT_PACE_FOLDED, 200 * MS, 0, 1, true);
	assert_int_equal(p.job[OUTPUT_PACE_FOLDED].cost_ns, 800 * MS);
	assert_int_equal(p.job[OUTPUT_PACE_FOLDED].max_cost_ns, 1000 * MS);
}

/* Stop and SIGHUP: everything pending, and forced runs are not slot costs. */
static void test_force(void **state)
{
	struct output_pace p;
	int j, n = 0;

	(void)state;
	output_pace_init(&p, 1 * MS, 10, 6);
	output_pace_force(&p);
	assert_int_equal(p.forced, 1);
	for (j = 0; j < OUTPUT_PACE_N; j++) {
		assert_true(p.job[j].pending);
		output_pace_done(&p, (enum output_pace_job)j, 50 * MS, 50 * MS, 7, true);
		n++;
	}
	assert_int_equal(n, OUTPUT_PACE_N);
	assert_false(output_pace_pending(&p));
	assert_int_equal(p.slot_spent_ns, 0);
	assert_int_equal(p.slots_over, 0);
	/* A disabled job is never made pending. */
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	output_pace_force(&p);
	assert_false(p.job[OUTPUT_PACE_OFFCPU].pending);
}

/* A job paused across slots: each piece is its slot's cost; the whole is the
 * job's cost. The roll's cost is the slot's too. */
static void test_pieces_and_charge(void **state)
{
	struct output_pace p;

	(void)state;
	output_pace_init(&p, 10 * MS, 10, 6);
	output_pace_interval(&p);
	output_pace_slot(&p);
	output_pace_charge(&p, 2 * MS);
	assert_int_equal(output_pace_next(&p), OUTPUT_PACE_MERGE); /* first job of the slot */
	output_pace_done(&p, OUTPUT_PACE_MERGE, 3 * MS, 3 * MS, 1, false);
	output_pace_slot(&p);
	assert_int_equal(output_pace_next(&p), OUTPUT_PACE_PPROF);
	output_pace_piece(&p, 11 * MS);
	assert_int_equal(p.slots_over, 1);
	output_pace_slot(&p);
	output_pace_done(&p, OUTPUT_PACE_PPROF, 20 * MS, 9 * MS, 2, false);
	assert_int_equal(p.job[OUTPUT_PACE_PPROF].last_cost_ns, 20 * MS);
	assert_int_equal(p.slot_spent_ns, 9 * MS);
	assert_int_equal(p.max_slot_ns, 11 * MS);
	assert_int_equal(p.pieces, 1);
	assert_int_equal(p.slots_over, 1);
}

/* A held job is not run, is counted, and stays due: the next interval that
 * does not hold it writes it. One not pending is left alone. */
static void test_hold(void **state)
{
	static const uint64_t cost[OUTPUT_PACE_N] = {1 * MS, 1 * MS, 1 * MS, 1 * MS, 0, 1 * MS};
	struct output_pace p;

	(void)state;
	output_pace_init(&p, 10 * MS, 10, OUTPUT_PACE_MAX_EVERY);
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	output_pace_interval(&p);
	run_slot(&p, cost, 1);
	assert_int_equal(output_pace_interval(&p), 5);
	output_pace_hold(&p, OUTPUT_PACE_MERGE);
	output_pace_hold(&p, OUTPUT_PACE_FOLDED);
	assert_int_equal(p.unchanged, 2);
	assert_int_equal(run_slot(&p, cost, 2),
			 BIT(OUTPUT_PACE_PPROF) | BIT(OUTPUT_PACE_SVG) | BIT(OUTPUT_PACE_SUMMARY));
	/* Nothing pending: holding is a no-op, not counted. */
	output_pace_hold(&p, OUTPUT_PACE_FOLDED);
	assert_int_equal(p.unchanged, 2);
	/* Still due: written at the next interval. */
	assert_int_equal(output_pace_interval(&p), 5);
	assert_true(p.job[OUTPUT_PACE_FOLDED].pending);
	assert_int_equal(run_slot(&p, cost, 3) & BIT(OUTPUT_PACE_FOLDED), BIT(OUTPUT_PACE_FOLDED));
}

/* At rest the interval goes on rather than closing, at most max_every
 * intervals in all, never before the files were first written; while it
 * goes on, every file's staleness counts the intervals passed. */
static void test_extend(void **state)
{
	static const uint64_t cost[OUTPUT_PACE_N] = {1 * MS, 1 * MS, 1 * MS, 1 * MS, 0, 1 * MS};
	const unsigned files = BIT(OUTPUT_PACE_MERGE) | BIT(OUTPUT_PACE_PPROF) |
			       BIT(OUTPUT_PACE_FOLDED) | BIT(OUTPUT_PACE_SVG) |
			       BIT(OUTPUT_PACE_SUMMARY);
	struct output_pace p;

	(void)state;
	output_pace_init(&p, 10 * MS, 10, 3);
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	/* A new run's first interval closes, trickle or not: its files appear. */
	assert_false(output_pace_extend(&p, true, 1));
	output_pace_interval(&p);
	assert_int_equal(run_slot(&p, cost, 1), files);
	/* Busy: it closes. */
	assert_false(output_pace_extend(&p, false, 1));
	/* A trickle: it goes on, twice, then closes at the third end. */
	assert_true(output_pace_extend(&p, true, 1));
	assert_true(output_pace_extend(&p, true, 2));
	assert_int_equal(p.job[OUTPUT_PACE_SVG].since, 2);
	assert_int_equal(p.job[OUTPUT_PACE_PPROF].since, 2);
	assert_false(output_pace_extend(&p, true, 3));
	assert_int_equal(p.extended, 2);
	/* Nothing became due while it went on; the roll makes every file due. */
	assert_false(output_pace_pending(&p));
	output_pace_interval(&p);
	assert_int_equal(p.job[OUTPUT_PACE_SVG].since, 3);
	assert_int_equal(run_slot(&p, cost, 2), files);
	/* A file written every 3 intervals, last written just now, is due at
	 * the roll after two intervals gone on: 3 intervals later. */
	p.job[OUTPUT_PACE_SVG].every = 3;
	assert_true(output_pace_extend(&p, true, 1));
	assert_true(output_pace_extend(&p, true, 2));
	output_pace_interval(&p);
	assert_true(p.job[OUTPUT_PACE_SVG].pending);
}

/*
 * An interval's jobs that take more slots than it has (pauses, a budget so
 * small that each job needs a slot of its own): none starves. Each job that
 * waited through a roll goes before those made due at it, the most waited
 * first, so summary.json, last in order, is written; before, the merge,
 * due again at every roll and first, took the first slot of every interval
 * and summary.json was not written for a whole run.
 */
static void test_no_starving(void **state)
{
	static const uint64_t cost[OUTPUT_PACE_N] = {2 * MS, 2 * MS, 2 * MS, 2 * MS, 0, 2 * MS};
	unsigned runs[OUTPUT_PACE_N] = {0}, last[OUTPUT_PACE_N] = {0}, gap[OUTPUT_PACE_N] = {0};
	struct output_pace p;
	unsigned iv, s, mask;
	int j;

	(void)state;
	/* 1 ms a slot: one job a slot; the interval's 10 slots keep every
	 * file's period at 1, but only 2 slots run before each roll. */
	output_pace_init(&p, 1 * MS, 10, OUTPUT_PACE_MAX_EVERY);
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	for (iv = 1; iv <= 15; iv++) {
		output_pace_interval(&p);
		for (s = 0; s < 2; s++) {
			mask = run_slot(&p, cost, iv);
			for (j = 0; j < OUTPUT_PACE_N; j++) {
				if (!(mask & BIT(j)))
					continue;
				runs[j]++;
				if (iv - last[j] > gap[j])
					gap[j] = iv - last[j];
				last[j] = iv;
			}
		}
	}
	for (j = 0; j < OUTPUT_PACE_N; j++) {
		if (j == OUTPUT_PACE_OFFCPU)
			continue;
		/* 30 slots for 5 jobs: 6 each, give or take one. */
		assert_true(runs[j] >= 5);
		assert_true(gap[j] <= 4);
	}
}

static void test_json(void **state)
{
	struct output_pace p;
	char buf[2048];
	uint64_t start = 1000 * NSEC_PER_SEC;

	(void)state;
	output_pace_init(&p, 7500 * 1000, 10, 6);
	output_pace_enable(&p, OUTPUT_PACE_OFFCPU, false);
	/* The longest stretch between two pause points is kept, per job. */
	output_pace_stretch(&p, OUTPUT_PACE_PPROF, 2 * MS);
	output_pace_stretch(&p, OUTPUT_PACE_PPROF, MS / 2);
	output_pace_stretch(&p, OUTPUT_PACE_MERGE, 4 * MS);
	output_pace_done(&p, OUTPUT_PACE_PPROF, 3 * MS, 3 * MS, start + 12500 * MS, false);
	assert_true(output_pace_json(&p, start, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\"max_stretch_ms\": 2.000, \"writes\": 1}"));
	assert_non_null(strstr(buf, "\"merge_max_stretch_ms\": 4.000"));
	assert_non_null(strstr(buf, "\"allowance_ms\": 7.500"));
	assert_non_null(strstr(buf, "\"profile.pb.gz\": {\"written_s\": 12.500, \"every_intervals\": 1, "
				    "\"cost_ms\": 3.000"));
	assert_non_null(strstr(buf, "\"profile.folded\": {\"written_s\": null"));
	assert_null(strstr(buf, "offcpu"));
	assert_int_equal(output_pace_json(&p, start, buf, 40), -1);
	output_pace_init(&p, UINT64_MAX, 1, 6);
	assert_true(output_pace_json(&p, start, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\"allowance_ms\": null"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_starving),
		cmocka_unit_test(test_allowance),
		cmocka_unit_test(test_first_interval),
		cmocka_unit_test(test_spread_within_allowance),
		cmocka_unit_test(test_heavy_less_often),
		cmocka_unit_test(test_force),
		cmocka_unit_test(test_pieces_and_charge),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_extend),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
