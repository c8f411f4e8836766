/*
 * The throttle: what sampling settings are in force, in one definition for
 * every process that speaks of them. The controller's policy decides one, the
 * loader applies it to its BPF session and reports it, the control wire
 * (ipc/lowprof_ctl.proto) carries it, and the exporter names its tier in the
 * timeline. Also here: the tier and unwind-mode names, and the default tier
 * table the policy starts from and the loader's fail-safe uses.
 */
#ifndef LOWPROF_IPC_THROTTLE_H
#define LOWPROF_IPC_THROTTLE_H

#include <linux/types.h> /* before bpf/lowprof.h */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/lowprof.h"
#include "ipc/lowprof_ctl.pb-c.h"

/* The tiers, as numbered in the timeline records (ipc/loader_stats.h). */
enum throttle_tier {
	THROTTLE_TIER_HEALTHY = 0,
	THROTTLE_TIER_HIGH = 1,
	THROTTLE_TIER_CRITICAL = 2,
	THROTTLE_TIER_COUNT = 3,
};

/* Drop rate (%) above which the critical tier is entered, whatever the host CPU. */
#define THROTTLE_CRITICAL_DROP_PCT 5.0

/* One throttle state: what the loader is asked for, applies, and reports. */
struct throttle {
	enum throttle_tier tier;
	uint32_t frequency_hz;
	enum lowprof_unwind_mode unwind_mode;
	uint32_t max_depth;
	uint32_t sample_divisor;
	bool paused;
	/*
	 * Off-CPU sampling probability in parts per million (LOWPROF_OFFCPU_PPM_ONE
	 * is every switch-out). 0: no off-CPU profiling; in a request, keep the
	 * probability in force.
	 */
	uint32_t offcpu_prob_ppm;
	/*
	 * The switch program detached whatever the tier: the controller predicts
	 * that its floor (its cost at every switch, at any probability) would
	 * alone exceed off-CPU's share of the budget at the host's switch rate.
	 * Always false without off-CPU profiling.
	 */
	bool offcpu_parked;
};

/* One row of the tier table. */
struct throttle_tier_settings {
	uint32_t frequency_hz;
	enum lowprof_unwind_mode unwind_mode;
	uint32_t max_depth;
	/* Host CPU % at or above which the tier is entered (unused for healthy). */
	double enter_cpu_pct;
};

/*
 * The default tier table: healthy at the user's -F with DWARF, depth 64;
 * high 11 Hz frame pointers depth 48 from 80% host CPU; critical 5 Hz frame
 * pointers depth 32 from 90% (or drops above THROTTLE_CRITICAL_DROP_PCT).
 */
void throttle_tiers_default(struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT],
			    uint32_t user_frequency_hz);

/*
 * The settings of tier, each tier capped by the one below it: strictly below
 * its frequency (never below 1 Hz), never DWARF above frame pointers, never
 * deeper. Divisor 1, not paused.
 */
void throttle_for_tier(const struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT],
		       enum throttle_tier tier, struct throttle *out);

/* "healthy", "high", "critical"; "?" for any other value. */
const char *throttle_tier_name(unsigned tier);
/* "dwarf" or "fp". */
const char *throttle_unwind_name(unsigned unwind_mode);

/* --off-cpu-probability (a percentage) in ppm, clamped to [1, LOWPROF_OFFCPU_PPM_ONE]:
 * the loader's ceiling and the controller's, computed alike. */
uint32_t throttle_offcpu_ppm(double pct);

bool throttle_equal(const struct throttle *a, const struct throttle *b);

/* The agent's overhead over an interval, in % of the host's capacity: its BPF
 * run time and its processes' CPU over online_cpus x interval_ns (0 CPUs
 * count as one; an empty interval costs 0). What the budget is held to; the
 * controller, the loader (`lowprof status`, the steady test) and summary.json's
 * timeline all say it through this. */
double throttle_overhead_pct(uint64_t bpf_run_time_ns, uint64_t agent_cpu_ns, uint32_t online_cpus,
			     uint64_t interval_ns);
