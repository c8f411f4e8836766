#include "ipc/throttle.h"

#include <errno.h>
#include <stdio.h>

#include "bpf/offcpu.h"
#include "ipc/wire.h"

static const char *const throttle_tier_names[THROTTLE_TIER_COUNT] = {"healthy", "high", "critical"};

const char *throttle_tier_name(unsigned tier)
{
	return tier < THROTTLE_TIER_COUNT ? throttle_tier_names[tier] : "?";
}

const char *throttle_unwind_name(unsigned unwind_mode)
{
	return unwind_mode == LOWPROF_UNWIND_DWARF ? "dwarf" : "fp";
}

void throttle_tiers_default(struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT],
			    uint32_t user_frequency_hz)
{
	tiers[THROTTLE_TIER_HEALTHY] = (struct throttle_tier_settings){
		.frequency_hz = user_frequency_hz, .unwind_mode = LOWPROF_UNWIND_DWARF,
		.max_depth = 64, .enter_cpu_pct = 0.0 };
	tiers[THROTTLE_TIER_HIGH] = (struct throttle_tier_settings){
		.frequency_hz = 11, .unwind_mode = LOWPROF_UNWIND_FP, .max_depth = 48,
		.enter_cpu_pct = 80.0 };
	tiers[THROTTLE_TIER_CRITICAL] = (struct throttle_tier_settings){
		.frequency_hz = 5, .unwind_mode = LOWPROF_UNWIND_FP, .max_depth = 32,
		.enter_cpu_pct = 90.0 };
}

void throttle_for_tier(const struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT],
		       enum throttle_tier tier, struct throttle *out)
{
	const struct throttle_tier_settings *h = &tiers[THROTTLE_TIER_HEALTHY];

	out->tier = tier;
	out->frequency_hz = h->frequency_hz;
	out->unwind_mode = h->unwind_mode;
	out->max_depth = h->max_depth;
	out->sample_divisor = 1;
	out->paused = false;
	out->offcpu_prob_ppm = 0;
	out->offcpu_parked = false;
	/*
	 * Walk up from healthy so each tier is capped by the one below it: above
	 * the high threshold the rate is always lower than what the user asked,
	 * even when -F is below the tier's own default.
	 */
	for (int t = THROTTLE_TIER_HIGH; t <= (int)tier && t < THROTTLE_TIER_COUNT; t++) {
		const struct throttle_tier_settings *ts = &tiers[t];
		uint32_t below = out->frequency_hz > 1 ? out->frequency_hz - 1 : 1;

		out->frequency_hz = ts->frequency_hz < below ? ts->frequency_hz : below;
		if (out->unwind_mode != LOWPROF_UNWIND_FP)
			out->unwind_mode = ts->unwind_mode;
		if (ts->max_depth < out->max_depth)
			out->max_depth = ts->max_depth;
	}
}

uint32_t throttle_offcpu_ppm(double pct)
{
	double ppm = pct / 100.0 * LOWPROF_OFFCPU_PPM_ONE + 0.5;

	if (!(ppm >= 1.0))
		return 1;
	return ppm >= LOWPROF_OFFCPU_PPM_ONE ? LOWPROF_OFFCPU_PPM_ONE : (uint32_t)ppm;
}

bool throttle_equal(const struct throttle *a, const struct throttle *b)
{
	return a->tier == b->tier && a->frequency_hz == b->frequency_hz &&
	       a->unwind_mode == b->unwind_mode && a->max_depth == b->max_depth &&
	       a->sample_divisor == b->sample_divisor && a->paused == b->paused &&
	       a->offcpu_prob_ppm == b->offcpu_prob_ppm && a->offcpu_parked == b->offcpu_parked;
}

double throttle_overhead_pct(uint64_t bpf_run_time_ns, uint64_t agent_cpu_ns, uint32_t online_cpus,
			     uint64_t interval_ns)
{
	double capacity = (double)(online_cpus > 0 ? online_cpus : 1) * (double)interval_ns;

	if (interval_ns == 0)
		return 0.0;
	return ((double)bpf_run_time_ns + (double)agent_cpu_ns) / capacity * 100.0;
}

double throttle_drop_pct(uint64_t lost, uint64_t submitted)
{
	double total = (double)lost + (double)submitted;

	return total > 0 ? (double)lost / total * 100.0 : 0.0;
}

bool throttle_quiet(const struct throttle *t, uint64_t samples, uint64_t drops,
		    uint64_t offcpu_records, uint64_t interval_ns)
{
	/* Whole seconds, rounded: an interval ticks up to a quarter early. */
	uint64_t seconds = interval_ns / 1000000000ull + (interval_ns % 1000000000ull >= 500000000ull);

	return samples <= seconds * THROTTLE_QUIET_SAMPLES_PER_S &&
	       drops == 0 && offcpu_records == 0 && t->tier == THROTTLE_TIER_HEALTHY &&
	       t->sample_divisor <= 1 && !t->paused && !t->offcpu_parked;
}

