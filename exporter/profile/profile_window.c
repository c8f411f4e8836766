#include "exporter/profile/profile_window.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "exporter/profile/profile.h"

struct profile_window_slot {
	struct profile *p;
	uint64_t start_ns, end_ns;
	/* It leaves the window once now passes this: start + window for an
	 * interval, later for a reloaded window (profile_window_adopt). */
	uint64_t leave_ns;
	/* Its stacks are still keyed by every pid: folded (profile_fold_gone)
	 * at the next roll, against the interval that closes then. */
	bool unfolded;
};

struct profile_window {
	/* Closed intervals, oldest first, in a ring of cap slots. */
	struct profile_window_slot *ring;
	size_t cap, head, count;
	struct profile_window_slot cur;
	struct profile *merged;
	uint64_t window_ns, interval_ns, expired;
	/* Changes to what the closed intervals hold (profile_window_stats.changes). */
	uint64_t changes;
	size_t max_stacks;
	bool fold_gone;
	void (*progress)(void *arg);
	void *progress_arg;
};

static struct profile *profile_window_new_profile(const struct profile_window *pw)
{
	struct profile *p = profile_new();

	if (p != NULL)
		profile_set_max_stacks(p, pw->max_stacks);
	return p;
}

struct profile_window *profile_window_new(uint64_t window_ns, uint64_t interval_ns,
					  size_t max_stacks, uint64_t now_ns)
{
	struct profile_window *pw;

	if (interval_ns == 0 || window_ns < interval_ns)
		return NULL;
	pw = calloc(1, sizeof(*pw));
	if (pw == NULL)
		return NULL;
	pw->window_ns = window_ns;
	pw->interval_ns = interval_ns;
	pw->max_stacks = max_stacks;
	pw->fold_gone = true;
	/* The window's intervals, a restored one and a late roll's. */
	pw->cap = (size_t)(window_ns / interval_ns) + 3;
	pw->ring = calloc(pw->cap, sizeof(*pw->ring));
	pw->cur.p = profile_window_new_profile(pw);
	pw->cur.start_ns = now_ns;
	if (pw->ring == NULL || pw->cur.p == NULL) {
		profile_window_free(pw);
		return NULL;
	}
	return pw;
}

/* Samples, or samples refused: an interval whose coming or going changes the files. */
static bool profile_window_holds_something(const struct profile *p)
{
	struct profile_totals t;

	profile_get_totals(p, &t);
	return t.samples > 0 || t.dropped_samples > 0;
}

static struct profile_window_slot *profile_window_at(const struct profile_window *pw, size_t i)
{
	return &pw->ring[(pw->head + i) % pw->cap];
}

static void profile_window_drop_oldest(struct profile_window *pw)
{
	struct profile_window_slot *s = profile_window_at(pw, 0);

	if (profile_window_holds_something(s->p))
		pw->changes++;
	profile_free(s->p);
	s->p = NULL;
	pw->head = (pw->head + 1) % pw->cap;
	pw->count--;
	pw->expired++;
}

void profile_window_free(struct profile_window *pw)
{
	if (pw == NULL)
		return;
	while (pw->count > 0)
		profile_window_drop_oldest(pw);
	profile_free(pw->cur.p);
	profile_free(pw->merged);
	free(pw->ring);
	free(pw);
}

struct profile *profile_window_current(struct profile_window *pw)
{
	return pw->cur.p;
}

/* Intervals that started more than a window before now leave it, oldest first. */
static void profile_window_expire(struct profile_window *pw, uint64_t now_ns)
{
	while (pw->count > 0 && profile_window_at(pw, 0)->leave_ns < now_ns)
		profile_window_drop_oldest(pw);
}

static void profile_window_push(struct profile_window *pw, const struct profile_window_slot *s)
{
	/* A clock that jumped (or rolls faster than the interval) may fill the
	 * ring before anything expires: the oldest goes first all the same. */
	if (pw->count == pw->cap)
		profile_window_drop_oldest(pw);
	*profile_window_at(pw, pw->count) = *s;
	pw->count++;
}

/*
 * The intervals still keyed by every pid, but the newest, are folded against
 * it: a process with no sample in the interval after one is taken as gone,
 * and its stacks there are keyed by comm alone (profile_fold_gone). Usually
 * one interval's worth of work per roll, whatever the window. A fold that
 * cannot be had (out of memory) leaves the interval as it was.
 */
static void profile_window_fold(struct profile_window *pw)
{
	const struct profile *live;
	struct profile_window_slot *s;
	struct profile *f;
	size_t i;

	if (pw->count < 2)
		return;
	live = profile_window_at(pw, pw->count - 1)->p;
	for (i = 0; i + 1 < pw->count; i++) {
		s = profile_window_at(pw, i);
		if (!s->unfolded)
			continue;
		s->unfolded = false;
		/* Nothing to fold, and nothing changes. */
		if (!profile_window_holds_something(s->p))
			continue;
		f = profile_window_new_profile(pw);
		if (f == NULL)
			continue;
		if (profile_fold_gone(f, s->p, live) != 0) {
			profile_free(f);
			continue;
		}
		profile_set_time(f, s->start_ns, s->end_ns);
		/* Only merged from until it leaves: no index needed. */
		profile_compact(f);
		profile_free(s->p);
		s->p = f;
		pw->changes++;
	}
}

