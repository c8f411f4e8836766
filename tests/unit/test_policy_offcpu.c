/*
 * The throttle policy's off-CPU probability, driven by traces: one struct
 * policy_signals per control interval (docs/THROTTLE.md, "Off-CPU").
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bpf/offcpu.h"
#include "controller/policy.h"

struct run {
	struct policy_settings set;
	struct policy_state state;
	struct policy_decision d;
};

/* -F 19, budget 1%, off-CPU at the user's max_ppm (0: without --off-cpu). */
static void run_init(struct run *r, uint32_t max_ppm)
{
	char err[160];

	memset(r, 0, sizeof(*r));
	policy_settings_default(&r->set, 19);
	r->set.cpu_budget_pct = 1.0;
	r->set.offcpu_max_ppm = max_ppm;
	assert_int_equal(policy_settings_check(&r->set, err, sizeof(err)), 0);
	policy_state_init(&r->state, &r->set);
}

/* One interval on an idle host: the whole overhead, and off-CPU's part of it;
 * ran false: the switch program was detached the whole interval. */
static uint32_t step(struct run *r, double overhead, bool ran, double offcpu)
{
	struct policy_signals sig = {
		.host_valid = true, .host_cpu_pct = 5.0,
		.stats_valid = true, .drop_pct = 0.0, .overhead_pct = overhead,
		.offcpu_ran = ran, .offcpu_overhead_pct = offcpu,
	};

	policy_step(&r->set, &r->state, &sig, &r->d);
	return r->d.throttle.offcpu_prob_ppm;
}

/* One interval with the switch signals: the host's switches per CPU-second
 * and, when floor_ns > 0, the floor the program measured (it was attached). */
static struct throttle step_switches(struct run *r, double overhead, double offcpu,
				     double switches_per_cpu_s, double floor_ns)
{
	struct policy_signals sig = {
		.host_valid = true, .host_cpu_pct = 50.0,
		.stats_valid = true, .drop_pct = 0.0, .overhead_pct = overhead,
		.offcpu_ran = floor_ns > 0, .offcpu_overhead_pct = offcpu,
		.host_switches_valid = true, .host_switches_per_cpu_s = switches_per_cpu_s,
		.offcpu_floor_valid = floor_ns > 0, .offcpu_floor_ns = floor_ns,
	};

	policy_step(&r->set, &r->state, &sig, &r->d);
	return r->d.throttle;
}

/*
 * A storm of 285,000 switches per CPU-second (570,000 a second on one CPU of
 * two) at a floor of 70 ns: 2% of the host before any stack is taken. The
 * first interval measures the floor and is over; from then on the program
 * stays parked while the storm lasts, whatever the probability, and comes
 * back once the rate has been low for the wait.
 */
static void test_floor_parks_during_storm(void **unused)
{
	struct run r;
	struct throttle t;
	int i;

	(void)unused;
	run_init(&r, LOWPROF_OFFCPU_PPM_ONE);
	/* Before any floor is known, a rate alone parks nothing. */
	t = step_switches(&r, 0.1, 0.0, 285000, 0);
	assert_false(t.offcpu_parked);
	t = step_switches(&r, 2.6, 2.5, 285000, 70);
	assert_true(t.offcpu_parked);
	assert_non_null(strstr(r.d.reason, "switch program parked"));
	/* Parked: the budget step is given back, the program stays off. */
	for (i = 0; i < 20; i++) {
		t = step_switches(&r, 0.05, 0.0, 285000, 0);
		assert_true(t.offcpu_parked);
	}
	assert_int_equal(t.frequency_hz, 19);
	/* The storm ends: 1,000 switches per CPU-second x 70 ns is 0.007%. Back
	 * after offcpu_raise_intervals such intervals, not before. */
	for (i = 1; i < (int)r.set.offcpu_raise_intervals; i++) {
		t = step_switches(&r, 0.05, 0.0, 1000, 0);
		assert_true(t.offcpu_parked);
	}
	t = step_switches(&r, 0.05, 0.0, 1000, 0);
	assert_false(t.offcpu_parked);
	assert_non_null(strstr(r.d.reason, "switch program back"));
}

