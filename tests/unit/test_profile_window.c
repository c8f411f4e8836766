/* The sliding window of interval profiles, driven by a fake clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/mono_clock.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_window.h"

#define S(x) ((uint64_t)(x) * NSEC_PER_SEC)
#define T0 S(1000000)

static struct frame fr(const char *fn)
{
	struct frame f = { .function = fn, .module = "/bin/app", .address = 0x401000,
			   .module_offset = 0x1000, .map_start = 0x400000, .map_end = 0x500000 };
	return f;
}

/* One sample per second, each second's stack named by its second. */
static void add_second(struct profile_window *pw, unsigned sec)
{
	char name[32];
	struct frame f;

	snprintf(name, sizeof(name), "s%u", sec);
	f = fr(name);
	assert_int_equal(profile_add_sample(profile_window_current(pw), 1, 1, "app", &f, 1, false,
					    1, 1), 0);
}

static bool has_function(const struct profile *p, const char *name)
{
	uint32_t idx;

	return profile_string_lookup(p, name, &idx);
}

/* window 30 s, interval 10 s: after each roll the merge covers exactly the last 30 s. */
static void test_window_rolls(void **state)
{
	struct profile_window *pw = profile_window_new(S(30), S(10), 0, T0);
	struct profile_window_stats st;
	struct profile_totals t;
	struct profile *m;
	uint64_t start, end;
	unsigned sec, i;

	(void)state;
	assert_non_null(pw);
	for (sec = 0; sec < 100; sec++) {
		add_second(pw, sec);
		if ((sec + 1) % 10 != 0)
			continue;
		assert_non_null(profile_window_roll(pw, T0 + S(sec + 1)));
		m = profile_window_merged(pw, T0 + S(sec + 1));
		assert_non_null(m);
		profile_get_totals(m, &t);
		profile_get_time(m, &start, &end);
		assert_int_equal(end, T0 + S(sec + 1));
		if (sec + 1 <= 30) {
			/* Shorter than the window: the whole run. */
			assert_int_equal(t.samples, sec + 1);
			assert_int_equal(start, T0);
		} else {
			assert_int_equal(t.samples, 30);
			assert_int_equal(start, T0 + S(sec + 1 - 30));
		}
		for (i = 0; i <= sec; i++) {
			char name[32];

			snprintf(name, sizeof(name), "s%u", i);
			assert_int_equal(has_function(m, name), i + 30 > sec);
		}
	}
	profile_window_get_stats(pw, &st);
	assert_int_equal(st.intervals, 3);
	assert_int_equal(st.expired, 7);
	assert_int_equal(st.start_ns, T0 + S(70));
	profile_window_free(pw);
}

/* Between rolls the merge holds the interval in progress too. */
static void test_window_current(void **state)
{
	struct profile_window *pw = profile_window_new(S(20), S(10), 0, T0);
	struct profile_totals t;

	(void)state;
	add_second(pw, 0);
	profile_get_totals(profile_window_merged(pw, T0 + S(5)), &t);
	assert_int_equal(t.samples, 1);
	/* A stall of a whole window: the late roll's interval is already out. */
	assert_null(profile_window_roll(pw, T0 + S(60)));
	profile_get_totals(profile_window_merged(pw, T0 + S(60)), &t);
	assert_int_equal(t.samples, 0);
	profile_window_free(pw);
}

/* The closed-only merge ends where the current interval begins and holds
 * none of its samples: the files and the checkpoint never overlap. */
static void test_window_merged_closed(void **state)
{
	struct profile_window *pw = profile_window_new(S(30), S(10), 0, T0);
	struct profile_totals t;
	struct profile *m;
	uint64_t start, end;

	(void)state;
	add_second(pw, 0);
	m = profile_window_merged_closed(pw);
	profile_get_totals(m, &t);
	profile_get_time(m, &start, &end);
	assert_int_equal(t.samples, 0);
	assert_int_equal(start, T0);
	assert_int_equal(end, T0);
	profile_window_roll(pw, T0 + S(10));
	add_second(pw, 10);
	add_second(pw, 11);
	assert_int_equal(profile_window_current_start(pw), T0 + S(10));
	m = profile_window_merged_closed(pw);
	profile_get_totals(m, &t);
	profile_get_time(m, &start, &end);
	assert_int_equal(t.samples, 1);
	assert_true(has_function(m, "s0"));
	assert_false(has_function(m, "s10"));
	assert_int_equal(start, T0);
	assert_int_equal(end, T0 + S(10));
	/* The full merge has both. */
	profile_get_totals(profile_window_merged(pw, T0 + S(12)), &t);
	assert_int_equal(t.samples, 3);
	profile_window_free(pw);
}