const struct profile *profile_window_roll(struct profile_window *pw, uint64_t now_ns)
{
	struct profile *next = profile_window_new_profile(pw);
	struct profile_window_slot *closed;

	if (next == NULL)
		return NULL;
	pw->cur.end_ns = now_ns;
	pw->cur.leave_ns = pw->cur.start_ns + pw->window_ns;
	pw->cur.unfolded = pw->fold_gone;
	profile_set_time(pw->cur.p, pw->cur.start_ns, now_ns);
	/* Only read from now on: its memos go (60 intervals would hold 10 MiB of them). */
	profile_seal(pw->cur.p);
	if (profile_window_holds_something(pw->cur.p))
		pw->changes++;
	profile_window_push(pw, &pw->cur);
	closed = profile_window_at(pw, pw->count - 1);
	pw->cur.p = next;
	pw->cur.start_ns = now_ns;
	pw->cur.end_ns = 0;
	pw->cur.unfolded = false;
	profile_window_expire(pw, now_ns);
	/* The interval just closed may itself be older than the window (a roll
	 * after a long stall): it is gone then, and so nothing is returned. */
	if (pw->count == 0 || profile_window_at(pw, pw->count - 1) != closed)
		return NULL;
	/* After the expiry: no fold of an interval that leaves anyway. closed
	 * itself is the newest, so it stays as collected (its slot's profile
	 * is not replaced). */
	profile_window_fold(pw);
	return closed->p;
}

void profile_window_set_fold_gone(struct profile_window *pw, bool on)
{
	pw->fold_gone = on;
}

void profile_window_set_progress(struct profile_window *pw, void (*progress)(void *arg),
				 void *arg)
{
	pw->progress = progress;
	pw->progress_arg = arg;
}

int profile_window_adopt(struct profile_window *pw, struct profile *p, uint64_t start_ns,
			 uint64_t end_ns)
{
	struct profile_window_slot s = { .p = p, .start_ns = start_ns, .end_ns = end_ns,
					 .unfolded = pw->fold_gone };
	uint64_t newest = end_ns;

	/*
	 * A reloaded window cannot be cut by time: leaving when its start leaves
	 * (as an interval does) would drop at the first roll after a restart all
	 * that the previous exporter had written. It stays while its newest part
	 * is within the window, counted from at most a window after its start, so
	 * that windows reloaded again and again (each holding the previous one)
	 * never reach back more than two windows.
	 */
	if (newest < start_ns)
		newest = start_ns;
	if (newest - start_ns > pw->window_ns)
		newest = start_ns + pw->window_ns;
	s.leave_ns = newest + pw->window_ns;
	if (pw->count == pw->cap) {
		profile_free(p);
		return -ENOMEM;
	}
	/* In front of the others: it is older than anything this exporter collected. */
	pw->head = (pw->head + pw->cap - 1) % pw->cap;
	pw->count++;
	*profile_window_at(pw, 0) = s;
	pw->changes++;
	profile_set_max_stacks(p, pw->max_stacks);
	profile_seal(p);
	return 0;
}

/* The merge of the closed intervals, and of the current one when with_current,
 * timed from the oldest start to end_ns. */
static struct profile *profile_window_merge(struct profile_window *pw, bool with_current,
					    uint64_t end_ns)
{
	struct profile *m;
	uint64_t start = pw->cur.start_ns;
	size_t i;

	profile_free(pw->merged);
	pw->merged = NULL;
	m = profile_window_new_profile(pw);
	if (m == NULL)
		return NULL;
	for (i = 0; i < pw->count; i++) {
		if (profile_merge(m, profile_window_at(pw, i)->p) != 0)
			goto fail;
		/* An interval at a time: the caller may pause here (the
		 * profiles merged are sealed, only the current one is added to). */
		if (pw->progress != NULL)
			pw->progress(pw->progress_arg);
	}
	if (with_current && profile_merge(m, pw->cur.p) != 0)
		goto fail;
	if (pw->count > 0)
		start = profile_window_at(pw, 0)->start_ns;
	profile_set_time(m, start, end_ns);
	profile_seal(m);
	pw->merged = m;
	return m;
fail:
	profile_free(m);
	return NULL;
}

struct profile *profile_window_merged(struct profile_window *pw, uint64_t now_ns)
{
	return profile_window_merge(pw, true, now_ns);
}

struct profile *profile_window_merged_closed(struct profile_window *pw)
{
	return profile_window_merge(pw, false, pw->cur.start_ns);
}

uint64_t profile_window_current_start(const struct profile_window *pw)
{
	return pw->cur.start_ns;
}

void profile_window_get_stats(const struct profile_window *pw, struct profile_window_stats *out)
{
	struct profile_totals t;
	size_t i;

	out->intervals = pw->count;
	out->start_ns = pw->count > 0 ? profile_window_at(pw, 0)->start_ns : pw->cur.start_ns;
	out->expired = pw->expired;
	out->changes = pw->changes;
	out->memory_bytes = sizeof(*pw) + pw->cap * sizeof(*pw->ring);
	for (i = 0; i < pw->count; i++) {
		profile_get_totals(profile_window_at(pw, i)->p, &t);
		out->memory_bytes += t.memory_bytes;
	}
	profile_get_totals(pw->cur.p, &t);
	out->memory_bytes += t.memory_bytes;
	if (pw->merged != NULL) {
		profile_get_totals(pw->merged, &t);
		out->memory_bytes += t.memory_bytes;
	}
}
