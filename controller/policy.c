#include "controller/policy.h"

#include "bpf/offcpu.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The reason text: clauses joined by "; ", truncated rather than overflowed. */
struct reason {
	char *buf;
	size_t size;
	size_t len;
};

static void reason_add(struct reason *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void reason_add(struct reason *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->len + 1 >= r->size)
		return;
	if (r->len > 0) {
		n = snprintf(r->buf + r->len, r->size - r->len, "; ");
		r->len += (size_t)n;
		if (r->len >= r->size) {
			r->len = r->size - 1;
			return;
		}
	}
	va_start(ap, fmt);
	n = vsnprintf(r->buf + r->len, r->size - r->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	r->len += (size_t)n;
	if (r->len >= r->size)
		r->len = r->size - 1;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Counters saturate: a host idle for years must not wrap back to zero. */
static void bump(uint32_t *c)
{
	if (*c < UINT32_MAX)
		(*c)++;
}

static bool is_power_of_two(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* The lowest off-CPU probability the policy asks for: 0.01%. */
#define POLICY_OFFCPU_MIN_PPM 100u

void policy_settings_default(struct policy_settings *set, uint32_t user_frequency_hz)
{
	memset(set, 0, sizeof(*set));
	throttle_tiers_default(set->tiers, user_frequency_hz);
	set->critical_drop_pct = THROTTLE_CRITICAL_DROP_PCT;
	set->pressure_high_pct = 0.0;
	set->hysteresis_intervals = 3;
	set->hysteresis_margin_pct = 10.0;
	set->drop_backoff_pct = 5.0;
	set->drop_recover_pct = 1.0;
	set->drop_recover_intervals = 3;
	set->max_divisor = 64;
	set->cpu_budget_pct = 1.5;
	set->budget_min_depth = 16;
	set->budget_recover_intervals = 1;
	set->budget_backoff_max = 32;
	set->no_throttle = false;
	set->offcpu_max_ppm = 0;
	set->offcpu_min_ppm = POLICY_OFFCPU_MIN_PPM;
	set->offcpu_high_share = 0.5;
	set->offcpu_low_share = 0.25;
	set->offcpu_raise_intervals = 5;
	set->offcpu_backoff_max = 80;
}

int policy_settings_check(const struct policy_settings *set, char *err, size_t errlen)
{
	const struct throttle_tier_settings *high = &set->tiers[THROTTLE_TIER_HIGH];
	const struct throttle_tier_settings *crit = &set->tiers[THROTTLE_TIER_CRITICAL];

	for (int t = 0; t < THROTTLE_TIER_COUNT; t++) {
		const struct throttle_tier_settings *ts = &set->tiers[t];

		if (ts->frequency_hz < 1) {
			snprintf(err, errlen, "%s tier: frequency must be at least 1 Hz",
				 throttle_tier_name(t));
			return -EINVAL;
		}
		if (ts->max_depth < 1 || ts->max_depth > LOWPROF_MAX_USER_DEPTH) {
			snprintf(err, errlen, "%s tier: max depth %u outside [1, %u]",
				 throttle_tier_name(t), ts->max_depth, LOWPROF_MAX_USER_DEPTH);
			return -EINVAL;
		}
		if (ts->unwind_mode != LOWPROF_UNWIND_FP && ts->unwind_mode != LOWPROF_UNWIND_DWARF) {
			snprintf(err, errlen, "%s tier: unknown unwind mode %d",
				 throttle_tier_name(t), (int)ts->unwind_mode);
			return -EINVAL;
		}
	}
	if (!(high->enter_cpu_pct > 0.0 && high->enter_cpu_pct < crit->enter_cpu_pct &&
	      crit->enter_cpu_pct <= 100.0)) {
		snprintf(err, errlen, "tier thresholds must satisfy 0 < high (%g%%) < critical (%g%%) <= 100",
			 high->enter_cpu_pct, crit->enter_cpu_pct);
		return -EINVAL;
	}
	if (!(set->hysteresis_margin_pct >= 0.0 && set->hysteresis_margin_pct < high->enter_cpu_pct)) {
		snprintf(err, errlen, "hysteresis margin %g must be in [0, %g)",
			 set->hysteresis_margin_pct, high->enter_cpu_pct);
		return -EINVAL;
	}
	if (set->hysteresis_intervals < 1 || set->drop_recover_intervals < 1 ||
	    set->budget_recover_intervals < 1 ||
	    set->budget_backoff_max < set->budget_recover_intervals) {
		snprintf(err, errlen, "interval counts must be at least 1 (and the budget backoff cap at least the recovery wait)");
		return -EINVAL;
	}
	if (!(set->drop_recover_pct >= 0.0 && set->drop_recover_pct <= set->drop_backoff_pct &&
	      set->drop_backoff_pct <= 100.0 && set->critical_drop_pct >= 0.0 &&
	      set->critical_drop_pct <= 100.0)) {
		snprintf(err, errlen, "drop thresholds must satisfy 0 <= recover (%g%%) <= backoff (%g%%) <= 100",
			 set->drop_recover_pct, set->drop_backoff_pct);
		return -EINVAL;
	}
	if (!is_power_of_two(set->max_divisor) || set->max_divisor > 65536) {
		snprintf(err, errlen, "divisor cap %u is not a power of two in [1, 65536]",
			 set->max_divisor);
		return -EINVAL;
	}
	if (!(set->cpu_budget_pct > 0.0 && set->cpu_budget_pct <= 100.0)) {
		snprintf(err, errlen, "cpu budget %g%% outside (0, 100]", set->cpu_budget_pct);
		return -EINVAL;
	}
	if (set->budget_min_depth < 1 || set->budget_min_depth > LOWPROF_MAX_USER_DEPTH) {
		snprintf(err, errlen, "budget depth %u outside [1, %u]", set->budget_min_depth,
			 LOWPROF_MAX_USER_DEPTH);
		return -EINVAL;
	}
	if (set->offcpu_max_ppm > LOWPROF_OFFCPU_PPM_ONE || set->offcpu_min_ppm < 1 ||
	    !(set->offcpu_low_share > 0.0 && set->offcpu_low_share < set->offcpu_high_share) ||
	    set->offcpu_raise_intervals < 1 || set->offcpu_backoff_max < set->offcpu_raise_intervals) {
		snprintf(err, errlen, "off-CPU: probability %u ppm above %u, floor 0, shares not 0 < low (%g) < high (%g), or waits under 1",
			 set->offcpu_max_ppm, LOWPROF_OFFCPU_PPM_ONE, set->offcpu_low_share,
			 set->offcpu_high_share);
		return -EINVAL;
	}
	if (!(set->pressure_high_pct >= 0.0 && set->pressure_high_pct <= 100.0)) {
		snprintf(err, errlen, "pressure threshold %g outside [0, 100]", set->pressure_high_pct);
		return -EINVAL;
	}
	return 0;
}

static void apply_budget(const struct policy_settings *set, enum policy_budget_level level,
			 struct throttle *t)
{
	if (level >= POLICY_BUDGET_HALF_FREQUENCY && t->frequency_hz > 1)
		t->frequency_hz /= 2;
	if (level >= POLICY_BUDGET_FRAME_POINTERS)
		t->unwind_mode = LOWPROF_UNWIND_FP;
	if (level >= POLICY_BUDGET_SHALLOW)
		t->max_depth = min_u32(t->max_depth, set->budget_min_depth);
	if (level >= POLICY_BUDGET_PAUSED)
		t->paused = true;
}

/* The throttle for the state's tier, divisor and a given budget level. */
static void compose(const struct policy_settings *set, const struct policy_state *st,
		    enum policy_budget_level level, struct throttle *out)
{
	throttle_for_tier(set->tiers, st->tier, out);
	out->sample_divisor = st->divisor;
	out->offcpu_prob_ppm = st->offcpu_ppm;
	out->offcpu_parked = set->offcpu_max_ppm > 0 && st->offcpu_parked;
	apply_budget(set, level, out);
}

void policy_state_init(struct policy_state *state, const struct policy_settings *set)
{
	memset(state, 0, sizeof(*state));
	state->tier = THROTTLE_TIER_HEALTHY;
	state->divisor = 1;
	state->drop_wait = set->drop_recover_intervals;
	state->since_relax = UINT32_MAX;
	state->budget_level = POLICY_BUDGET_NONE;
	state->budget_wait = set->budget_recover_intervals;
	state->offcpu_ppm = set->offcpu_max_ppm;
	state->offcpu_wait = set->offcpu_raise_intervals;
	state->offcpu_park_wait = set->offcpu_raise_intervals;
	compose(set, state, state->budget_level, &state->current);
}

/*
 * Leaving a critical tier that drops caused raises the frequency (5 -> 19 Hz,
 * or to the user's -F, which may be far higher): the rate that overflowed the
 * ring would come straight back. Fold the jump into the divisor instead, so
 * the effective rate stays where it was calm and rises only by the divisor's
 * own halvings, each earned by drop_wait calm intervals.
 */
static void keep_rate_after_drops(const struct policy_settings *set, struct policy_state *st,
				  enum throttle_tier from, enum throttle_tier to, struct reason *r)
{
	struct throttle before, after;
	uint32_t factor = 1, old = st->divisor;

	throttle_for_tier(set->tiers, from, &before);
	throttle_for_tier(set->tiers, to, &after);
	while ((uint64_t)before.frequency_hz * factor < after.frequency_hz && factor < set->max_divisor)
		factor *= 2;
	st->divisor = min_u32(st->divisor * factor, set->max_divisor);
	st->critical_by_drops = false;
	st->since_relax = 0;
	st->drop_calm = 0;
	if (st->divisor != old)
		reason_add(r, "divisor %u -> %u to keep the calm rate", old, st->divisor);
}

static void update_tier(const struct policy_settings *set, struct policy_state *st,
			const struct policy_signals *sig, struct reason *r)
{
	const double cpu = sig->host_cpu_pct;
	const double margin = set->hysteresis_margin_pct;
	const double high_at = set->tiers[THROTTLE_TIER_HIGH].enter_cpu_pct;
	const double crit_at = set->tiers[THROTTLE_TIER_CRITICAL].enter_cpu_pct;
	const bool pressure_on = set->pressure_high_pct > 0.0 && sig->pressure_valid;
	const bool crit_by_cpu = cpu >= crit_at;
	const bool crit_by_drops = sig->stats_valid && sig->drop_pct > set->critical_drop_pct;
	const bool high_by_cpu = cpu >= high_at;
	const bool high_by_pressure = pressure_on && sig->cpu_pressure >= set->pressure_high_pct;
	enum throttle_tier raw = THROTTLE_TIER_HEALTHY;
	enum throttle_tier from = st->tier;
	enum throttle_tier to;

	if (crit_by_cpu || crit_by_drops)
		raw = THROTTLE_TIER_CRITICAL;
	else if (high_by_cpu || high_by_pressure)
		raw = THROTTLE_TIER_HIGH;

	/*
	 * Clear = below the trigger by the margin. Counted whatever the current
	 * tier, so a host that falls from 95% to idle leaves critical and high
	 * together after one hysteresis period, not one period per tier. Without
	 * loader stats the drop half of the critical trigger is unknown: its
	 * count is held, neither advanced nor reset.
	 */
	if (cpu >= crit_at - margin || (sig->stats_valid && sig->drop_pct >= set->drop_recover_pct))
		st->clear_intervals[THROTTLE_TIER_CRITICAL] = 0;
	else if (sig->stats_valid)
		bump(&st->clear_intervals[THROTTLE_TIER_CRITICAL]);
	if (cpu >= high_at - margin ||
	    (pressure_on && sig->cpu_pressure >= set->pressure_high_pct - margin))
		st->clear_intervals[THROTTLE_TIER_HIGH] = 0;
	else
		bump(&st->clear_intervals[THROTTLE_TIER_HIGH]);

	/* Latched until the tier is left: CPU load arriving on top does not make the
	 * overflow that happened at the higher rate any less real. */
	if (crit_by_drops)
		st->critical_by_drops = true;
	if (raw > from) {
		st->tier = raw;
		if (crit_by_cpu)
			reason_add(r, "host CPU %.1f%% >= %g%%: %s", cpu, crit_at, throttle_tier_name(raw));
		else if (crit_by_drops)
			reason_add(r, "drop rate %.1f%% > %g%%: %s", sig->drop_pct,
				   set->critical_drop_pct, throttle_tier_name(raw));
		else if (high_by_cpu)
			reason_add(r, "host CPU %.1f%% >= %g%%: %s", cpu, high_at, throttle_tier_name(raw));
		else
			reason_add(r, "CPU pressure %.1f >= %g: %s", sig->cpu_pressure,
				   set->pressure_high_pct, throttle_tier_name(raw));
		return;
	}
	if (from == THROTTLE_TIER_HEALTHY || st->clear_intervals[from] < set->hysteresis_intervals)
		return;
	/* Leaving a critical tier that drops caused is a relaxation like any other. */
	if (from == THROTTLE_TIER_CRITICAL && st->critical_by_drops &&
	    st->clear_intervals[from] < st->drop_wait)
		return;
	/* Leave as many tiers as have been clear long enough, never below what fires now. */
	to = from - 1;
	while (to > raw && to > THROTTLE_TIER_HEALTHY &&
	       st->clear_intervals[to] >= set->hysteresis_intervals)
		to--;
	st->tier = to;
	if (from == THROTTLE_TIER_CRITICAL && st->critical_by_drops)
		keep_rate_after_drops(set, st, from, to, r);
	if (from == THROTTLE_TIER_CRITICAL)
		reason_add(r, "host CPU %.1f%% < %g%% and drops < %g%% for %u intervals: %s -> %s",
			   cpu, crit_at - margin, set->drop_recover_pct, set->hysteresis_intervals,
			   throttle_tier_name(from), throttle_tier_name(to));
	else
		reason_add(r, "host CPU %.1f%% < %g%% for %u intervals: %s -> %s", cpu,
			   high_at - margin, set->hysteresis_intervals, throttle_tier_name(from),
			   throttle_tier_name(to));
}

/* The longest drop-recovery wait, in intervals. */
#define DROP_WAIT_MAX 64

static void update_divisor(const struct policy_settings *set, struct policy_state *st,
			   const struct policy_signals *sig, struct reason *r)
{
	uint32_t old = st->divisor;

	if (sig->drop_pct > set->drop_backoff_pct) {
		st->drop_calm = 0;
		if (st->since_relax < st->drop_wait) {
			/* A relapse soon after relaxing: wait twice as long next time. */
			st->drop_wait = min_u32(st->drop_wait * 2, DROP_WAIT_MAX);
			reason_add(r, "drops came back: recovery wait %u intervals", st->drop_wait);
		}
		st->since_relax = UINT32_MAX;
		if (old >= set->max_divisor)
			return;
		st->divisor = min_u32(old * 2, set->max_divisor);
		reason_add(r, "drop rate %.1f%% > %g%%: divisor %u -> %u", sig->drop_pct,
			   set->drop_backoff_pct, old, st->divisor);
		return;
	}
	if (sig->drop_pct >= set->drop_recover_pct) {
		/* Between the two thresholds: hold, and restart the calm count. */
		st->drop_calm = 0;
		return;
	}
	/* Calm at the critical tier's 5 Hz proves nothing about the rate that
	 * overflowed: the divisor relaxes only once that tier is left. */
	if (st->tier == THROTTLE_TIER_CRITICAL && st->critical_by_drops) {
		st->drop_calm = 0;
		return;
	}
	bump(&st->drop_calm);
	/* Calm for long after the last relaxation: the backoff is forgotten. */
	if (old <= 1 && !st->critical_by_drops && st->since_relax != UINT32_MAX &&
	    st->since_relax >= 2 * st->drop_wait)
		st->drop_wait = set->drop_recover_intervals;
	if (old <= 1 || st->drop_calm < st->drop_wait)
		return;
	/* Each halving must prove itself for a full recovery period before the next. */
	st->divisor = old / 2;
	st->drop_calm = 0;
	st->since_relax = 0;
	reason_add(r, "drop rate %.1f%% < %g%% for %u intervals: divisor %u -> %u", sig->drop_pct,
		   set->drop_recover_pct, st->drop_wait, old, st->divisor);
}

/* What each budget level does when taken, and when given back. */
static const char *const budget_step_names[] = {"none", "halve frequency", "frame pointers",
						  "shallow stacks", "pause sampling"};
static const char *const budget_undo_names[] = {"none", "restore frequency", "restore unwinding",
						  "restore depth", "resume sampling"};

static const char *budget_name(const char *const names[], enum policy_budget_level level)
{
	return level >= POLICY_BUDGET_HALF_FREQUENCY && level <= POLICY_BUDGET_PAUSED ? names[level]
										      : "none";
}

/*
 * The interval after a relaxation (a budget step given back, a doubled
 * probability, an unparked switch program) judges it: back over the line at
 * once, the wait before the next relaxation doubles (up to max); held, the
 * wait returns to base. Without this a load that only fits relaxed flaps
 * every other interval.
 */
static void settle_backoff(bool *just_relaxed, bool over, uint32_t *wait, uint32_t base,
			   uint32_t max)
{
	if (!*just_relaxed)
		return;
	*just_relaxed = false;
	*wait = over ? min_u32(*wait * 2, max) : base;
}

static void update_budget(const struct policy_settings *set, struct policy_state *st,
			  const struct policy_signals *sig, struct reason *r)
{
	const double budget = set->cpu_budget_pct;
	const double ov = sig->overhead_pct;
	enum policy_budget_level from = st->budget_level;
	enum policy_budget_level to = from;
	struct throttle now;
	struct throttle next;

	/*
	 * Backoff: a step up that breaches the budget in the very next interval
	 * doubles the calm wait before the next try, so a workload whose
	 * overhead only fits while paused does not flap every other interval.
	 * A step up that holds resets the wait.
	 */
	settle_backoff(&st->budget_just_raised, ov > budget, &st->budget_wait,
		       set->budget_recover_intervals, set->budget_backoff_max);
	compose(set, st, from, &now);

	if (ov > budget) {
		st->budget_calm = 0;
		if (from >= POLICY_BUDGET_PAUSED) {
			reason_add(r, "overhead %.2f%% > budget %g%% while paused", ov, budget);
			return;
		}
		/* Skip steps that change nothing here (the tier may already use fp). */
		do {
			to++;
			compose(set, st, to, &next);
		} while (to < POLICY_BUDGET_PAUSED && throttle_equal(&next, &now));
		st->budget_level = to;
		reason_add(r, "overhead %.2f%% > budget %g%%: %s", ov, budget, budget_name(budget_step_names, to));
		return;
	}
	if (ov >= budget / 2) {
		st->budget_calm = 0;
		return;
	}
	bump(&st->budget_calm);
	if (from == POLICY_BUDGET_NONE || st->budget_calm < st->budget_wait)
		return;
	do {
		to--;
		compose(set, st, to, &next);
	} while (to > POLICY_BUDGET_NONE && throttle_equal(&next, &now));
	st->budget_level = to;
	st->budget_calm = 0;
	st->budget_just_raised = true;
	reason_add(r, "overhead %.2f%% < %g%% for %u intervals: %s", ov, budget / 2,
		   st->budget_wait, budget_name(budget_undo_names, from));
}

/*
 * The off-CPU probability. The switch program's cost grows with the share of
 * switch-outs it unwinds (and the records the exporter then symbolizes), so
 * the probability is the lever that keeps off-CPU profiling inside the
 * budget without giving it up. Above offcpu_high_share of the budget it is cut
 * at once by the power of two that brings the cost under offcpu_low_share
 * (one interval over, not one per halving); while the cost stays under the
 * low share and the whole overhead under half the budget, it doubles back
 * after offcpu_wait calm intervals, a wait that doubles when a doubling is
 * cut in the very next interval. Intervals in which the program was detached
 * (the budget steps and the tiers do that) measure nothing: all is held.
 */
static void update_offcpu(const struct policy_settings *set, struct policy_state *st,
			  const struct policy_signals *sig, struct reason *r)
{
	const double high = set->cpu_budget_pct * set->offcpu_high_share;
	const double low = set->cpu_budget_pct * set->offcpu_low_share;
	const double cost = sig->offcpu_overhead_pct;
	uint32_t old = st->offcpu_ppm, floor = min_u32(set->offcpu_min_ppm, set->offcpu_max_ppm);
	uint64_t f = 2;

	if (set->offcpu_max_ppm == 0 || !sig->offcpu_ran)
		return;
	settle_backoff(&st->offcpu_just_raised, cost > high, &st->offcpu_wait,
		       set->offcpu_raise_intervals, set->offcpu_backoff_max);
	if (cost > high) {
		st->offcpu_calm = 0;
		if (old <= floor)
			return;
		while (f < LOWPROF_OFFCPU_PPM_ONE && cost / (double)f > low)
			f *= 2;
		st->offcpu_ppm = old / f > floor ? (uint32_t)(old / f) : floor;
		reason_add(r, "off-CPU %.3f%% > %g%% (%g of the budget): probability %g%% -> %g%%", cost,
			   high, set->offcpu_high_share, old / 1e4, st->offcpu_ppm / 1e4);
		return;
	}
	if (cost >= low || sig->overhead_pct >= set->cpu_budget_pct / 2) {
		st->offcpu_calm = 0;
		return;
	}
	bump(&st->offcpu_calm);
	if (old >= set->offcpu_max_ppm || st->offcpu_calm < st->offcpu_wait)
		return;
	st->offcpu_ppm = old > set->offcpu_max_ppm / 2 ? set->offcpu_max_ppm : old * 2;
	st->offcpu_calm = 0;
	st->offcpu_just_raised = true;
	reason_add(r, "off-CPU %.3f%% < %g%% for %u intervals: probability %g%% -> %g%%", cost, low,
		   st->offcpu_wait, old / 1e4, st->offcpu_ppm / 1e4);
}

/*
 * The floor. Attached, the switch program costs something at every switch
 * whatever the probability (the tracepoint's call, the look-up of the task
 * coming in): at a few hundred thousand switches a second that alone can be
 * more than the budget, and no cut of the probability helps. So the program
 * is parked (asked detached) while the host's switch rate, which /proc/stat
 * gives whether it is attached or not, times the floor last measured per
 * switch would take more than offcpu_high_share of the budget; it is let
 * back after offcpu_park_wait intervals predicted under offcpu_low_share, a
 * wait that doubles (up to offcpu_backoff_max) when the first interval back
 * predicts over again. Until a floor has been measured, nothing is parked:
 * the first interval of a storm is the one that measures it.
 */
static void update_offcpu_park(const struct policy_settings *set, struct policy_state *st,
			       const struct policy_signals *sig, struct reason *r)
{
	const double high = set->cpu_budget_pct * set->offcpu_high_share;
	const double low = set->cpu_budget_pct * set->offcpu_low_share;
	double predicted;

	if (set->offcpu_max_ppm == 0)
		return;
	if (sig->stats_valid && sig->offcpu_floor_valid)
		st->offcpu_floor_ns = sig->offcpu_floor_ns;
	if (st->offcpu_floor_ns <= 0.0 || !sig->host_switches_valid)
		return;
	/* % of the host's capacity: switches per CPU-second x seconds per switch. */
	predicted = sig->host_switches_per_cpu_s * st->offcpu_floor_ns / 1e9 * 100.0;
	settle_backoff(&st->offcpu_just_unparked, predicted > high, &st->offcpu_park_wait,
		       set->offcpu_raise_intervals, set->offcpu_backoff_max);
	if (!st->offcpu_parked) {
		if (predicted <= high)
			return;
		st->offcpu_parked = true;
		st->offcpu_park_calm = 0;
		reason_add(r, "off-CPU floor %.0f switches/s per CPU x %.0f ns = %.3f%% > %g%%: switch program parked",
			   sig->host_switches_per_cpu_s, st->offcpu_floor_ns, predicted, high);
		return;
	}
	if (predicted >= low) {
		st->offcpu_park_calm = 0;
		return;
	}
	bump(&st->offcpu_park_calm);
	if (st->offcpu_park_calm < st->offcpu_park_wait)
		return;
	st->offcpu_parked = false;
	st->offcpu_park_calm = 0;
	st->offcpu_just_unparked = true;
	reason_add(r, "off-CPU floor %.3f%% < %g%% for %u intervals: switch program back", predicted, low,
		   st->offcpu_park_wait);
}

void policy_step(const struct policy_settings *set, struct policy_state *state,
		 const struct policy_signals *sig, struct policy_decision *out)
{
	struct reason r = { .buf = out->reason, .size = sizeof(out->reason), .len = 0 };

	out->reason[0] = '\0';
	if (set->no_throttle) {
		/* Fixed settings for comparisons: nothing adapts (the BPF guard still does). */
		state->tier = THROTTLE_TIER_HEALTHY;
		state->divisor = 1;
		state->budget_level = POLICY_BUDGET_NONE;
		state->offcpu_ppm = set->offcpu_max_ppm;
		reason_add(&r, "no-throttle: fixed healthy settings");
		goto done;
	}
	if (sig->stats_valid && state->since_relax != UINT32_MAX)
		state->since_relax++;
	if (sig->host_valid)
		update_tier(set, state, sig, &r);
	else
		reason_add(&r, "host load unavailable: tier held");
	if (sig->stats_valid) {
		update_divisor(set, state, sig, &r);
		update_budget(set, state, sig, &r);
		update_offcpu(set, state, sig, &r);
	} else {
		reason_add(&r, "loader stats unavailable: divisor and budget held");
	}
	/* Host signals alone are enough: it decides while the program is detached. */
	update_offcpu_park(set, state, sig, &r);
done:
	compose(set, state, state->budget_level, &out->throttle);
	out->changed = !throttle_equal(&out->throttle, &state->current);
	state->current = out->throttle;
	if (r.len == 0)
		reason_add(&r, "steady: host CPU %.1f%%, drops %.1f%%, overhead %.2f%%",
			   sig->host_cpu_pct, sig->drop_pct, sig->overhead_pct);
}
