/*
 * The throttle policy, driven by traces: one struct policy_signals per
 * control interval, and an assertion on every interval's decision.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/policy.h"

/* One policy under test and its last decision. */
struct run {
	struct policy_settings set;
	struct policy_state state;
	struct policy_decision d;
	int changes; /* decisions with changed set, since start */
};

static void run_init(struct run *r, uint32_t user_hz)
{
	char err[160];

	memset(r, 0, sizeof(*r));
	policy_settings_default(&r->set, user_hz);
	assert_int_equal(policy_settings_check(&r->set, err, sizeof(err)), 0);
	policy_state_init(&r->state, &r->set);
}

/* One interval with every signal valid. */
static const struct policy_decision *step(struct run *r, double cpu, double drop, double overhead)
{
	struct policy_signals sig = {
		.host_valid = true, .host_cpu_pct = cpu,
		.stats_valid = true, .drop_pct = drop, .overhead_pct = overhead,
	};

	policy_step(&r->set, &r->state, &sig, &r->d);
	if (r->d.changed)
		r->changes++;
	return &r->d;
}

static void expect(const struct policy_decision *d, enum throttle_tier tier, uint32_t hz,
		   enum lowprof_unwind_mode unwind, uint32_t depth, uint32_t divisor, bool paused)
{
	const struct throttle *t = &d->throttle;

	if (t->tier != tier || t->frequency_hz != hz || t->unwind_mode != unwind ||
	    t->max_depth != depth || t->sample_divisor != divisor || t->paused != paused)
		fail_msg("got %s %u Hz %s depth %u divisor %u%s, expected %s %u Hz %s depth %u divisor %u%s (%s)",
			 throttle_tier_name(t->tier), t->frequency_hz, throttle_unwind_name(t->unwind_mode),
			 t->max_depth, t->sample_divisor, t->paused ? " paused" : "",
			 throttle_tier_name(tier), hz, throttle_unwind_name(unwind), depth, divisor,
			 paused ? " paused" : "", d->reason);
}

static void expect_reason(const struct policy_decision *d, const char *needle)
{
	if (strstr(d->reason, needle) == NULL)
		fail_msg("reason \"%s\" does not contain \"%s\"", d->reason, needle);
}

#define FP LOWPROF_UNWIND_FP
#define DWARF LOWPROF_UNWIND_DWARF
#define HEALTHY THROTTLE_TIER_HEALTHY
#define HIGH THROTTLE_TIER_HIGH
#define CRIT THROTTLE_TIER_CRITICAL

/*
 * A steady interval (ipc/throttle.h) is one after which the loader waits two
 * intervals for the next decision: only right if the policy would decide
 * the same again. Over a long pseudo-random trace (load swinging across the
 * thresholds, drop storms, overhead around the budget), whenever the
 * settings in force and the interval's signals pass throttle_steady, the
 * decision keeps them, and keeps them again for the same signals.
 */
static void test_steady_is_a_fixed_point(void **unused)
{
	struct run r;
	struct throttle applied;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	double level = 50.0;
	unsigned i, steady = 0, by_tier[THROTTLE_TIER_COUNT] = {0};

	(void)unused;
	run_init(&r, 19);
	applied = r.state.current;
	for (i = 0; i < 200000; i++) {
		double cpu, drop, overhead;
		struct run again;

		/* Load in runs: a level held for a while (a tenth of the intervals
		 * jump anywhere), a few points of noise around it. */
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if ((x >> 40) % 10 == 0)
			level = (double)((x >> 24) % 1001) / 10.0;
		cpu = level + (double)((x >> 8) % 61) / 10.0 - 3.0;
		cpu = cpu < 0 ? 0 : cpu > 100 ? 100 : cpu;
		drop = (x >> 20) % 100 == 0 ? 10.0 : 0.0;
		/* Mostly well under the budget, now and then over it. */
		overhead = (x >> 12) % 20 == 0 ? 2.0 + (double)((x >> 16) % 200) / 100.0
					       : (double)((x >> 16) % 100) / 100.0;
		step(&r, cpu, drop, overhead);
		if (throttle_steady(&applied, r.set.tiers, false, cpu, drop > 0 ? 1 : 0, 0, overhead,
				    r.set.cpu_budget_pct)) {
			steady++;
			by_tier[applied.tier]++;
			if (!throttle_equal(&r.d.throttle, &applied))
				fail_msg("step %u: steady at %.1f%% load, overhead %.2f%%, but %s", i, cpu,
					 overhead, r.d.reason);
			again = r;
			step(&again, cpu, drop, overhead);
			if (!throttle_equal(&again.d.throttle, &applied))
				fail_msg("step %u: steady at %.1f%% load, but the same signals change it: %s",
					 i, cpu, again.d.reason);
		}
		applied = r.d.throttle;
	}
	/* Not vacuous: every tier was steady many times. */
	for (i = 0; i < THROTTLE_TIER_COUNT; i++)
		assert_true(by_tier[i] > 100);
	assert_true(steady > 1000);
}

