#include "supervisor/restart_policy.h"

#include <string.h>

void restart_settings_default(struct restart_settings *s)
{
	s->backoff_floor_ms = 200;
	s->backoff_cap_ms = 30000;
	s->stable_after_ms = 60000;
	s->crash_limit = 10;
	s->crash_window_ms = 5 * 60 * 1000;
}

void restart_state_init(struct restart_state *st, const struct restart_settings *s)
{
	memset(st, 0, sizeof(*st));
	st->delay_ms = s->backoff_floor_ms;
	st->ready_since_ms = -1;
}

void restart_policy_ready(struct restart_state *st, int64_t now_ms)
{
	if (st->ready_since_ms < 0)
		st->ready_since_ms = now_ms;
}

/* Deaths older than the window no longer count towards the crash loop. */
static void restart_policy_expire(struct restart_state *st, const struct restart_settings *s,
				  int64_t now_ms)
{
	unsigned i, kept = 0;

	for (i = 0; i < st->ndeaths; i++) {
		if (now_ms - st->deaths[i] < s->crash_window_ms)
			st->deaths[kept++] = st->deaths[i];
	}
	st->ndeaths = kept;
}

enum restart_verdict restart_policy_died(struct restart_state *st, const struct restart_settings *s,
					 int64_t now_ms, bool permanent)
{
	bool was_stable = st->ready_since_ms >= 0 && now_ms - st->ready_since_ms >= s->stable_after_ms;
	unsigned limit = s->crash_limit < RESTART_POLICY_MAX_DEATHS - 1 ? s->crash_limit
									 : RESTART_POLICY_MAX_DEATHS - 1;

	st->ready_since_ms = -1;
	if (permanent) {
		st->failed = true;
		return RESTART_FAILED;
	}
	restart_policy_expire(st, s, now_ms);
	if (st->ndeaths < RESTART_POLICY_MAX_DEATHS)
		st->deaths[st->ndeaths++] = now_ms;
	/* The limit is how many deaths are tolerated in the window: one more is a loop. */
	if (st->ndeaths > limit) {
		st->failed = true;
		return RESTART_FAILED;
	}
	/* A component that ran well for a while starts over from the floor. */
	if (was_stable)
		st->delay_ms = s->backoff_floor_ms;
	st->restart_at_ms = now_ms + st->delay_ms;
	st->delay_ms *= 2;
	if (st->delay_ms > s->backoff_cap_ms)
		st->delay_ms = s->backoff_cap_ms;
	st->total_restarts++;
	return RESTART_AFTER_DELAY;
}

void restart_policy_reset(struct restart_state *st, const struct restart_settings *s)
{
	unsigned restarts = st->total_restarts;

	restart_state_init(st, s);
	st->total_restarts = restarts;
}
