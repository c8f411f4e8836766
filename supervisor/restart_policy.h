/*
 * When to restart a component that died: exponential backoff from a floor,
 * reset once the component has stayed ready long enough, and a crash-loop
 * limit after which it is reported failed instead of respawned forever.
 * Pure logic on timestamps: no clock, no processes (unit-tested alone).
 */
#ifndef LOWPROF_SUPERVISOR_RESTART_POLICY_H
#define LOWPROF_SUPERVISOR_RESTART_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#define RESTART_POLICY_MAX_DEATHS 64

struct restart_settings {
	int64_t backoff_floor_ms;   /* first delay (default 200 ms) */
	int64_t backoff_cap_ms;     /* delays double up to this (default 30 s) */
	int64_t stable_after_ms;    /* ready this long: backoff resets (default 60 s) */
	unsigned crash_limit;       /* more deaths than this ... (default 10) */
	int64_t crash_window_ms;    /* ... within this window: failed (default 5 min) */
};

enum restart_verdict {
	RESTART_AFTER_DELAY, /* respawn at restart_at_ms */
	RESTART_FAILED,      /* crash loop, or a permanent error: do not respawn */
};

struct restart_state {
	int64_t delay_ms;          /* the next delay */
	int64_t ready_since_ms;    /* -1 when not ready */
	int64_t deaths[RESTART_POLICY_MAX_DEATHS]; /* recent death times, ring */
	unsigned ndeaths;          /* deaths recorded in the ring (<= crash_limit) */
	unsigned total_restarts;   /* for `lowprof status` and summary.json */
	int64_t restart_at_ms;
	bool failed;
};

void restart_settings_default(struct restart_settings *s);
void restart_state_init(struct restart_state *st, const struct restart_settings *s);
/* The component reported ready at now_ms. */
void restart_policy_ready(struct restart_state *st, int64_t now_ms);
/*
 * The component died at now_ms. permanent: it exited with the reserved
 * "configuration error" status. Returns the verdict; with RESTART_AFTER_DELAY,
 * st->restart_at_ms says when.
 */
enum restart_verdict restart_policy_died(struct restart_state *st, const struct restart_settings *s,
					 int64_t now_ms, bool permanent);
/* `lowprof restart COMPONENT`: forget the failure and the tally. */
void restart_policy_reset(struct restart_state *st, const struct restart_settings *s);

#endif