static void test_initial_state(void **unused)
{
	struct run r;

	run_init(&r, 19);
	assert_int_equal(r.state.current.tier, HEALTHY);
	assert_int_equal(r.state.current.frequency_hz, 19);
	assert_int_equal(r.state.current.unwind_mode, DWARF);
	assert_int_equal(r.state.current.max_depth, 64);
	assert_int_equal(r.state.current.sample_divisor, 1);
	assert_false(r.state.current.paused);
	/* A quiet host: nothing changes, and the reason still says why. */
	expect(step(&r, 20, 0, 0.3), HEALTHY, 19, DWARF, 64, 1, false);
	assert_false(r.d.changed);
	expect_reason(&r.d, "steady");
}

static void test_load_spike(void **unused)
{
	struct run r;

	run_init(&r, 19);
	for (int i = 0; i < 3; i++)
		expect(step(&r, 25, 0, 0.3), HEALTHY, 19, DWARF, 64, 1, false);

	/* The spike is acted on in the interval that sees it. */
	expect(step(&r, 93.1, 0, 0.3), CRIT, 5, FP, 32, 1, false);
	assert_true(r.d.changed);
	expect_reason(&r.d, "host CPU 93.1% >= 90%: critical");
	for (int i = 0; i < 5; i++) {
		expect(step(&r, 96, 0, 0.3), CRIT, 5, FP, 32, 1, false);
		assert_false(r.d.changed);
	}

	/* Load gone: critical and high are left together after the hysteresis (3). */
	expect(step(&r, 20, 0, 0.3), CRIT, 5, FP, 32, 1, false);
	expect(step(&r, 20, 0, 0.3), CRIT, 5, FP, 32, 1, false);
	expect(step(&r, 20, 0, 0.3), HEALTHY, 19, DWARF, 64, 1, false);
	assert_true(r.d.changed);
	expect_reason(&r.d, "critical -> healthy");

	/* A smaller spike goes to high at once. */
	expect(step(&r, 84, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect_reason(&r.d, "host CPU 84.0% >= 80%: high");
	/* A blip under the margin restarts the count. */
	expect(step(&r, 60, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect(step(&r, 60, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect(step(&r, 75, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect(step(&r, 60, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect(step(&r, 60, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect(step(&r, 60, 0, 0.3), HEALTHY, 19, DWARF, 64, 1, false);
	expect_reason(&r.d, "host CPU 60.0% < 70% for 3 intervals: high -> healthy");
}

static void test_step_down_through_high(void **unused)
{
	struct run r;

	run_init(&r, 19);
	expect(step(&r, 95, 0, 0.3), CRIT, 5, FP, 32, 1, false);
	/* 85%: under critical's trigger but not by the margin: stay. */
	for (int i = 0; i < 6; i++)
		expect(step(&r, 85, 0, 0.3), CRIT, 5, FP, 32, 1, false);
	/* 75%: clear of critical by the margin, still too busy to leave high. */
	expect(step(&r, 75, 0, 0.3), CRIT, 5, FP, 32, 1, false);
	expect(step(&r, 75, 0, 0.3), CRIT, 5, FP, 32, 1, false);
	expect(step(&r, 75, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect_reason(&r.d, "critical -> high");
	for (int i = 0; i < 5; i++)
		expect(step(&r, 75, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect(step(&r, 40, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect(step(&r, 40, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect(step(&r, 40, 0, 0.3), HEALTHY, 19, DWARF, 64, 1, false);
}

static void test_sustained_95(void **unused)
{
	struct run r;

	run_init(&r, 19);
	for (int i = 0; i < 300; i++)
		expect(step(&r, 95, 0, 0.3), CRIT, 5, FP, 32, 1, false);
	assert_int_equal(r.changes, 1);
}

static void test_oscillation_no_flapping(void **unused)
{
	struct run r;

	run_init(&r, 19);
	expect(step(&r, 79, 0, 0.3), HEALTHY, 19, DWARF, 64, 1, false);
	for (int i = 0; i < 100; i++) {
		expect(step(&r, 81, 0, 0.3), HIGH, 11, FP, 48, 1, false);
		expect(step(&r, 79, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	}
	assert_int_equal(r.changes, 1);

	/* Around the critical threshold too: one change up, none back. */
	for (int i = 0; i < 50; i++) {
		expect(step(&r, 91, 0, 0.3), CRIT, 5, FP, 32, 1, false);
		expect(step(&r, 89, 0, 0.3), CRIT, 5, FP, 32, 1, false);
	}
	assert_int_equal(r.changes, 2);
}

static void test_drop_storm(void **unused)
{
	static const uint32_t up[] = { 2, 4, 8, 16, 32, 64, 64, 64 };
	struct run r;
	uint32_t divisor = 64;

	run_init(&r, 19);
	/* Drops above 5% make the tier critical and double the divisor every interval. */
	expect(step(&r, 30, 7.2, 0.3), CRIT, 5, FP, 32, 2, false);
	expect_reason(&r.d, "drop rate 7.2% > 5%: critical");
	expect_reason(&r.d, "drop rate 7.2% > 5%: divisor 1 -> 2");
	for (size_t i = 1; i < sizeof(up) / sizeof(up[0]); i++)
		expect(step(&r, 30, 20, 0.3), CRIT, 5, FP, 32, up[i], false);
	expect_reason(&r.d, "steady"); /* at the cap: nothing more to do */

	/* 1..5%: neither backs off nor recovers; the tier stays (drops not under 1%). */
	for (int i = 0; i < 5; i++)
		expect(step(&r, 30, 3, 0.3), CRIT, 5, FP, 32, 64, false);

	/* Under 1% for 3 intervals: back to healthy, but the 5 -> 19 Hz jump is folded
	 * into the divisor (already at its cap here) so the calm rate holds. */
	expect(step(&r, 30, 0.5, 0.3), CRIT, 5, FP, 32, 64, false);
	expect(step(&r, 30, 0.5, 0.3), CRIT, 5, FP, 32, 64, false);
	expect(step(&r, 30, 0.5, 0.3), HEALTHY, 19, DWARF, 64, 64, false);
	expect_reason(&r.d, "critical -> healthy");
	/* Then every 3 clean intervals halve the divisor, one step at a time (the
	 * first period started with the tier change). */
	expect(step(&r, 30, 0.2, 0.3), HEALTHY, 19, DWARF, 64, 64, false);
	divisor = 32;
	expect(step(&r, 30, 0.2, 0.3), HEALTHY, 19, DWARF, 64, divisor, false);
	assert_true(r.d.changed);
	while (divisor > 1) {
		expect(step(&r, 30, 0.2, 0.3), HEALTHY, 19, DWARF, 64, divisor, false);
		expect(step(&r, 30, 0.2, 0.3), HEALTHY, 19, DWARF, 64, divisor, false);
		divisor /= 2;
		expect(step(&r, 30, 0.2, 0.3), HEALTHY, 19, DWARF, 64, divisor, false);
		assert_true(r.d.changed);
	}
	for (int i = 0; i < 10; i++)
		expect(step(&r, 30, 0, 0.3), HEALTHY, 19, DWARF, 64, 1, false);

	/* A relapse during recovery doubles again from where it was. */
	expect(step(&r, 30, 6, 0.3), CRIT, 5, FP, 32, 2, false);
	expect(step(&r, 30, 0.5, 0.3), CRIT, 5, FP, 32, 2, false);
	expect(step(&r, 30, 6, 0.3), CRIT, 5, FP, 32, 4, false);
}

/*
 * A ring that overflows whenever the effective rate (frequency / divisor)
 * exceeds what the consumer keeps up with: the drop rate that rate causes.
 */
static double overflow_plant(const struct policy_decision *d, double capacity_hz)
{
	double rate = (double)d->throttle.frequency_hz / (double)d->throttle.sample_divisor;

	return rate > capacity_hz ? 100.0 * (1.0 - capacity_hz / rate) : 0.0;
}

static void test_sustained_overflow_settles(void **unused)
{
	struct run r;
	double drop = 0;
	int bad = 0, bad_late = 0;

	/* -F 2000 on a host whose ring keeps up with 40 samples/s: the policy must find
	 * a divisor that holds and stop relapsing (drops over 5% in < 5% of intervals). */
	run_init(&r, 2000);
	for (int i = 0; i < 600; i++) {
		step(&r, 20, drop, 0.3);
		drop = overflow_plant(&r.d, 40);
		if (drop > 5) {
			bad++;
			if (i >= 300)
				bad_late++;
		}
	}
	print_message("intervals with drops > 5%%: %d of 600 (%d in the last 300)\n", bad, bad_late);
	assert_true(bad < 30);
	assert_true(bad_late <= 5);
	assert_true(r.d.throttle.sample_divisor > 1);
}

static void test_overhead_breach(void **unused)
{
	struct run r;

	run_init(&r, 19);
	/* One step beyond the tier per interval while over the budget. */
	expect(step(&r, 30, 0, 2.1), HEALTHY, 9, DWARF, 64, 1, false);
	expect_reason(&r.d, "overhead 2.10% > budget 1.5%: halve frequency");
	expect(step(&r, 30, 0, 2.0), HEALTHY, 9, FP, 64, 1, false);
	expect_reason(&r.d, "frame pointers");
	expect(step(&r, 30, 0, 1.9), HEALTHY, 9, FP, 16, 1, false);
	expect_reason(&r.d, "shallow stacks");
	expect(step(&r, 30, 0, 1.8), HEALTHY, 9, FP, 16, 1, true);
	expect_reason(&r.d, "pause sampling");
	expect(step(&r, 30, 0, 1.6), HEALTHY, 9, FP, 16, 1, true);
	assert_false(r.d.changed);

	/* Between half the budget and the budget: hold. */
	expect(step(&r, 30, 0, 1.0), HEALTHY, 9, FP, 16, 1, true);

	/* Under half the budget: one step back per interval. */
	expect(step(&r, 30, 0, 0.2), HEALTHY, 9, FP, 16, 1, false);
	expect_reason(&r.d, "resume sampling");
	expect(step(&r, 30, 0, 0.5), HEALTHY, 9, FP, 64, 1, false);
	expect_reason(&r.d, "restore depth");
	expect(step(&r, 30, 0, 0.5), HEALTHY, 9, DWARF, 64, 1, false);
	expect(step(&r, 30, 0, 0.5), HEALTHY, 19, DWARF, 64, 1, false);
	expect_reason(&r.d, "restore frequency");
	expect(step(&r, 30, 0, 0.5), HEALTHY, 19, DWARF, 64, 1, false);
	assert_false(r.d.changed);
}

static void test_overhead_backoff(void **unused)
{
	struct run r;

	run_init(&r, 19);
	for (int i = 0; i < 4; i++)
		step(&r, 30, 0, 3.0);
	assert_true(r.d.throttle.paused);

	/* Resuming breaches at once: paused again, and the next try waits 2, then 4. */
	expect(step(&r, 30, 0, 0.1), HEALTHY, 9, FP, 16, 1, false);
	expect(step(&r, 30, 0, 3.0), HEALTHY, 9, FP, 16, 1, true);
	expect(step(&r, 30, 0, 0.1), HEALTHY, 9, FP, 16, 1, true);
	expect(step(&r, 30, 0, 0.1), HEALTHY, 9, FP, 16, 1, false);
	expect(step(&r, 30, 0, 3.0), HEALTHY, 9, FP, 16, 1, true);
	for (int i = 0; i < 3; i++)
		expect(step(&r, 30, 0, 0.1), HEALTHY, 9, FP, 16, 1, true);
	expect(step(&r, 30, 0, 0.1), HEALTHY, 9, FP, 16, 1, false);
	/* This resume holds: the wait is back to one interval per step. */
	expect(step(&r, 30, 0, 0.1), HEALTHY, 9, FP, 64, 1, false);
	expect(step(&r, 30, 0, 0.1), HEALTHY, 9, DWARF, 64, 1, false);
}

static void test_overhead_skips_noop_steps(void **unused)
{
	struct run r;

	run_init(&r, 19);
	expect(step(&r, 85, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	/* The high tier already uses frame pointers: that step is skipped. */
	expect(step(&r, 85, 0, 2.0), HIGH, 5, FP, 48, 1, false);
	expect(step(&r, 85, 0, 2.0), HIGH, 5, FP, 16, 1, false);
	expect_reason(&r.d, "shallow stacks");
	expect(step(&r, 85, 0, 2.0), HIGH, 5, FP, 16, 1, true);
	expect(step(&r, 85, 0, 0.1), HIGH, 5, FP, 16, 1, false);
	expect(step(&r, 85, 0, 0.1), HIGH, 5, FP, 48, 1, false);
	expect(step(&r, 85, 0, 0.1), HIGH, 11, FP, 48, 1, false);
}

static void test_user_frequency_ceiling(void **unused)
{
	struct run r;
	struct throttle t;

	/* -F 7: healthy 7; high and critical stay below it, and still drop above 80%. */
	run_init(&r, 7);
	expect(step(&r, 30, 0, 0.3), HEALTHY, 7, DWARF, 64, 1, false);
	expect(step(&r, 85, 0, 0.3), HIGH, 6, FP, 48, 1, false);
	expect(step(&r, 95, 0, 0.3), CRIT, 5, FP, 32, 1, false);

	run_init(&r, 3);
	throttle_for_tier(r.set.tiers, HEALTHY, &t);
	assert_int_equal(t.frequency_hz, 3);
	throttle_for_tier(r.set.tiers, HIGH, &t);
	assert_int_equal(t.frequency_hz, 2);
	throttle_for_tier(r.set.tiers, CRIT, &t);
	assert_int_equal(t.frequency_hz, 1);

	/* 1 Hz is the floor: nothing lower exists. */
	run_init(&r, 1);
	throttle_for_tier(r.set.tiers, HIGH, &t);
	assert_int_equal(t.frequency_hz, 1);
	throttle_for_tier(r.set.tiers, CRIT, &t);
	assert_int_equal(t.frequency_hz, 1);

	/* -F 99: the user's rate only while healthy; the tiers' own rates above 80%. */
	run_init(&r, 99);
	expect(step(&r, 30, 0, 0.3), HEALTHY, 99, DWARF, 64, 1, false);
	expect(step(&r, 81, 0, 0.3), HIGH, 11, FP, 48, 1, false);
	expect(step(&r, 91, 0, 0.3), CRIT, 5, FP, 32, 1, false);

	/* Never above -F, and every tier strictly below the one before, for any -F. */
	for (uint32_t hz = 2; hz <= 1000; hz++) {
		struct throttle h;
		struct throttle hi;
		struct throttle c;

		run_init(&r, hz);
		throttle_for_tier(r.set.tiers, HEALTHY, &h);
		throttle_for_tier(r.set.tiers, HIGH, &hi);
		throttle_for_tier(r.set.tiers, CRIT, &c);
		assert_int_equal(h.frequency_hz, hz);
		assert_true(hi.frequency_hz < hz && hi.frequency_hz <= 11);
		assert_true(c.frequency_hz <= hi.frequency_hz && c.frequency_hz <= 5);
		assert_true(c.frequency_hz >= 1);
	}

	/* A user who asked for frame pointers never gets DWARF from a tier. */
	run_init(&r, 19);
	r.set.tiers[HEALTHY].unwind_mode = FP;
	r.set.tiers[HIGH].unwind_mode = DWARF;
	r.set.tiers[HEALTHY].max_depth = 20;
	throttle_for_tier(r.set.tiers, HIGH, &t);
	assert_int_equal(t.unwind_mode, FP);
	assert_int_equal(t.max_depth, 20);
}

static void test_no_throttle(void **unused)
{
	struct run r;

	run_init(&r, 19);
	r.set.no_throttle = true;
	expect(step(&r, 95, 20, 5.0), HEALTHY, 19, DWARF, 64, 1, false);
	expect_reason(&r.d, "no-throttle");
	for (int i = 0; i < 20; i++)
		expect(step(&r, 99, 50, 9.0), HEALTHY, 19, DWARF, 64, 1, false);
	assert_int_equal(r.changes, 0);
}

static void test_missing_signals(void **unused)
{
	struct policy_signals sig = { 0 };
	struct run r;

	run_init(&r, 19);
	expect(step(&r, 95, 8, 0.3), CRIT, 5, FP, 32, 2, false);
	/* Nothing measured: hold everything, never count it as calm. */
	for (int i = 0; i < 10; i++) {
		policy_step(&r.set, &r.state, &sig, &r.d);
		expect(&r.d, CRIT, 5, FP, 32, 2, false);
		assert_false(r.d.changed);
	}
	expect_reason(&r.d, "host load unavailable");
	expect_reason(&r.d, "loader stats unavailable");

	/* Host load without loader stats: the CPU part of critical clears, the drop part is unknown. */
	sig.host_valid = true;
	sig.host_cpu_pct = 10;
	for (int i = 0; i < 5; i++) {
		policy_step(&r.set, &r.state, &sig, &r.d);
		expect(&r.d, CRIT, 5, FP, 32, 2, false);
	}
	/* Once stats return clean, the remaining intervals are counted. */
	expect(step(&r, 10, 0, 0.3), CRIT, 5, FP, 32, 2, false);
	expect(step(&r, 10, 0, 0.3), CRIT, 5, FP, 32, 2, false);
	/* Drops had a hand in critical: the 5 -> 19 Hz jump goes into the divisor (2 x 4). */
	expect(step(&r, 10, 0, 0.3), HEALTHY, 19, DWARF, 64, 8, false);
	expect_reason(&r.d, "divisor 2 -> 8 to keep the calm rate");
}

static void test_pressure_trigger(void **unused)
{
	struct policy_signals sig = {
		.host_valid = true, .host_cpu_pct = 50, .stats_valid = true,
		.pressure_valid = true, .cpu_pressure = 40,
	};
	struct run r;

	/* Off by default: pressure alone changes nothing. */
	run_init(&r, 19);
	policy_step(&r.set, &r.state, &sig, &r.d);
	expect(&r.d, HEALTHY, 19, DWARF, 64, 1, false);

	r.set.pressure_high_pct = 30;
	policy_step(&r.set, &r.state, &sig, &r.d);
	expect(&r.d, HIGH, 11, FP, 48, 1, false);
	expect_reason(&r.d, "CPU pressure 40.0 >= 30: high");
	sig.cpu_pressure = 25; /* within the margin: stays */
	for (int i = 0; i < 5; i++) {
		policy_step(&r.set, &r.state, &sig, &r.d);
		expect(&r.d, HIGH, 11, FP, 48, 1, false);
	}
	sig.cpu_pressure = 5;
	for (int i = 0; i < 3; i++)
		policy_step(&r.set, &r.state, &sig, &r.d);
	expect(&r.d, HEALTHY, 19, DWARF, 64, 1, false);
}

static void test_settings_check(void **unused)
{
	struct policy_settings set;
	char err[160];

	policy_settings_default(&set, 19);
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), 0);

	set.tiers[HEALTHY].frequency_hz = 0;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "healthy tier"));

	policy_settings_default(&set, 19);
	set.tiers[HIGH].max_depth = 129;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);

	policy_settings_default(&set, 19);
	set.tiers[HIGH].enter_cpu_pct = 95;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "thresholds"));

	policy_settings_default(&set, 19);
	set.max_divisor = 48;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);

	policy_settings_default(&set, 19);
	set.cpu_budget_pct = 0;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);

	policy_settings_default(&set, 19);
	set.hysteresis_intervals = 0;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);

	policy_settings_default(&set, 19);
	set.drop_recover_pct = 6;
	assert_int_equal(policy_settings_check(&set, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_initial_state),
		cmocka_unit_test(test_steady_is_a_fixed_point),
		cmocka_unit_test(test_load_spike),
		cmocka_unit_test(test_step_down_through_high),
		cmocka_unit_test(test_sustained_95),
		cmocka_unit_test(test_oscillation_no_flapping),
		cmocka_unit_test(test_drop_storm),
		cmocka_unit_test(test_sustained_overflow_settles),
		cmocka_unit_test(test_overhead_breach),
		cmocka_unit_test(test_overhead_backoff),
		cmocka_unit_test(test_overhead_skips_noop_steps),
		cmocka_unit_test(test_user_frequency_ceiling),
		cmocka_unit_test(test_no_throttle),
		cmocka_unit_test(test_missing_signals),
		cmocka_unit_test(test_pressure_trigger),
		cmocka_unit_test(test_settings_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