/* Samples lost to a full ring, in % of those taken (lost + submitted); 0 with none. */
double throttle_drop_pct(uint64_t lost, uint64_t submitted);
/*
 * A quiet control interval: at most a sample a second of it (the odd daemon
 * on an idle host), nothing lost, no off-CPU record, at the healthy tier,
 * undivided, not paused and the switch program not parked (each interval
 * then tells whether the switch rate lets it back). There is nothing to throttle: the loader makes
 * the next interval longer (throttle_quiet_span: fewer wake-ups for it, the
 * controller and the exporter on an idle host), unless a burst of samples
 * (the BPF program wakes the loader for it), a new throttle or the
 * controller's silence end it sooner. The controller applies the same test
 * to the Stats pushed to it, to know when the next push is due.
 */
#define THROTTLE_QUIET_SAMPLES_PER_S 1
bool throttle_quiet(const struct throttle *t, uint64_t samples, uint64_t drops,
		    uint64_t offcpu_records, uint64_t interval_ns);

/*
 * How many control intervals the interval after the run-th quiet one in a row
 * lasts (run >= 1): 2, 4, then max_intervals (at least 2), which the loader
 * and the controller take from the liveness pings (a pass of the loop carries
 * them: throttle_quiet_max_intervals). 1 when run is 0.
 */
unsigned throttle_quiet_span(unsigned run, unsigned max_intervals);
/* The longest quiet span: whole control intervals within one ping interval, at least 2. */
unsigned throttle_quiet_max_intervals(uint64_t control_interval_ns, uint64_t ping_interval_ns);

/*
 * A steady control interval, on a busy host: the throttle in force is its
 * tier's own (no budget step, undivided, not paused), nothing was lost, no
 * off-CPU record, the overhead at most half the budget, and the host's load
 * inside the tier's band: from THROTTLE_STEADY_BAND_PCT under the tier's
 * entry (a tier is left only 10 points under it) to as far under the next
 * tier's. The policy would decide the same again: the loader makes the next
 * interval THROTTLE_STEADY_SPAN intervals long, one wake-up in two for it
 * and the controller (a decision waits at most one interval more: still
 * within three), unless the ring filling (the BPF program wakes the loader
 * at a quarter: before any loss) or a new throttle ends it sooner.
 * fixed (--no-throttle): nothing is decided, so only the losses count (and
 * the intervals lengthen further: throttle_steady_span).
 * host_cpu_pct < 0: unknown, never steady. overhead_pct and budget_pct in %
 * of the host's capacity.
 */
#define THROTTLE_STEADY_SPAN 2
#define THROTTLE_STEADY_BAND_PCT 5.0
bool throttle_steady(const struct throttle *t, const struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT],
		     bool fixed, double host_cpu_pct, uint64_t drops, uint64_t offcpu_records,
		     double overhead_pct, double budget_pct);
/*
 * How many control intervals the interval after the run-th steady one in a
 * row lasts (run >= 1). Throttled: THROTTLE_STEADY_SPAN, which keeps a
 * decision within three intervals of its signal. Fixed (--no-throttle):
 * nothing waits on a decision, so steady intervals lengthen as quiet ones
 * do (throttle_quiet_span: 2, 4, then max_intervals); the ring filling still
 * wakes the loader before any loss, and its drain goes on in the interval.
 */
unsigned throttle_steady_span(bool fixed, unsigned run, unsigned max_intervals);
/*
 * While a steady interval span_ns long runs, the BPF program wakes the
 * loader once the ring holds this many bytes: half as much again as the
 * last interval's rate (bytes drained over interval_ns) would leave by the
 * steady interval's end, plus floor_bytes (a few samples: a rest's wake).
 * At that rate it is not reached; load coming to the host (more CPUs busy,
 * more samples) reaches it early, and the interval ends then, as a rest
 * does. floor_bytes when interval_ns is 0.
 */
uint64_t throttle_steady_wake_bytes(uint64_t bytes, uint64_t interval_ns, uint64_t span_ns,
				    uint64_t floor_bytes);

/* "healthy 19 Hz dwarf depth 64 divisor 1" (" paused", " off-cpu 50%" appended), for logs. */
void throttle_describe(const struct throttle *t, char *buf, size_t len);

/* The wire message of t. */
void throttle_to_wire(const struct throttle *t, Lowprof__Ctl__ThrottleState *out);

/*
 * The throttle a wire message carries. Returns 0, or -EINVAL when its tier or
 * unwind mode is not a known value: out is filled all the same, an unknown
 * tier read as critical and an unknown unwind mode as fp (the safe side), for
 * a reader that only reports what the loader said.
 */
int throttle_from_wire(const Lowprof__Ctl__ThrottleState *st, struct throttle *out);

#endif /* LOWPROF_IPC_THROTTLE_H */