/*
 * A restored profile is the oldest interval. It cannot be cut by time, so it
 * stays while its newest part is in the window (not dropped at the first roll
 * after the restart because its start is older than the window), and a window
 * reloaded again and again never reaches back more than two windows.
 */
static void test_window_adopt(void **state)
{
	struct profile_window *pw = profile_window_new(S(30), S(10), 0, T0 + S(20));
	struct profile *old = profile_new();
	struct frame f = fr("restored");
	struct profile_totals t;
	uint64_t start, end;

	(void)state;
	assert_int_equal(profile_add_sample(old, 1, 1, "app", &f, 1, false, 5, 5), 0);
	assert_int_equal(profile_window_adopt(pw, old, T0, T0 + S(20)), 0);
	add_second(pw, 20);
	profile_window_roll(pw, T0 + S(30));
	profile_get_totals(profile_window_merged(pw, T0 + S(30)), &t);
	assert_int_equal(t.samples, 6);
	assert_true(has_function(profile_window_merged(pw, T0 + S(30)), "restored"));
	/* Its start left the window at T0 + 30; its end has not yet: kept, and the
	 * merge says it covers more than the window. */
	profile_window_roll(pw, T0 + S(40));
	assert_true(has_function(profile_window_merged(pw, T0 + S(40)), "restored"));
	profile_get_time(profile_window_merged(pw, T0 + S(40)), &start, &end);
	assert_int_equal(start, T0);
	profile_window_roll(pw, T0 + S(50));
	assert_true(has_function(profile_window_merged(pw, T0 + S(50)), "restored"));
	/* Its end left: gone, and the window is the last 30 s again. */
	profile_window_roll(pw, T0 + S(60));
	assert_false(has_function(profile_window_merged(pw, T0 + S(60)), "restored"));
	profile_get_time(profile_window_merged(pw, T0 + S(60)), &start, &end);
	assert_int_equal(start, T0 + S(30));
	profile_window_free(pw);

	/* A reloaded window that itself held a reloaded one (two restarts): its
	 * end counts as at most a window after its start. */
	pw = profile_window_new(S(30), S(10), 0, T0 + S(100));
	old = profile_new();
	assert_int_equal(profile_add_sample(old, 1, 1, "app", &f, 1, false, 5, 5), 0);
	assert_int_equal(profile_window_adopt(pw, old, T0, T0 + S(100)), 0);
	assert_non_null(profile_window_roll(pw, T0 + S(110)));
	assert_false(has_function(profile_window_merged(pw, T0 + S(110)), "restored"));
	profile_window_free(pw);
}

static void add_pid(struct profile_window *pw, uint32_t pid, const char *comm, const char *fn,
		    uint64_t count)
{
	struct frame f = fr(fn);

	assert_int_equal(profile_add_sample(profile_window_current(pw), pid, pid, comm, &f, 1,
					    false, count, count), 0);
}

/* The samples of pid's stack whose leaf is fn in p (0: none). */
static uint64_t count_of(const struct profile *p, uint32_t pid, const char *comm, const char *fn)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < profile_stack_count(p); i++) {
		const struct profile_stack *s = profile_stack_at(p, i);
		const struct profile_function *f = profile_stack_function(p, s, 0, PROFILE_LEAF_FIRST);

		if (s->pid == pid && strcmp(profile_string(p, s->comm), comm) == 0 &&
		    strcmp(profile_string(p, f->name), fn) == 0)
			n += s->count;
	}
	return n;
}

/* m's samples, and those of processes gone: samples, stacks, per-pid stacks folded. */
static void assert_gone(const struct profile *m, uint64_t samples, uint64_t gone,
			size_t gone_stacks, uint64_t pid_stacks)
{
	struct profile_totals t;

	profile_get_totals(m, &t);
	assert_int_equal(t.samples, samples);
	assert_int_equal(t.gone_samples, gone);
	assert_int_equal(t.gone_stacks, gone_stacks);
	assert_int_equal(t.gone_pid_stacks, pid_stacks);
}

/*
 * The first two intervals of the fold tests: three short processes (two of
 * them with the same stack), a server and the idle task, closed at end with
 * every pid in it (the archive's, OTLP's interval: pids of them, the
 * caller's own included); then the server sampled on and a new short
 * process.
 */