/* Back into a storm at once: parked again, and the next wait is twice as long. */
static void test_floor_park_backoff(void **unused)
{
	struct run r;
	struct throttle t;
	uint32_t wait;
	int i;

	(void)unused;
	run_init(&r, LOWPROF_OFFCPU_PPM_ONE);
	t = step_switches(&r, 2.6, 2.5, 285000, 70);
	assert_true(t.offcpu_parked);
	for (i = 0; i < (int)r.set.offcpu_raise_intervals; i++)
		t = step_switches(&r, 0.05, 0.0, 1000, 0);
	assert_false(t.offcpu_parked);
	wait = r.state.offcpu_park_wait;
	t = step_switches(&r, 2.6, 2.5, 285000, 70);
	assert_true(t.offcpu_parked);
	assert_int_equal(r.state.offcpu_park_wait, wait * 2);
	for (i = 1; i < (int)(wait * 2); i++) {
		t = step_switches(&r, 0.05, 0.0, 1000, 0);
		assert_true(t.offcpu_parked);
	}
	t = step_switches(&r, 0.05, 0.0, 1000, 0);
	assert_false(t.offcpu_parked);
	/* A first interval back that stays low resets the wait. */
	t = step_switches(&r, 0.05, 0.01, 1000, 70);
	assert_false(t.offcpu_parked);
	assert_int_equal(r.state.offcpu_park_wait, r.set.offcpu_raise_intervals);
}

/* A rate between the marks holds whatever is decided; without a ctxt line
 * (host_switches_valid false) nothing changes either; without --off-cpu and
 * under --no-throttle nothing is ever parked. */
static void test_floor_between_marks_and_unknowns(void **unused)
{
	struct policy_signals sig = {.host_valid = true, .stats_valid = true};
	struct run r;
	struct throttle t;

	(void)unused;
	run_init(&r, LOWPROF_OFFCPU_PPM_ONE);
	/* 0.6% predicted (budget 1%: high 0.5, low 0.25): parked. */
	t = step_switches(&r, 0.7, 0.65, 85714, 70);
	assert_true(t.offcpu_parked);
	/* 0.3%: between the marks, held for as long as it lasts. */
	for (int i = 0; i < 30; i++)
		assert_true(step_switches(&r, 0.05, 0.0, 42857, 0).offcpu_parked);
	policy_step(&r.set, &r.state, &sig, &r.d);
	assert_true(r.d.throttle.offcpu_parked);

	run_init(&r, 0);
	assert_false(step_switches(&r, 2.6, 2.5, 285000, 70).offcpu_parked);
	run_init(&r, LOWPROF_OFFCPU_PPM_ONE);
	r.set.no_throttle = true;
	assert_false(step_switches(&r, 2.6, 2.5, 285000, 70).offcpu_parked);
}

static void test_off_without_flag(void **unused)
{
	struct run r;

	(void)unused;
	run_init(&r, 0);
	assert_int_equal(r.state.current.offcpu_prob_ppm, 0);
	/* Whatever it measures, nothing asks for a probability. */
	assert_int_equal(step(&r, 5.0, true, 4.0), 0);
	assert_int_equal(step(&r, 0.1, true, 0.0), 0);
}

static void test_storm_cuts_at_once(void **unused)
{
	struct run r;

	(void)unused;
	run_init(&r, LOWPROF_OFFCPU_PPM_ONE);
	assert_int_equal(r.state.current.offcpu_prob_ppm, LOWPROF_OFFCPU_PPM_ONE);
	/* 5.5% of capacity for off-CPU, budget 1%: one cut by 32 (5.5 / 32 < 0.25),
	 * not five halvings over five intervals. */
	assert_int_equal(step(&r, 6.0, true, 5.5), LOWPROF_OFFCPU_PPM_ONE / 32);
	assert_true(r.d.changed);
	assert_non_null(strstr(r.d.reason, "probability 100% -> 3.125%"));
	/* The budget step is taken too: the throttle steps down (the loader then
	 * detaches the switch program). */
	assert_non_null(strstr(r.d.reason, "halve frequency"));
	assert_int_equal(r.d.throttle.frequency_hz, 9);
	/* Detached: nothing measured, the probability holds however low the cost. */
	assert_int_equal(step(&r, 0.1, false, 0.0), LOWPROF_OFFCPU_PPM_ONE / 32);
	/* The budget step was given back (overhead under half the budget): re-attached
	 * at the cut probability, within the budget. */
	assert_int_equal(r.d.throttle.frequency_hz, 19);
	assert_int_equal(step(&r, 0.45, true, 0.3), LOWPROF_OFFCPU_PPM_ONE / 32);
	assert_int_equal(r.d.throttle.frequency_hz, 19);
}

static void test_cost_between_marks_holds(void **unused)
{
	struct run r;
	int i;

	(void)unused;
	run_init(&r, LOWPROF_OFFCPU_PPM_ONE);
	/* Between a quarter and half of the budget: neither cut nor raised. */
	for (i = 0; i < 50; i++)
		assert_int_equal(step(&r, 0.45, true, 0.4), LOWPROF_OFFCPU_PPM_ONE);
	assert_int_equal(step(&r, 0.9, true, 0.6), LOWPROF_OFFCPU_PPM_ONE / 4);
	for (i = 0; i < 50; i++)
		assert_int_equal(step(&r, 0.45, true, 0.3), LOWPROF_OFFCPU_PPM_ONE / 4);
}

