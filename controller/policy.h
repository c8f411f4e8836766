/*
 * The throttle policy: a pure function from (settings, state, this interval's
 * signals) to the sampling settings for the next interval. No I/O, no clock:
 * the controller feeds it one struct policy_signals per control interval, and
 * the unit tests feed it traces. docs/THROTTLE.md describes it for users.
 *
 * Three independent axes make up the result:
 *  - the tier (healthy / high / critical) from host CPU and the drop rate,
 *    entered at once, left only after its trigger has been clear for
 *    hysteresis_intervals by hysteresis_margin_pct;
 *  - the sample divisor, doubled every interval while drops exceed
 *    drop_backoff_pct, halved after drop_recover_intervals under
 *    drop_recover_pct;
 *  - the budget level, steps below the tier (halve frequency, frame pointers,
 *    depth 16, pause) taken one per interval while overhead exceeds the
 *    budget, given back one at a time while it stays under half the budget;
 *  - the off-CPU probability, cut when the switch program's cost is a large
 *    share of the budget, doubled back slowly while it is a small one; and
 *    the program parked (detached) while its floor, its cost at every switch
 *    whatever the probability, would alone be a large share at the host's
 *    switch rate.
 */
#ifndef LOWPROF_CONTROLLER_POLICY_H
#define LOWPROF_CONTROLLER_POLICY_H

#include <linux/types.h> /* before bpf/lowprof.h */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/lowprof.h"
#include "ipc/throttle.h"

/* Budget steps beyond the tier, cumulative: level 3 = halved + fp + depth 16. */
enum policy_budget_level {
	POLICY_BUDGET_NONE = 0,
	POLICY_BUDGET_HALF_FREQUENCY = 1,
	POLICY_BUDGET_FRAME_POINTERS = 2,
	POLICY_BUDGET_SHALLOW = 3,
	POLICY_BUDGET_PAUSED = 4,
};

struct policy_settings {
	/*
	 * tiers[THROTTLE_TIER_HEALTHY].frequency_hz is the user's -F: the ceiling
	 * of every tier. Each higher tier runs strictly below the one before it
	 * (never below 1 Hz), never with DWARF when the one before uses frame
	 * pointers, and never deeper than the one before.
	 */
	struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT];
	double critical_drop_pct;      /* drop rate above which critical (5) */
	double pressure_high_pct;      /* CPU pressure some avg10 entering high; 0 = off */
	uint32_t hysteresis_intervals; /* clear intervals before leaving a tier (3) */
	double hysteresis_margin_pct;  /* points below the trigger that count as clear (10) */
	double drop_backoff_pct;       /* drop rate above which the divisor doubles (5) */
	double drop_recover_pct;       /* drop rate under which it may halve (1) */
	uint32_t drop_recover_intervals; /* clean intervals before each halving (3) */
	uint32_t max_divisor;          /* power of two (64) */
	double cpu_budget_pct;         /* agent overhead budget, % of host capacity (1.5) */
	uint32_t budget_min_depth;     /* depth of the "shallow" budget step (16) */
	uint32_t budget_recover_intervals; /* calm intervals before a step back up (1) */
	uint32_t budget_backoff_max;   /* cap of that wait after failed recoveries (32) */
	bool no_throttle;              /* hold the healthy tier, divisor 1, never pause */
	/* Off-CPU (docs/THROTTLE.md, "Off-CPU"); offcpu_max_ppm 0: no off-CPU profiling. */
	uint32_t offcpu_max_ppm;       /* the user's --off-cpu-probability: the ceiling, in ppm */
	uint32_t offcpu_min_ppm;       /* the floor of the cuts (100 ppm = 0.01%) */
	double offcpu_high_share;      /* off-CPU cost above this share of the budget: cut (0.5) */
	double offcpu_low_share;       /* a cut aims under this share; under it, calm (0.25) */
	uint32_t offcpu_raise_intervals; /* calm intervals before each doubling (5) */
	uint32_t offcpu_backoff_max;   /* cap of that wait after doublings that failed (80) */
};

