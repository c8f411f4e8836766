/*
 * The one throttle definition (ipc/throttle.c): tier and unwind-mode names,
 * the default tier table, each tier capped by the one below, and the round
 * trip through the control wire's ThrottleState, strict about unknown values.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ipc/throttle.h"

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(throttle_tier_name(THROTTLE_TIER_HEALTHY), "healthy");
	assert_string_equal(throttle_tier_name(THROTTLE_TIER_HIGH), "high");
	assert_string_equal(throttle_tier_name(THROTTLE_TIER_CRITICAL), "critical");
	assert_string_equal(throttle_tier_name(THROTTLE_TIER_COUNT), "?");
	assert_string_equal(throttle_unwind_name(LOWPROF_UNWIND_DWARF), "dwarf");
	assert_string_equal(throttle_unwind_name(LOWPROF_UNWIND_FP), "fp");
}

static void test_default_table(void **state)
{
	struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT];
	struct throttle t;
	char buf[96];

	(void)state;
	throttle_tiers_default(tiers, 19);
	throttle_for_tier(tiers, THROTTLE_TIER_HEALTHY, &t);
	throttle_describe(&t, buf, sizeof(buf));
	assert_string_equal(buf, "healthy 19 Hz dwarf depth 64 divisor 1");
	throttle_for_tier(tiers, THROTTLE_TIER_HIGH, &t);
	throttle_describe(&t, buf, sizeof(buf));
	assert_string_equal(buf, "high 11 Hz fp depth 48 divisor 1");
	throttle_for_tier(tiers, THROTTLE_TIER_CRITICAL, &t);
	throttle_describe(&t, buf, sizeof(buf));
	assert_string_equal(buf, "critical 5 Hz fp depth 32 divisor 1");
	assert_true(tiers[THROTTLE_TIER_HIGH].enter_cpu_pct == 80.0);
	assert_true(tiers[THROTTLE_TIER_CRITICAL].enter_cpu_pct == 90.0);
	assert_true(THROTTLE_CRITICAL_DROP_PCT == 5.0);

	/* A low -F caps every tier above it, strictly, never below 1 Hz; a
	 * shallow --max-depth caps them all. */
	throttle_tiers_default(tiers, 3);
	tiers[THROTTLE_TIER_HEALTHY].max_depth = 20;
	throttle_for_tier(tiers, THROTTLE_TIER_HIGH, &t);
	assert_int_equal(t.frequency_hz, 2);
	assert_int_equal(t.max_depth, 20);
	throttle_for_tier(tiers, THROTTLE_TIER_CRITICAL, &t);
	assert_int_equal(t.frequency_hz, 1);
	t.paused = true;
	throttle_describe(&t, buf, sizeof(buf));
	assert_string_equal(buf, "critical 1 Hz fp depth 20 divisor 1 paused");
}

static void test_wire_round_trip(void **state)
{
	Lowprof__Ctl__ThrottleState st;
	struct throttle in, out;
	unsigned tier;

	(void)state;
	for (tier = 0; tier < THROTTLE_TIER_COUNT; tier++) {
		in = (struct throttle){tier, 7 + tier, tier == 0 ? LOWPROF_UNWIND_DWARF : LOWPROF_UNWIND_FP,
				       16 * (tier + 1), 1u << tier, tier == 2, 250000u * tier, tier == 1};
		throttle_to_wire(&in, &st);
		assert_int_equal(st.tier, LOWPROF__CTL__TIER__TIER_HEALTHY + (int)tier);
		memset(&out, 0xff, sizeof(out));
		assert_int_equal(throttle_from_wire(&st, &out), 0);
		assert_true(throttle_equal(&in, &out));
	}
	/* Unknown values: refused, but read as the safe side for a reporter. */
	throttle_to_wire(&in, &st);
	st.tier = LOWPROF__CTL__TIER__TIER_UNSPECIFIED;
	st.unwind_mode = LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_DWARF;
	assert_int_equal(throttle_from_wire(&st, &out), -EINVAL);
	assert_int_equal(out.tier, THROTTLE_TIER_CRITICAL);
	assert_int_equal(out.unwind_mode, LOWPROF_UNWIND_DWARF);
	st.tier = (Lowprof__Ctl__Tier)99;
	assert_int_equal(throttle_from_wire(&st, &out), -EINVAL);
	st.tier = LOWPROF__CTL__TIER__TIER_HIGH;
	st.unwind_mode = LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_UNSPECIFIED;
	assert_int_equal(throttle_from_wire(&st, &out), -EINVAL);
	assert_int_equal(out.tier, THROTTLE_TIER_HIGH);
	assert_int_equal(out.unwind_mode, LOWPROF_UNWIND_FP);
}