bool throttle_steady(const struct throttle *t, const struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT],
		     bool fixed, double host_cpu_pct, uint64_t drops, uint64_t offcpu_records,
		     double overhead_pct, double budget_pct)
{
	struct throttle own;
	double low, high;

	if (drops != 0 || offcpu_records != 0 || t->paused || t->sample_divisor > 1 || t->offcpu_parked)
		return false;
	if (fixed)
		return true;
	if ((unsigned)t->tier >= THROTTLE_TIER_COUNT || host_cpu_pct < 0 || overhead_pct * 2 > budget_pct)
		return false;
	throttle_for_tier(tiers, t->tier, &own);
	if (t->frequency_hz != own.frequency_hz || t->unwind_mode != own.unwind_mode ||
	    t->max_depth != own.max_depth)
		return false;
	low = t->tier == THROTTLE_TIER_HEALTHY ? -1.0 : tiers[t->tier].enter_cpu_pct - THROTTLE_STEADY_BAND_PCT;
	high = t->tier + 1 >= THROTTLE_TIER_COUNT ? 101.0
						: tiers[t->tier + 1].enter_cpu_pct - THROTTLE_STEADY_BAND_PCT;
	return host_cpu_pct >= low && host_cpu_pct < high;
}

uint64_t throttle_steady_wake_bytes(uint64_t bytes, uint64_t interval_ns, uint64_t span_ns,
				    uint64_t floor_bytes)
{
	double expected;

	if (interval_ns == 0)
		return floor_bytes;
	expected = 1.5 * (double)bytes * (double)span_ns / (double)interval_ns;
	return expected >= (double)(UINT64_MAX / 2) ? UINT64_MAX / 2 : floor_bytes + (uint64_t)expected;
}

unsigned throttle_steady_span(bool fixed, unsigned run, unsigned max_intervals)
{
	if (!fixed || run == 0)
		return THROTTLE_STEADY_SPAN;
	return throttle_quiet_span(run, max_intervals);
}

unsigned throttle_quiet_span(unsigned run, unsigned max_intervals)
{
	unsigned span;

	if (run == 0)
		return 1;
	if (max_intervals < 2)
		max_intervals = 2;
	span = run >= 3 ? max_intervals : 1u << run;
	return span < max_intervals ? span : max_intervals;
}

unsigned throttle_quiet_max_intervals(uint64_t control_interval_ns, uint64_t ping_interval_ns)
{
	uint64_t n = control_interval_ns > 0 ? ping_interval_ns / control_interval_ns : 0;

	return n < 2 ? 2 : n > 64 ? 64 : (unsigned)n;
}

void throttle_describe(const struct throttle *t, char *buf, size_t len)
{
	char off[32] = "";

	if (t->offcpu_prob_ppm > 0)
		snprintf(off, sizeof(off), " off-cpu %g%%%s", (double)t->offcpu_prob_ppm / 1e4,
			 t->offcpu_parked ? " parked" : "");
	snprintf(buf, len, "%s %u Hz %s depth %u divisor %u%s%s", throttle_tier_name(t->tier),
		 t->frequency_hz, throttle_unwind_name(t->unwind_mode), t->max_depth,
		 t->sample_divisor, t->paused ? " paused" : "", off);
}

void throttle_to_wire(const struct throttle *t, Lowprof__Ctl__ThrottleState *out)
{
	lowprof__ctl__throttle_state__init(out);
	out->tier = (Lowprof__Ctl__Tier)(LOWPROF__CTL__TIER__TIER_HEALTHY + (int)t->tier);
	out->frequency_hz = t->frequency_hz;
	out->unwind_mode = wire_unwind_from_lowprof((int)t->unwind_mode);
	out->max_depth = t->max_depth;
	out->sample_divisor = t->sample_divisor;
	out->paused = t->paused;
	out->offcpu_prob_ppm = t->offcpu_prob_ppm;
	out->offcpu_parked = t->offcpu_parked;
}

int throttle_from_wire(const Lowprof__Ctl__ThrottleState *st, struct throttle *out)
{
	int mode = wire_unwind_to_lowprof(st->unwind_mode);
	/* Compared as unsigned: an enum read off the wire can hold any int32. */
	unsigned tier = (unsigned)st->tier - (unsigned)LOWPROF__CTL__TIER__TIER_HEALTHY;
	bool known = mode >= 0 && tier < THROTTLE_TIER_COUNT;

	out->tier = tier < THROTTLE_TIER_COUNT ? (enum throttle_tier)tier : THROTTLE_TIER_CRITICAL;
	out->frequency_hz = st->frequency_hz;
	out->unwind_mode = mode >= 0 ? (enum lowprof_unwind_mode)mode : LOWPROF_UNWIND_FP;
	out->max_depth = st->max_depth;
	out->sample_divisor = st->sample_divisor;
	out->paused = st->paused;
	out->offcpu_prob_ppm = st->offcpu_prob_ppm;
	out->offcpu_parked = st->offcpu_parked;
	return known ? 0 : -EINVAL;
}
