#include "exporter/profile/profile_window.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/profile/profile.h"
#include "exporter/profile/window_split.h"

/*
 * How the window holds its intervals. The interval being collected and the
 * newest closed one (what the archive and OTLP get; at --interval 1 the
 * newest two: PROFILE_WINDOW_LIVE_NS) are profiles of their own. Once newer
 * ones cover that span, an interval moves into the window's store: one
 * profile holding every older interval's stacks (folded:
 * profile_window_move), each string, function, location and stack once,
 * however many intervals share it; the interval keeps only the list of its
 * stacks there and their counts, to take them off again when it leaves
 * (profile_take_off). So a full window costs its distinct stacks plus a few
 * bytes per stack and interval, not 60 copies of the tables that a churn of
 * short processes running the same programs fills. Stacks taken off to
 * nothing stay in the store (merges skip them) until they are half of it;
 * the store is then
 * rebuilt without them (profile_window_compact_store).
 */
struct profile_window_ref {
	uint32_t stack; /* in the store */
	uint64_t count, cpu_ns;
};

struct profile_window_slot {
	/* As collected; NULL once moved into the store (refs then say what of it is there). */
	struct profile *p;
	struct profile_window_ref *refs;
	size_t nrefs;
	/* What came into the store's own counts with it. */
	uint64_t dropped_samples, dropped_cpu_ns, gone_pid_stacks;
	bool has_samples; /* samples, or samples refused: its coming and going change the files */
	uint64_t start_ns, end_ns;
	/* It leaves the window once now passes this: start + window for an
	 * interval, later for a reloaded window (profile_window_adopt). */
	uint64_t leave_ns;
};

struct profile_window {
	/* Closed intervals, oldest first, in a ring of cap slots. */
	struct profile_window_slot *ring;
	size_t cap, head, count;
	struct profile_window_slot cur;
	struct profile *store;  /* the moved intervals' stacks */
	size_t store_empty;     /* its stacks with no samples left */
	struct profile *merged;
	struct window_split *split; /* merged's, by interval; NULL when it could not be had */
	uint64_t window_ns, interval_ns, expired;
	/* Changes to what the closed intervals hold (profile_window_stats.changes). */
	uint64_t changes;
	size_t max_stacks;
	size_t live; /* the newest closed intervals that say who is alive */
	bool fold_gone;
	void (*progress)(void *arg);
	void *progress_arg;
};

/* The store may hold this many times the cap: its stacks with no samples
 * left take room until it is rebuilt. */
#define PROFILE_WINDOW_STORE_CAP_FACTOR 2
/* Who is alive, when an older interval is folded: a process with a sample
 * in the newest closed intervals that cover at least this long (kept as
 * collected, every pid). Samples come in drains about a second apart (the
 * loader's timer; later on a starved host), so a process busy all along
 * has one in any 2 s: at --interval 2 and up that is the newest interval
 * alone, at 1 s the newest two. */
#define PROFILE_WINDOW_LIVE_NS 2000000000ULL
#define PROFILE_WINDOW_LIVE_MAX 4
/* Below this many stacks the store is not rebuilt, however many are empty. */
#define PROFILE_WINDOW_STORE_MIN_REBUILD 1024

static struct profile *profile_window_new_profile(const struct profile_window *pw)
{
	struct profile *p = profile_new();

	if (p != NULL)
		profile_set_max_stacks(p, pw->max_stacks);
	return p;
}

static bool profile_window_holds_something(const struct profile *p)
{
	struct profile_totals t;

	profile_get_totals(p, &t);
	return t.samples > 0 || t.dropped_samples > 0;
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
	pw->live = (size_t)((PROFILE_WINDOW_LIVE_NS + interval_ns - 1) / interval_ns);
	if (pw->live > PROFILE_WINDOW_LIVE_MAX)
		pw->live = PROFILE_WINDOW_LIVE_MAX;
	/* The window's intervals, a restored one and a late roll's. */
	pw->cap = (size_t)(window_ns / interval_ns) + 3;
	pw->ring = calloc(pw->cap, sizeof(*pw->ring));
	pw->cur.p = profile_window_new_profile(pw);
	pw->cur.start_ns = now_ns;
	pw->store = profile_new();
	if (pw->ring == NULL || pw->cur.p == NULL || pw->store == NULL) {
		profile_window_free(pw);
		return NULL;
	}
	profile_set_max_stacks(pw->store, max_stacks * PROFILE_WINDOW_STORE_CAP_FACTOR);
	return pw;
}

static struct profile_window_slot *profile_window_at(const struct profile_window *pw, size_t i)
{
	return &pw->ring[(pw->head + i) % pw->cap];
}