#define SEC 1000000000ull

/* Quiet: at most a sample a second, nothing lost or recorded off-CPU, at the
 * healthy tier undivided. */
static void test_quiet(void **state)
{
	struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT];
	struct throttle t;

	(void)state;
	throttle_tiers_default(tiers, 19);
	throttle_for_tier(tiers, THROTTLE_TIER_HEALTHY, &t);
	assert_true(throttle_quiet(&t, 0, 0, 0, SEC));
	/* The odd daemon's sample: still nothing to throttle. */
	assert_true(throttle_quiet(&t, 1, 0, 0, SEC));
	assert_false(throttle_quiet(&t, 2, 0, 0, SEC));
	/* A second a sample over a long interval; an interval ticked a quarter early counts whole. */
	assert_true(throttle_quiet(&t, 6, 0, 0, 6 * SEC));
	assert_false(throttle_quiet(&t, 7, 0, 0, 6 * SEC));
	assert_true(throttle_quiet(&t, 1, 0, 0, SEC * 3 / 4));
	assert_false(throttle_quiet(&t, 1, 0, 0, SEC / 4));
	assert_false(throttle_quiet(&t, UINT64_MAX, 0, 0, UINT64_MAX));
	assert_false(throttle_quiet(&t, 0, 1, 0, SEC));
	assert_false(throttle_quiet(&t, 0, 0, 1, SEC));
	/* A lower healthy frequency (the budget's step) is still nothing to decide on. */
	t.frequency_hz = 9;
	assert_true(throttle_quiet(&t, 0, 0, 0, SEC));
	t.sample_divisor = 2;
	assert_false(throttle_quiet(&t, 0, 0, 0, SEC));
	t.sample_divisor = 1;
	/* Parked: each interval's switch rate may let the program back. */
	t.offcpu_prob_ppm = 1000;
	t.offcpu_parked = true;
	assert_false(throttle_quiet(&t, 0, 0, 0, SEC));
	t.offcpu_parked = false;
	assert_true(throttle_quiet(&t, 0, 0, 0, SEC));
	t.paused = true;
	assert_false(throttle_quiet(&t, 0, 0, 0, SEC));
	throttle_for_tier(tiers, THROTTLE_TIER_HIGH, &t);
	assert_false(throttle_quiet(&t, 0, 0, 0, SEC));
	throttle_for_tier(tiers, THROTTLE_TIER_CRITICAL, &t);
	assert_false(throttle_quiet(&t, 0, 0, 0, SEC));
}

/* Quiet intervals in a row lengthen the next: 2, 4, then the ping-bound max. */
static void test_quiet_span(void **state)
{
	(void)state;
	assert_int_equal(throttle_quiet_span(0, 6), 1);
	assert_int_equal(throttle_quiet_span(1, 6), 2);
	assert_int_equal(throttle_quiet_span(2, 6), 4);
	assert_int_equal(throttle_quiet_span(3, 6), 6);
	assert_int_equal(throttle_quiet_span(40, 6), 6);
	assert_int_equal(throttle_quiet_span(UINT32_MAX, 6), 6);
	/* A short ping interval: never below the two intervals of old. */
	assert_int_equal(throttle_quiet_span(1, 1), 2);
	assert_int_equal(throttle_quiet_span(5, 0), 2);
	assert_int_equal(throttle_quiet_span(2, 3), 3);
	/* The max: whole intervals within the ping interval, 2 to 64. */
	assert_int_equal(throttle_quiet_max_intervals(SEC, 6 * SEC), 6);
	assert_int_equal(throttle_quiet_max_intervals(SEC, 6 * SEC - 1), 5);
	assert_int_equal(throttle_quiet_max_intervals(SEC, 2 * SEC), 2);
	assert_int_equal(throttle_quiet_max_intervals(SEC, SEC / 2), 2);
	assert_int_equal(throttle_quiet_max_intervals(SEC / 10, 3600 * SEC), 64);
	assert_int_equal(throttle_quiet_max_intervals(0, 6 * SEC), 2);
}