static void test_raise_slowly_with_backoff(void **unused)
{
	struct run r;
	uint32_t p;
	int i;

	(void)unused;
	run_init(&r, LOWPROF_OFFCPU_PPM_ONE);
	p = step(&r, 1.2, true, 1.1); /* 1.1 / 8 < 0.25: cut by 8 */
	assert_int_equal(p, 125000);
	/* Calm: 5 intervals per doubling. */
	for (i = 0; i < 4; i++)
		assert_int_equal(step(&r, 0.2, true, 0.1), 125000);
	assert_int_equal(step(&r, 0.2, true, 0.1), 250000);
	assert_non_null(strstr(r.d.reason, "probability 12.5% -> 25%"));
	/* The doubling overshoots: cut in the next interval, and the wait doubles. */
	assert_int_equal(step(&r, 0.8, true, 0.6), 62500);
	assert_int_equal(r.state.offcpu_wait, 10);
	for (i = 0; i < 9; i++)
		assert_int_equal(step(&r, 0.2, true, 0.1), 62500);
	assert_int_equal(step(&r, 0.2, true, 0.1), 125000);
	/* This one holds: the wait is back to 5. */
	assert_int_equal(step(&r, 0.2, true, 0.1), 125000);
	assert_int_equal(r.state.offcpu_wait, 5);
	/* A calm off-CPU part but an overhead at half the budget or more: no raise. */
	for (i = 0; i < 20; i++)
		assert_int_equal(step(&r, 0.6, true, 0.1), 125000);
	/* Detached intervals neither count nor reset the calm run. */
	for (i = 0; i < 3; i++)
		step(&r, 0.2, true, 0.1);
	for (i = 0; i < 10; i++)
		assert_int_equal(step(&r, 0.1, false, 0.0), 125000);
	step(&r, 0.2, true, 0.1);
	assert_int_equal(step(&r, 0.2, true, 0.1), 250000);
}

static void test_floor_and_ceiling(void **unused)
{
	struct run r;
	int i;

	(void)unused;
	run_init(&r, LOWPROF_OFFCPU_PPM_ONE);
	/* A cost that does not fall (the per-switch part does not scale): the cuts
	 * stop at the floor. */
	for (i = 0; i < 10; i++)
		step(&r, 3.0, true, 2.0);
	assert_int_equal(r.d.throttle.offcpu_prob_ppm, r.set.offcpu_min_ppm);
	/* The user's 30% is the ceiling of every doubling. */
	run_init(&r, 300000);
	assert_int_equal(step(&r, 0.8, true, 0.6), 75000);
	for (i = 0; i < 5; i++)
		step(&r, 0.2, true, 0.1);
	assert_int_equal(r.d.throttle.offcpu_prob_ppm, 150000);
	for (i = 0; i < 5; i++)
		step(&r, 0.2, true, 0.1);
	assert_int_equal(r.d.throttle.offcpu_prob_ppm, 300000);
	for (i = 0; i < 30; i++)
		assert_int_equal(step(&r, 0.2, true, 0.1), 300000);
	/* A user probability under the floor: the floor is the user's. */
	run_init(&r, 50);
	for (i = 0; i < 5; i++)
		assert_int_equal(step(&r, 3.0, true, 2.0), 50);
}

static void test_no_throttle_fixed(void **unused)
{
	struct run r;

	(void)unused;
	run_init(&r, 500000);
	r.set.no_throttle = true;
	assert_int_equal(step(&r, 5.0, true, 4.0), 500000);
	assert_int_equal(step(&r, 5.0, true, 4.0), 500000);
}

static void test_settings_check_offcpu(void **unused)
{
	struct policy_settings set;
	char err[256];

	(void)unused;
	policy_settings_default(&set, 19);
	set.offcpu_max_ppm = LOWPROF_OFFCPU_PPM_ONE + 1;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);
	policy_settings_default(&set, 19);
	set.offcpu_low_share = set.offcpu_high_share;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);
	policy_settings_default(&set, 19);
	set.offcpu_min_ppm = 0;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_without_flag),
		cmocka_unit_test(test_storm_cuts_at_once),
		cmocka_unit_test(test_cost_between_marks_holds),
		cmocka_unit_test(test_raise_slowly_with_backoff),
		cmocka_unit_test(test_floor_and_ceiling),
		cmocka_unit_test(test_no_throttle_fixed),
		cmocka_unit_test(test_settings_check_offcpu),
		cmocka_unit_test(test_floor_parks_during_storm),
		cmocka_unit_test(test_floor_park_backoff),
		cmocka_unit_test(test_floor_between_marks_and_unknowns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