/* What the policy reads each interval. */
struct policy_signals {
	bool host_valid;        /* host_cpu_pct measured */
	double host_cpu_pct;    /* whole host, 0..100 */
	bool pressure_valid;    /* /proc/pressure/cpu present and read */
	double cpu_pressure;    /* "some avg10" */
	bool stats_valid;       /* the loader answered: drop_pct and overhead_pct are real */
	double drop_pct;        /* failures / (failures + submitted) x 100 */
	double overhead_pct;    /* (BPF + agent CPU) / (online CPUs x interval) x 100 */
	bool offcpu_ran;        /* the switch program ran in the interval (it was attached) */
	/* Its cost, % of capacity: its BPF time (part of overhead_pct) and its
	 * records' share of the agent's CPU. */
	double offcpu_overhead_pct;
	/* The host's context switches per CPU-second (/proc/stat ctxt): known
	 * whether or not the switch program is attached. */
	bool host_switches_valid;
	double host_switches_per_cpu_s;
	/* The switch program's floor this interval: ns per run that recorded
	 * nothing (valid after OFFCPU_FLOOR_MIN_RUNS such runs). */
	bool offcpu_floor_valid;
	double offcpu_floor_ns;
};

/* Runs that recorded nothing needed before their mean is taken as the floor. */
#define OFFCPU_FLOOR_MIN_RUNS 100

/* Carried from one interval to the next; initialise with policy_state_init. */
struct policy_state {
	struct throttle current;  /* the last decision */
	enum throttle_tier tier;
	uint32_t clear_intervals[THROTTLE_TIER_COUNT]; /* consecutive intervals each tier's trigger was clear */
	uint32_t divisor;
	uint32_t drop_calm;              /* consecutive intervals under drop_recover_pct */
	/*
	 * Drop recovery backs off: drop_wait calm intervals are needed before each
	 * relaxation (a divisor halving, or leaving a critical tier that drops
	 * caused); a storm within drop_wait intervals of a relaxation doubles it.
	 * Without this a host whose ring overflows above some rate would relapse
	 * every few intervals forever.
	 */
	uint32_t drop_wait;
	uint32_t since_relax;            /* intervals since the last relaxation */
	bool critical_by_drops;          /* critical was entered (or held) because of drops */
	enum policy_budget_level budget_level;
	uint32_t budget_calm;            /* consecutive intervals under half the budget */
	uint32_t budget_wait;            /* calm intervals needed for the next step up */
	bool budget_just_raised;         /* the last interval stepped up */
	uint32_t offcpu_ppm;             /* the off-CPU probability decided; 0 without off-CPU */
	uint32_t offcpu_calm;            /* consecutive measured intervals under the low share */
	uint32_t offcpu_wait;            /* calm intervals needed for the next doubling */
	bool offcpu_just_raised;         /* the last measured interval doubled it */
	double offcpu_floor_ns;          /* the last floor measured per switch; 0: not yet */
	bool offcpu_parked;              /* the switch program is asked detached */
	uint32_t offcpu_park_calm;       /* parked intervals whose prediction was under the low share */
	uint32_t offcpu_park_wait;       /* ... needed before it is let back */
	bool offcpu_just_unparked;       /* the last interval let it back */
};

struct policy_decision {
	struct throttle throttle; /* the full state to apply */
	bool changed;                    /* differs from the previous decision */
	char reason[256];                /* why, for the log: "host CPU 93.1% >= 90%: critical" */
};

/* Defaults (DESIGN-NOTES section 1) with the user's -F as the healthy frequency. */
void policy_settings_default(struct policy_settings *set, uint32_t user_frequency_hz);

/* 0 if the settings are coherent, else -EINVAL and the first problem in err. */
int policy_settings_check(const struct policy_settings *set, char *err, size_t errlen);

/* Start healthy, divisor 1, no budget step: state->current is what to apply first. */
void policy_state_init(struct policy_state *state, const struct policy_settings *set);

/* One control interval. set must have passed policy_settings_check. */
void policy_step(const struct policy_settings *set, struct policy_state *state,
		 const struct policy_signals *sig, struct policy_decision *out);

#endif /* LOWPROF_CONTROLLER_POLICY_H */