static void fold_first_intervals(struct profile_window *pw, uint64_t end, uint64_t pids)
{
	const struct profile *closed;
	struct profile_totals t;

	add_pid(pw, 100, "sh", "a", 1);
	add_pid(pw, 101, "sh", "a", 1);
	add_pid(pw, 102, "sh", "b", 1);
	add_pid(pw, 7, "server", "a", 2);
	add_pid(pw, 0, "swapper/0", "idle", 4);
	closed = profile_window_roll(pw, end);
	assert_non_null(closed);
	profile_get_totals(closed, &t);
	assert_int_equal(t.pids, pids);
	assert_int_equal(t.gone_samples, 0);
	add_pid(pw, 7, "server", "c", 1);
	add_pid(pw, 103, "sh", "a", 1);
}

/*
 * A closed interval's stacks of processes with no sample in the next one are
 * folded by comm at the next roll: identical stacks of short processes make
 * one; a process sampled on keeps its pid, and so does the idle task; the
 * newest closed interval keeps every pid; the counts say what was folded.
 */
static void test_window_folds_gone(void **state)
{
	struct profile_window *pw = profile_window_new(S(60), S(10), 0, T0);
	struct profile_totals t;
	struct profile *m;

	(void)state;
	fold_first_intervals(pw, T0 + S(10), 5);
	profile_window_roll(pw, T0 + S(20));
	m = profile_window_merged_closed(pw);
	assert_int_equal(count_of(m, PROFILE_PID_GONE, "sh", "a"), 2);
	assert_int_equal(count_of(m, PROFILE_PID_GONE, "sh", "b"), 1);
	assert_int_equal(count_of(m, 100, "sh", "a"), 0);
	assert_int_equal(count_of(m, 7, "server", "a"), 2);
	assert_int_equal(count_of(m, 0, "swapper/0", "idle"), 4);
	assert_int_equal(count_of(m, 103, "sh", "a"), 1);
	assert_gone(m, 11, 3, 2, 3);
	assert_true(profile_has_pid(m, 7));
	assert_false(profile_has_pid(m, 100));
	assert_false(profile_has_pid(m, PROFILE_PID_GONE));

	/* An empty interval: every process of the one before is gone, and the
	 * short ones' identical stacks of two intervals merge into one. */
	profile_window_roll(pw, T0 + S(30));
	m = profile_window_merged_closed(pw);
	assert_int_equal(count_of(m, PROFILE_PID_GONE, "sh", "a"), 3);
	assert_int_equal(count_of(m, PROFILE_PID_GONE, "server", "c"), 1);
	assert_int_equal(count_of(m, 7, "server", "a"), 2);
	assert_gone(m, 11, 5, 3, 5);
	profile_get_totals(m, &t);
	assert_int_equal(t.pids, 2);
	profile_window_free(pw);

	/* Off: every pid stays. */
	pw = profile_window_new(S(60), S(10), 0, T0);
	profile_window_set_fold_gone(pw, false);
	add_pid(pw, 100, "sh", "a", 1);
	profile_window_roll(pw, T0 + S(10));
	profile_window_roll(pw, T0 + S(20));
	m = profile_window_merged_closed(pw);
	assert_int_equal(count_of(m, 100, "sh", "a"), 1);
	profile_get_totals(m, &t);
	assert_int_equal(t.gone_samples, 0);
	profile_window_free(pw);
}

/*
 * At 1 s intervals the newest two closed intervals say who is alive (the
 * newest closed intervals covering PROFILE_WINDOW_LIVE_NS): samples arrive
 * in drains up to a second or so apart, so a busy process can miss one such
 * interval, never two. An interval's processes with no sample in the two
 * after it are folded when the second closes; one with none in the first
 * but some in the second keeps its pid, and so does the idle task; the two
 * newest closed intervals keep every pid; the counts say what was folded.
 */