/* Steady intervals in a row: two intervals each when throttled (a decision
 * within three), lengthening as quiet ones do when fixed (nothing decided). */
static void test_steady_span(void **state)
{
	(void)state;
	assert_int_equal(throttle_steady_span(false, 1, 12), 2);
	assert_int_equal(throttle_steady_span(false, 3, 12), 2);
	assert_int_equal(throttle_steady_span(false, 1000, 12), 2);
	assert_int_equal(throttle_steady_span(true, 0, 12), 2);
	assert_int_equal(throttle_steady_span(true, 1, 12), 2);
	assert_int_equal(throttle_steady_span(true, 2, 12), 4);
	assert_int_equal(throttle_steady_span(true, 3, 12), 12);
	assert_int_equal(throttle_steady_span(true, 40, 12), 12);
	/* The bound the loader passes (ping interval, two in --interval): never under 2. */
	assert_int_equal(throttle_steady_span(true, 3, 5), 5);
	assert_int_equal(throttle_steady_span(true, 2, 3), 3);
	assert_int_equal(throttle_steady_span(true, 3, 1), 2);
}

/* Steady: the tier's own settings, nothing lost, the overhead under half the
 * budget, the host's load inside the tier's band (5 points under each entry). */
static void test_steady(void **state)
{
	struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT];
	struct throttle t;

	(void)state;
	throttle_tiers_default(tiers, 19);
	throttle_for_tier(tiers, THROTTLE_TIER_HEALTHY, &t);
	assert_true(throttle_steady(&t, tiers, false, 0.0, 0, 0, 0.1, 1.5));
	assert_true(throttle_steady(&t, tiers, false, 74.9, 0, 0, 0.1, 1.5));
	assert_false(throttle_steady(&t, tiers, false, 75.0, 0, 0, 0.1, 1.5));
	assert_false(throttle_steady(&t, tiers, false, 95.0, 0, 0, 0.1, 1.5));
	/* Unknown load, a loss, an off-CPU record, the overhead past half the budget. */
	assert_false(throttle_steady(&t, tiers, false, -1.0, 0, 0, 0.1, 1.5));
	assert_false(throttle_steady(&t, tiers, false, 50.0, 1, 0, 0.1, 1.5));
	assert_false(throttle_steady(&t, tiers, false, 50.0, 0, 1, 0.1, 1.5));
	assert_true(throttle_steady(&t, tiers, false, 50.0, 0, 0, 0.75, 1.5));
	assert_false(throttle_steady(&t, tiers, false, 50.0, 0, 0, 0.76, 1.5));
	/* A budget step (frequency halved, frame pointers), a divisor, a pause. */
	t.frequency_hz = 9;
	assert_false(throttle_steady(&t, tiers, false, 50.0, 0, 0, 0.1, 1.5));
	throttle_for_tier(tiers, THROTTLE_TIER_HEALTHY, &t);
	t.unwind_mode = LOWPROF_UNWIND_FP;
	assert_false(throttle_steady(&t, tiers, false, 50.0, 0, 0, 0.1, 1.5));
	throttle_for_tier(tiers, THROTTLE_TIER_HEALTHY, &t);
	t.sample_divisor = 2;
	assert_false(throttle_steady(&t, tiers, false, 50.0, 0, 0, 0.1, 1.5));
	t.sample_divisor = 1;
	t.paused = true;
	assert_false(throttle_steady(&t, tiers, false, 50.0, 0, 0, 0.1, 1.5));
	/* High: from 75 (it is left under 70) to under 85 (critical from 90). */
	throttle_for_tier(tiers, THROTTLE_TIER_HIGH, &t);
	assert_false(throttle_steady(&t, tiers, false, 74.9, 0, 0, 0.1, 1.5));
	assert_true(throttle_steady(&t, tiers, false, 75.0, 0, 0, 0.1, 1.5));
	assert_true(throttle_steady(&t, tiers, false, 84.9, 0, 0, 0.1, 1.5));
	assert_false(throttle_steady(&t, tiers, false, 85.0, 0, 0, 0.1, 1.5));
	/* Critical: from 85 up, a host kept busy included. */
	throttle_for_tier(tiers, THROTTLE_TIER_CRITICAL, &t);
	assert_false(throttle_steady(&t, tiers, false, 84.9, 0, 0, 0.1, 1.5));
	assert_true(throttle_steady(&t, tiers, false, 85.0, 0, 0, 0.1, 1.5));
	assert_true(throttle_steady(&t, tiers, false, 100.0, 0, 0, 0.1, 1.5));
	/* --no-throttle: nothing is decided, only a loss counts. */
	throttle_for_tier(tiers, THROTTLE_TIER_HEALTHY, &t);
	assert_true(throttle_steady(&t, tiers, true, 100.0, 0, 0, 50.0, 1.5));
	assert_true(throttle_steady(&t, tiers, true, -1.0, 0, 0, 0.1, 1.5));
	assert_false(throttle_steady(&t, tiers, true, 100.0, 3, 0, 0.1, 1.5));
}