static void profile_window_drop_oldest(struct profile_window *pw)
{
	struct profile_window_slot *s = profile_window_at(pw, 0);
	size_t i;

	if (s->has_samples)
		pw->changes++;
	if (s->p == NULL) {
		for (i = 0; i < s->nrefs; i++) {
			if (profile_take_off(pw->store, s->refs[i].stack, s->refs[i].count,
					     s->refs[i].cpu_ns))
				pw->store_empty++;
		}
		profile_take_off_dropped(pw->store, s->dropped_samples, s->dropped_cpu_ns,
					 s->gone_pid_stacks);
	}
	profile_free(s->p);
	free(s->refs);
	memset(s, 0, sizeof(*s));
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
	profile_free(pw->store);
	profile_free(pw->merged);
	window_split_free(pw->split);
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

static int profile_window_ref_cmp(const void *a, const void *b)
{
	const struct profile_window_ref *x = a, *y = b;

	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* refs[0..n) from map (src's stacks -> the store's), one per store stack
 * (several pids' stacks fold into one), in place; returns how many. */
static size_t profile_window_make_refs(const struct profile *src, const uint32_t *map,
				       struct profile_window_ref *refs)
{
	const struct profile_stack *st;
	size_t i, n = 0, out = 0;

	for (i = 0; i < profile_stack_count(src); i++) {
		if (map[i] == PROFILE_NO_STACK)
			continue;
		st = profile_stack_at(src, i);
		refs[n].stack = map[i];
		refs[n].count = st->count;
		refs[n].cpu_ns = st->cpu_ns;
		n++;
	}
	qsort(refs, n, sizeof(*refs), profile_window_ref_cmp);
	for (i = 0; i < n; i++) {
		if (out > 0 && refs[out - 1].stack == refs[i].stack) {
			refs[out - 1].count += refs[i].count;
			refs[out - 1].cpu_ns += refs[i].cpu_ns;
		} else {
			refs[out++] = refs[i];
		}
	}
	return out;
}

/*
 * Moves slot s into the store, folded against live[0..nlive) (the newest
 * closed intervals: a process with no sample there is taken as gone, its
 * stacks keyed by comm) when folding is on. Out of memory before the move: s
 * stays as it is (tried again at the next roll). Out of memory during it: s
 * keeps what got into the store, the rest of its samples is lost.
 */
static void profile_window_move(struct profile_window *pw, struct profile_window_slot *s,
				const struct profile *const *live, size_t nlive)
{
	struct profile_totals before, after;
	size_t n = profile_stack_count(s->p);
	struct profile_window_ref *refs;
	uint32_t *map;

	refs = malloc((n ? n : 1) * sizeof(*refs));
	map = malloc((n ? n : 1) * sizeof(*map));
	if (refs == NULL || map == NULL) {
		free(refs);
		free(map);
		return;
	}
	profile_get_totals(pw->store, &before);
	(void)profile_merge_mapped(pw->store, s->p, pw->fold_gone, live, nlive, map);
	profile_get_totals(pw->store, &after);
	/* The store keeps its indexes (the next interval merges into it), not
	 * the write side's memos. */
	profile_seal(pw->store);
	s->nrefs = profile_window_make_refs(s->p, map, refs);
	free(map);
	s->refs = realloc(refs, (s->nrefs ? s->nrefs : 1) * sizeof(*refs));
	if (s->refs == NULL)
		s->refs = refs;
	s->dropped_samples = after.dropped_samples - before.dropped_samples;
	s->dropped_cpu_ns = after.dropped_cpu_ns - before.dropped_cpu_ns;
	s->gone_pid_stacks = after.gone_pid_stacks - before.gone_pid_stacks;
	profile_free(s->p);
	s->p = NULL;
	if (s->has_samples)
		pw->changes++;
}

/*
 * The store without its stacks that have no samples left, once they are
 * half of it: a merge into a new one (which skips them), and every moved
 * interval's refs renamed. Out of memory, or a stack that would not fit:
 * the old store stays.
 */
static void profile_window_compact_store(struct profile_window *pw)
{
	size_t n = profile_stack_count(pw->store), i, j;
	struct profile_window_slot *s;
	struct profile *fresh;
	uint32_t *map;

	if (n < PROFILE_WINDOW_STORE_MIN_REBUILD || pw->store_empty * 2 < n)
		return;
	fresh = profile_new();
	map = malloc(n * sizeof(*map));
	if (fresh == NULL || map == NULL)
		goto out;
	profile_set_max_stacks(fresh, pw->max_stacks * PROFILE_WINDOW_STORE_CAP_FACTOR);
	if (profile_merge_mapped(fresh, pw->store, false, NULL, 0, map) != 0)
		goto out;
	for (i = 0; i < pw->count; i++) {
		s = profile_window_at(pw, i);
		for (j = 0; s->p == NULL && j < s->nrefs; j++) {
			if (s->refs[j].count > 0 && map[s->refs[j].stack] == PROFILE_NO_STACK)
				goto out;
		}
	}
	for (i = 0; i < pw->count; i++) {
		s = profile_window_at(pw, i);
		for (j = 0; s->p == NULL && j < s->nrefs; j++)
			s->refs[j].stack = map[s->refs[j].stack];
	}
	profile_seal(fresh);
	profile_free(pw->store);
	pw->store = fresh;
	pw->store_empty = 0;
	fresh = NULL;
out:
	profile_free(fresh);
	free(map);
}

const struct profile *profile_window_roll(struct profile_window *pw, uint64_t now_ns)
{
	struct profile *next = profile_window_new_profile(pw);
	const struct profile *live[PROFILE_WINDOW_LIVE_MAX];
	struct profile_window_slot *closed, *s;
	size_t i, nlive;

	if (next == NULL)
		return NULL;
	pw->cur.end_ns = now_ns;
	pw->cur.leave_ns = pw->cur.start_ns + pw->window_ns;
	profile_set_time(pw->cur.p, pw->cur.start_ns, now_ns);
	/* Only read from now on: its memos go (60 intervals would hold 10 MiB of them). */
	profile_seal(pw->cur.p);
	pw->cur.has_samples = profile_window_holds_something(pw->cur.p);
	if (pw->cur.has_samples)
		pw->changes++;
	profile_window_push(pw, &pw->cur);
	closed = profile_window_at(pw, pw->count - 1);
	memset(&pw->cur, 0, sizeof(pw->cur));
	pw->cur.p = next;
	pw->cur.start_ns = now_ns;
	profile_window_expire(pw, now_ns);
	/* The interval just closed may itself be older than the window (a roll
	 * after a long stall): it is gone then, and so nothing is returned. */
	if (pw->count == 0 || profile_window_at(pw, pw->count - 1) != closed)
		return NULL;
	/* After the expiry: no move of an interval that leaves anyway. The
	 * newest pw->live closed intervals stay as collected, every pid in
	 * them, and say who is alive (PROFILE_WINDOW_LIVE_NS). */
	nlive = 0;
	for (i = 0; i < pw->live && i < pw->count; i++) {
		s = profile_window_at(pw, pw->count - 1 - i);
		if (s->p != NULL)
			live[nlive++] = s->p;
	}
	for (i = 0; i + pw->live < pw->count; i++) {
		s = profile_window_at(pw, i);
		if (s->p != NULL)
			profile_window_move(pw, s, live, nlive);
	}
	profile_window_compact_store(pw);
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
	struct profile_window_slot s = { .p = p, .start_ns = start_ns, .end_ns = end_ns };
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
	s.has_samples = profile_window_holds_something(p);
	*profile_window_at(pw, 0) = s;
	pw->changes++;
	profile_set_max_stacks(p, pw->max_stacks);
	profile_seal(p);
	return 0;
}

static int profile_window_ref_cmp_stack(const void *a, const void *b)
{
	const struct window_split_ref *x = a, *y = b;

	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Closes the split's part being filled (its refs from split->nrefs on):
 * sorted by the merge's stack, those landing on one stack summed. */
static void profile_window_split_close_part(struct window_split *split,
					    struct window_split_part *part)
{
	size_t i, out = 0;

	qsort(part->refs, part->nrefs, sizeof(*part->refs), profile_window_ref_cmp_stack);
	for (i = 0; i < part->nrefs; i++) {
		if (out > 0 && part->refs[out - 1].stack == part->refs[i].stack) {
			part->refs[out - 1].count += part->refs[i].count;
			part->refs[out - 1].cpu_ns += part->refs[i].cpu_ns;
		} else {
			part->refs[out++] = part->refs[i];
		}
	}
	part->nrefs = out;
	split->nrefs += out;
}

/* Merges src (an interval kept as collected) into m, and its stacks into the
 * split's part as the merge's. Without room or memory for them the split
 * goes (*split NULL), the merge goes on. */
static int profile_window_merge_part(struct profile *m, const struct profile *src,
				     struct window_split **splitp, struct window_split_part *part)
{
	struct window_split *split = *splitp;
	size_t n = profile_stack_count(src), i;
	uint32_t *map = NULL;
	int rc;

	/* The room was counted when the merge began: an interval added to
	 * since (none is: the merge's pauses add to the current interval only
	 * when it is not merged) would not fit. */
	if (split != NULL && n <= split->refs_cap - split->nrefs)
		map = malloc((n ? n : 1) * sizeof(*map));
	if (map == NULL) {
		window_split_free(split);
		*splitp = NULL;
		return profile_merge(m, src);
	}
	rc = profile_merge_mapped(m, src, false, NULL, 0, map);
	part->refs = split->refs + split->nrefs;
	part->nrefs = 0;
	for (i = 0; rc == 0 && i < n; i++) {
		const struct profile_stack *st = profile_stack_at(src, i);

		if (map[i] == PROFILE_NO_STACK || st->count == 0)
			continue;
		part->refs[part->nrefs++] = (struct window_split_ref){ map[i], st->count, st->cpu_ns };
	}
	profile_window_split_close_part(split, part);
	free(map);
	return rc;
}

/* The split of a merge: one part per closed interval (and the current one),
 * room for every ref they may have. NULL when out of memory. */
static struct window_split *profile_window_split_new(const struct profile_window *pw,
						     bool with_current)
{
	size_t i, nrefs = with_current ? profile_stack_count(pw->cur.p) : 0;

	for (i = 0; i < pw->count; i++) {
		const struct profile_window_slot *s = profile_window_at(pw, i);

		nrefs += s->p != NULL ? profile_stack_count(s->p) : s->nrefs;
	}
	return window_split_new(pw->count + (with_current ? 1 : 0), nrefs);
}

int profile_window_restore(struct profile_window *pw, struct profile *p,
			   const struct window_split *split)
{
	struct profile_window_ref **refs;
	struct profile_window_slot s;
	size_t i, k;

	if (pw->count != 0 || profile_stack_count(pw->store) != 0 ||
	    split->nstacks != profile_stack_count(p))
		return -EINVAL;
	/* Every allocation first: a restore is whole or not at all. */
	refs = calloc(split->nparts ? split->nparts : 1, sizeof(*refs));
	if (refs == NULL)
		return -ENOMEM;
	for (i = 0; i < split->nparts; i++) {
		refs[i] = malloc((split->parts[i].nrefs ? split->parts[i].nrefs : 1) * sizeof(**refs));
		if (refs[i] == NULL) {
			while (i > 0)
				free(refs[--i]);
			free(refs);
			return -ENOMEM;
		}
	}
	/* The reloaded window is the store: its stacks are the split's (the
	 * pprof's samples, in order), each interval its refs there. */
	profile_free(pw->store);
	pw->store = p;
	pw->store_empty = 0;
	profile_set_max_stacks(p, pw->max_stacks * PROFILE_WINDOW_STORE_CAP_FACTOR);
	profile_seal(p);
	for (i = 0; i < split->nparts; i++) {
		const struct window_split_part *part = &split->parts[i];

		memset(&s, 0, sizeof(s));
		s.refs = refs[i];
		s.nrefs = part->nrefs;
		for (k = 0; k < part->nrefs; k++) {
			s.refs[k].stack = part->refs[k].stack;
			s.refs[k].count = part->refs[k].count;
			s.refs[k].cpu_ns = part->refs[k].cpu_ns;
		}
		s.start_ns = part->start_ns;
		s.end_ns = part->end_ns;
		s.leave_ns = part->start_ns + pw->window_ns;
		s.has_samples = part->nrefs > 0;
		profile_window_push(pw, &s);
	}
	free(refs);
	pw->changes++;
	/* What left the window while no exporter ran leaves now. */
	profile_window_expire(pw, pw->cur.start_ns);
	return 0;
}

int profile_window_push_closed(struct profile_window *pw, struct profile *p, uint64_t start_ns,
			       uint64_t end_ns)
{
	struct profile_window_slot s = { .p = p };
	uint64_t newest = pw->count > 0 ? profile_window_at(pw, pw->count - 1)->end_ns : 0;

	/* Never overlapping the intervals before it nor the current one. */
	s.start_ns = start_ns > newest ? start_ns : newest;
	s.end_ns = end_ns < pw->cur.start_ns ? end_ns : pw->cur.start_ns;
	if (s.end_ns < s.start_ns) {
		profile_free(p);
		return -EINVAL;
	}
	s.leave_ns = s.start_ns + pw->window_ns;
	profile_set_time(p, s.start_ns, s.end_ns);
	profile_set_max_stacks(p, pw->max_stacks);
	profile_seal(p);
	s.has_samples = profile_window_holds_something(p);
	if (s.has_samples)
		pw->changes++;
	profile_window_push(pw, &s);
	profile_window_expire(pw, pw->cur.start_ns);
	return 0;
}

const struct window_split *profile_window_split(const struct profile_window *pw)
{
	return pw->split;
}

struct window_split *profile_window_take_split(struct profile_window *pw)
{
	struct window_split *s = pw->split;

	pw->split = NULL;
	return s;
}

/* The merge of the closed intervals, and of the current one when with_current,
 * timed from the oldest start to end_ns; and its split (pw->split) by interval. */
static struct profile *profile_window_merge(struct profile_window *pw, bool with_current,
					    uint64_t end_ns)
{
	struct window_split *split;
	struct window_split_part *part;
	struct profile *m;
	uint64_t start = pw->cur.start_ns;
	uint32_t *store_map = NULL;
	size_t i, k;

	profile_free(pw->merged);
	pw->merged = NULL;
	window_split_free(pw->split);
	pw->split = NULL;
	m = profile_window_new_profile(pw);
	if (m == NULL)
		return NULL;
	/* The split is a by-product: without memory for it the merge goes on. */
	split = profile_window_split_new(pw, with_current);
	if (split != NULL) {
		store_map = malloc((profile_stack_count(pw->store) + 1) * sizeof(*store_map));
		if (store_map == NULL) {
			window_split_free(split);
			split = NULL;
		}
	}
	/* The store (the older intervals, oldest first), then the intervals not
	 * moved into it yet, newer: the run's order. A part at a time, and
	 * within a part every PROFILE_MERGE_PROGRESS_STACKS stacks: the caller
	 * may pause there (nothing merged here changes meanwhile, only the
	 * current interval is added to). */
	profile_set_merge_progress(m, pw->progress, pw->progress_arg);
	if ((split != NULL ? profile_merge_mapped(m, pw->store, false, NULL, 0, store_map)
			   : profile_merge(m, pw->store)) != 0)
		goto fail;
	if (pw->progress != NULL)
		pw->progress(pw->progress_arg);
	for (i = 0; i < pw->count; i++) {
		const struct profile_window_slot *s = profile_window_at(pw, i);

		part = split != NULL ? &split->parts[i] : NULL;
		if (part != NULL) {
			part->start_ns = s->start_ns;
			part->end_ns = s->end_ns;
		}
		if (s->p == NULL) {
			/* In the store, merged above: its refs as the merge's stacks. */
			if (part == NULL)
				continue;
			part->refs = split->refs + split->nrefs;
			part->nrefs = 0;
			for (k = 0; k < s->nrefs; k++) {
				uint32_t to = store_map[s->refs[k].stack];

				if (to != PROFILE_NO_STACK && s->refs[k].count > 0)
					part->refs[part->nrefs++] = (struct window_split_ref){
						to, s->refs[k].count, s->refs[k].cpu_ns };
			}
			profile_window_split_close_part(split, part);
			continue;
		}
		if (profile_window_merge_part(m, s->p, &split, part) != 0)
			goto fail;
		if (pw->progress != NULL)
			pw->progress(pw->progress_arg);
	}
	if (with_current) {
		part = split != NULL ? &split->parts[pw->count] : NULL;
		if (part != NULL) {
			part->start_ns = pw->cur.start_ns;
			part->end_ns = end_ns;
		}
		if (profile_window_merge_part(m, pw->cur.p, &split, part) != 0)
			goto fail;
	}
	profile_set_merge_progress(m, NULL, NULL);
	if (pw->count > 0)
		start = profile_window_at(pw, 0)->start_ns;
	profile_set_time(m, start, end_ns);
	profile_seal(m);
	if (split != NULL) {
		split->start_ns = start;
		split->end_ns = end_ns;
		split->nstacks = (uint32_t)profile_stack_count(m);
	}
	free(store_map);
	pw->merged = m;
	pw->split = split;
	return m;
fail:
	free(store_map);
	window_split_free(split);
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
		const struct profile_window_slot *s = profile_window_at(pw, i);

		out->memory_bytes += s->nrefs * sizeof(*s->refs);
		if (s->p == NULL)
			continue;
		profile_get_totals(s->p, &t);
		out->memory_bytes += t.memory_bytes;
	}
	profile_get_totals(pw->store, &t);
	out->memory_bytes += t.memory_bytes;
	profile_get_totals(pw->cur.p, &t);
	out->memory_bytes += t.memory_bytes;
	if (pw->merged != NULL) {
		profile_get_totals(pw->merged, &t);
		out->memory_bytes += t.memory_bytes;
	}
	out->memory_bytes += window_split_bytes(pw->split);
}