static void test_window_live_short_intervals(void **state)
{
	struct profile_window *pw = profile_window_new(S(60), S(1), 0, T0);
	struct profile_totals t;
	struct profile *m;

	(void)state;
	add_pid(pw, 8, "batch", "a", 1);
	fold_first_intervals(pw, T0 + S(1), 6);
	/* One interval later nothing is folded yet: pid 8, sampled in neither
	 * this interval nor the one collected, keeps its stacks. */
	profile_window_roll(pw, T0 + S(2));
	m = profile_window_merged_closed(pw);
	assert_int_equal(count_of(m, 100, "sh", "a"), 1);
	assert_int_equal(count_of(m, 8, "batch", "a"), 1);
	assert_gone(m, 12, 0, 0, 0);

	/* The second interval after the first closes: its processes sampled in
	 * neither of the two are gone; pid 8 is back in the newest, and keeps
	 * its pid (one stack with the new sample). */
	add_pid(pw, 8, "batch", "a", 1);
	profile_window_roll(pw, T0 + S(3));
	m = profile_window_merged_closed(pw);
	assert_int_equal(count_of(m, PROFILE_PID_GONE, "sh", "a"), 2);
	assert_int_equal(count_of(m, PROFILE_PID_GONE, "sh", "b"), 1);
	assert_int_equal(count_of(m, 100, "sh", "a"), 0);
	assert_int_equal(count_of(m, 7, "server", "a"), 2);
	assert_int_equal(count_of(m, 8, "batch", "a"), 2);
	assert_int_equal(count_of(m, 0, "swapper/0", "idle"), 4);
	assert_int_equal(count_of(m, 103, "sh", "a"), 1);
	assert_gone(m, 13, 3, 2, 3);
	assert_true(profile_has_pid(m, 7));
	assert_false(profile_has_pid(m, 100));
	assert_false(profile_has_pid(m, PROFILE_PID_GONE));

	/* Empty intervals: every process of the interval two before is gone, and
	 * the short ones' identical stacks of two intervals merge into one. An
	 * interval already in the store is not folded again: pid 8's first
	 * sample keeps its pid, its later one is folded. */
	profile_window_roll(pw, T0 + S(4));
	m = profile_window_merged_closed(pw);
	assert_int_equal(count_of(m, PROFILE_PID_GONE, "sh", "a"), 3);
	assert_int_equal(count_of(m, PROFILE_PID_GONE, "server", "c"), 1);
	assert_int_equal(count_of(m, 7, "server", "a"), 2);
	assert_int_equal(count_of(m, 8, "batch", "a"), 2);
	assert_gone(m, 13, 5, 3, 5);
	profile_window_roll(pw, T0 + S(5));
	m = profile_window_merged_closed(pw);
	assert_int_equal(count_of(m, 8, "batch", "a"), 1);
	assert_int_equal(count_of(m, PROFILE_PID_GONE, "batch", "a"), 1);
	assert_gone(m, 13, 6, 4, 6);
	profile_get_totals(m, &t);
	assert_int_equal(t.pids, 3);
	profile_window_free(pw);
}

/* The merge calls the progress hook once per part merged: the store (the
 * older intervals), then each interval not moved into it (the newest); and
 * within a part every PROFILE_MERGE_PROGRESS_STACKS stacks, so that a large
 * store is not one stretch of work. */
static void count_call(void *arg)
{
	(*(unsigned *)arg)++;
}

static void test_window_merge_progress(void **state)
{
	struct profile_window *pw = profile_window_new(S(60), S(10), 0, T0);
	unsigned calls = 0, i;

	(void)state;
	for (i = 1; i <= 4; i++) {
		add_pid(pw, 5, "app", "a", 1);
		profile_window_roll(pw, T0 + S(10 * i));
	}
	profile_window_set_progress(pw, count_call, &calls);
	assert_non_null(profile_window_merged_closed(pw));
	assert_int_equal(calls, 2);
	profile_window_set_progress(pw, NULL, NULL);
	assert_non_null(profile_window_merged_closed(pw));
	assert_int_equal(calls, 2);
	profile_window_free(pw);

	/* 1000 stacks in the store and in the newest interval: three more calls
	 * within each. */
	pw = profile_window_new(S(60), S(10), 0, T0);
	for (i = 1; i <= 3; i++) {
		char fn[32];
		unsigned k;

		for (k = 0; k < 1000; k++) {
			snprintf(fn, sizeof(fn), "f%u", k);
			add_pid(pw, 5, "app", fn, 1);
		}
		profile_window_roll(pw, T0 + S(10 * i));
	}
	calls = 0;
	profile_window_set_progress(pw, count_call, &calls);
	assert_non_null(profile_window_merged_closed(pw));
	assert_int_equal(calls, 2 + 2 * (1000 / PROFILE_MERGE_PROGRESS_STACKS));
	profile_window_free(pw);
}