/* A steady interval's wake: half as much again as its rate would leave. */
static void test_steady_wake_bytes(void **state)
{
	(void)state;
	/* 10 000 bytes a second, a steady interval of two: 30 000, and the floor. */
	assert_int_equal(throttle_steady_wake_bytes(10000, SEC, 2 * SEC, 4096), 30000 + 4096);
	/* The same rate measured over a steady interval. */
	assert_int_equal(throttle_steady_wake_bytes(20000, 2 * SEC, 2 * SEC, 4096), 30000 + 4096);
	/* Nothing drained: a few samples wake it, as at rest. */
	assert_int_equal(throttle_steady_wake_bytes(0, SEC, 2 * SEC, 4096), 4096);
	assert_int_equal(throttle_steady_wake_bytes(5000, 0, 2 * SEC, 4096), 4096);
	/* No overflow. */
	assert_true(throttle_steady_wake_bytes(UINT64_MAX, 1, UINT64_MAX, 4096) >= UINT64_MAX / 2);
}

/* The overhead is the agent's BPF time and CPU over the host's capacity in
 * the interval; losses are a share of the samples taken. */
static void test_overhead_and_drops(void **state)
{
	(void)state;
	/* 3 ms of BPF and 7 ms of CPU in 1 s on 4 CPUs: 10 ms of 4 s = 0.25%. */
	assert_float_equal(throttle_overhead_pct(3000000, 7000000, 4, 1000000000ull), 0.25, 1e-12);
	/* A count of 0 CPUs (not read) is one CPU, not a division by zero. */
	assert_float_equal(throttle_overhead_pct(5000000, 5000000, 0, 1000000000ull), 1.0, 1e-12);
	/* An empty interval costs nothing. */
	assert_float_equal(throttle_overhead_pct(5000000, 5000000, 2, 0), 0.0, 0.0);
	assert_float_equal(throttle_drop_pct(1, 3), 25.0, 1e-12);
	assert_float_equal(throttle_drop_pct(0, 0), 0.0, 0.0);
	assert_float_equal(throttle_drop_pct(7, 0), 100.0, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_default_table),
		cmocka_unit_test(test_wire_round_trip),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_quiet_span),
		cmocka_unit_test(test_steady),
		cmocka_unit_test(test_steady_span),
		cmocka_unit_test(test_steady_wake_bytes),
		cmocka_unit_test(test_overhead_and_drops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