/* The stack cap holds in every interval and in the merge. */
static void test_window_cap(void **state)
{
	struct profile_window *pw = profile_window_new(S(30), S(10), 4, T0);
	struct profile_totals t;
	unsigned sec;

	(void)state;
	for (sec = 0; sec < 30; sec++) {
		add_second(pw, sec);
		if ((sec + 1) % 10 == 0)
			profile_window_roll(pw, T0 + S(sec + 1));
	}
	profile_get_totals(profile_window_merged(pw, T0 + S(30)), &t);
	assert_int_equal(t.samples, 30);
	assert_true(t.stacks <= 4 + PROFILE_FOLD_ROOM(4));
	assert_int_equal(t.folded_samples, 26);
	profile_window_free(pw);
}

/*
 * A closed interval is only read: its write-side memos (~170 KiB) go when it
 * closes, so a full window of small intervals costs what they hold, not 60
 * times the memos. Adding to a sealed profile still aggregates.
 */
static void test_window_seals_closed(void **state)
{
	struct profile_window *pw = profile_window_new(S(600), S(10), 0, T0);
	struct profile_window_stats st;
	struct profile_totals t;
	struct profile *p;
	struct frame f = fr("sealed");
	size_t open_bytes;
	unsigned i;

	(void)state;
	assert_non_null(pw);
	add_second(pw, 0);
	profile_get_totals(profile_window_current(pw), &t);
	open_bytes = t.memory_bytes;
	assert_true(open_bytes > 100 * 1024); /* the memos are there while it collects */
	for (i = 1; i <= 60; i++) {
		const struct profile *closed = profile_window_roll(pw, T0 + S(10 * i));

		assert_non_null(closed);
		profile_get_totals(closed, &t);
		assert_true(t.memory_bytes < 16 * 1024);
		add_second(pw, i);
	}
	assert_non_null(profile_window_merged(pw, T0 + S(605)));
	profile_window_get_stats(pw, &st);
	assert_int_equal(st.intervals, 60);
	/* 60 closed + the merge at a few KiB each, the current one's memos once. */
	assert_true(st.memory_bytes < open_bytes + 62 * 16 * 1024);
	profile_window_free(pw);

	p = profile_new();
	assert_non_null(p);
	assert_int_equal(profile_add_sample(p, 1, 1, "app", &f, 1, false, 1, 1), 0);
	profile_seal(p);
	assert_int_equal(profile_add_sample(p, 1, 1, "app", &f, 1, false, 2, 2), 0);
	profile_get_totals(p, &t);
	assert_int_equal(t.stacks, 1);
	assert_int_equal(t.locations, 1);
	assert_int_equal(t.samples, 3);
	profile_free(p);
}

/* n samples of a long-lived process's stacks s<first>..s<first+n-1>, each of 8 frames. */
static void add_stacks(struct profile_window *pw, uint32_t pid, unsigned first, unsigned n)
{
	struct frame f[8];
	char names[8][32];
	unsigned i, j;

	for (i = first; i < first + n; i++) {
		for (j = 0; j < 8; j++) {
			snprintf(names[j], sizeof(names[j]), "fn%u_%u", i, j);
			f[j] = fr(names[j]);
			f[j].module_offset = 0x1000 + i * 64 + j;
		}
		assert_int_equal(profile_add_sample(profile_window_current(pw), pid, pid, "app", f, 8,
						    false, 1, 1), 0);
	}
}

/*
 * The window's older intervals share one store: a full window of intervals
 * sampling the same stacks costs those stacks once and a few bytes per stack
 * and interval, not the tables 60 times over (before the store: ~1 KiB per
 * stack and interval here).
 */
static void test_window_store_shares(void **state)
{
	struct profile_window *pw = profile_window_new(S(600), S(10), 0, T0);
	struct profile_window_stats st;
	struct profile_totals t;
	size_t six = 0;
	unsigned i;

	(void)state;
	for (i = 1; i <= 60; i++) {
		add_stacks(pw, 7, 0, 500);
		assert_non_null(profile_window_roll(pw, T0 + S(10 * i)));
		if (i == 6) {
			profile_window_get_stats(pw, &st);
			six = st.memory_bytes;
		}
	}
	profile_window_get_stats(pw, &st);
	assert_int_equal(st.intervals, 60);
	assert_true(st.memory_bytes < six + 54 * 500 * 32);
	profile_get_totals(profile_window_merged_closed(pw), &t);
	assert_int_equal(t.samples, 60 * 500);
	assert_int_equal(t.stacks, 500);
	profile_window_free(pw);
}

/*
 * Stacks that leave with their intervals (a churn of distinct ones) are
 * taken off the store; once they are half of it the store is rebuilt
 * without them: its size follows the window, not the run, and the merge
 * holds exactly the window's samples throughout.
 */
static void test_window_store_rebuilt(void **state)
{
	struct profile_window *pw = profile_window_new(S(30), S(10), 0, T0);
	struct profile_window_stats st;
	struct profile_totals t;
	struct profile *m;
	size_t at20 = 0;
	char name[32];
	unsigned i;

	(void)state;
	for (i = 1; i <= 60; i++) {
		add_stacks(pw, 1000 + i, i * 1000, 700);
		assert_non_null(profile_window_roll(pw, T0 + S(10 * i)));
		m = profile_window_merged_closed(pw);
		assert_non_null(m);
		profile_get_totals(m, &t);
		assert_int_equal(t.samples, (i < 3 ? i : 3) * 700);
		assert_int_equal(t.stacks, (i < 3 ? i : 3) * 700);
		snprintf(name, sizeof(name), "fn%u_0", i * 1000);
		assert_true(has_function(m, name));
		if (i > 3) {
			snprintf(name, sizeof(name), "fn%u_0", (i - 3) * 1000);
			assert_false(has_function(m, name));
		}
		profile_window_get_stats(pw, &st);
		if (i == 20)
			at20 = st.memory_bytes;
	}
	profile_window_get_stats(pw, &st);
	/* As at roll 20, give or take the rebuild's phase: not three times more. */
	assert_true(st.memory_bytes < at20 * 2);
	profile_window_free(pw);
}

/* changes counts what alters the closed intervals' samples, and nothing else:
 * empty intervals closing and leaving (an idle host) leave it alone. */
static void test_window_changes(void **state)
{
	struct profile_window *pw = profile_window_new(S(30), S(10), 0, T0);
	struct profile_window_stats st;
	uint64_t before;
	unsigned i;

	(void)state;
	assert_non_null(pw);
	profile_window_get_stats(pw, &st);
	assert_int_equal(st.changes, 0);
	/* Empty intervals: no change, however many close and leave. */
	for (i = 1; i <= 6; i++)
		assert_non_null(profile_window_roll(pw, T0 + S(10 * i)));
	profile_window_get_stats(pw, &st);
	assert_int_equal(st.changes, 0);
	assert_true(st.expired >= 3);
	/* One with a sample: its close is a change. */
	add_second(pw, 60);
	assert_non_null(profile_window_roll(pw, T0 + S(70)));
	profile_window_get_stats(pw, &st);
	assert_true(st.changes >= 1);
	before = st.changes;
	/* The next roll folds it (pid 1 had no sample since): a change. */
	assert_non_null(profile_window_roll(pw, T0 + S(80)));
	profile_window_get_stats(pw, &st);
	assert_true(st.changes > before);
	before = st.changes;
	/* Rolls while it stays in the window and nothing is sampled: none. */
	assert_non_null(profile_window_roll(pw, T0 + S(90)));
	profile_window_get_stats(pw, &st);
	assert_int_equal(st.changes, before);
	/* It leaves (started at 60, window 30): a change. */
	assert_non_null(profile_window_roll(pw, T0 + S(100)));
	assert_non_null(profile_window_roll(pw, T0 + S(110)));
	profile_window_get_stats(pw, &st);
	assert_true(st.changes > before);
	profile_window_free(pw);
}

static void test_window_args(void **state)
{
	(void)state;
	assert_null(profile_window_new(S(5), S(10), 0, T0));
	assert_null(profile_window_new(S(5), 0, 0, T0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_rolls),
		cmocka_unit_test(test_window_current),
		cmocka_unit_test(test_window_merged_closed),
		cmocka_unit_test(test_window_adopt),
		cmocka_unit_test(test_window_cap),
		cmocka_unit_test(test_window_folds_gone),
		cmocka_unit_test(test_window_live_short_intervals),
		cmocka_unit_test(test_window_merge_progress),
		cmocka_unit_test(test_window_seals_closed),
		cmocka_unit_test(test_window_changes),
		cmocka_unit_test(test_window_store_shares),
		cmocka_unit_test(test_window_store_rebuilt),
		cmocka_unit_test(test_window_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
