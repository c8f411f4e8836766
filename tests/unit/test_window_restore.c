/*
 * A window split into its intervals and restored, as a restarted exporter
 * does: the merge written as pprof and read back, its split checked against
 * it, then a new window restored from both. Driven by a fake clock in
 * lockstep with the window that was never restarted, the restored one
 * holds the same samples at every roll: its intervals leave one by one.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mono_clock.h"
#include "exporter/formats/pprof_reader.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/formats/window_split_file.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_window.h"
#include "exporter/profile/window_split.h"

#define S(x) ((uint64_t)(x) * NSEC_PER_SEC)
#define T0 S(1000000)

/* Second sec's samples: its own stack (s<sec>), and one every interval shares. */
static void add_second(struct profile_window *pw, unsigned sec)
{
	char name[32];
	struct frame f = { .module = "/bin/app", .address = 0x401000, .module_offset = 0x1000,
			   .map_start = 0x400000, .map_end = 0x500000 };

	snprintf(name, sizeof(name), "s%u", sec);
	f.function = name;
	f.address += sec;
	f.module_offset += sec;
	assert_int_equal(profile_add_sample(profile_window_current(pw), 1, 1, "app", &f, 1, false,
					    1 + sec % 3, 1000 * (1 + sec % 3)), 0);
	f.function = "shared";
	f.address = 0x402000;
	f.module_offset = 0x2000;
	assert_int_equal(profile_add_sample(profile_window_current(pw), 1, 1, "app", &f, 1, false,
					    2, 2000), 0);
}

/* p written as pprof and read back: what a restarted exporter reloads. */
static struct profile *pprof_round_trip(const struct profile *p)
{
	struct profile *back = NULL;
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(pprof_write(p, f, err, sizeof(err)), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(pprof_reader_load((const uint8_t *)buf, len, &back, err, sizeof(err)), 0);
	free(buf);
	return back;
}

/* The window's last merge's split, through its encoding. */
static struct window_split *split_round_trip(const struct profile_window *pw)
{
	const struct window_split *s = profile_window_split(pw);
	struct window_split *back = NULL;
	char err[256];
	uint8_t *buf;
	size_t len;

	assert_non_null(s);
	assert_int_equal(window_split_encode(s, &buf, &len), 0);
	assert_int_equal(window_split_decode(buf, len, &back, err, sizeof(err)), 0);
	free(buf);
	return back;
}

/* A window restarted at now from pw's merge of its closed intervals. */
static struct profile_window *restart(struct profile_window *pw, uint64_t window, uint64_t interval,
				      size_t max_stacks, uint64_t now)
{
	struct profile_window *fresh = profile_window_new(window, interval, max_stacks, now);
	struct profile *reloaded;
	struct window_split *split;
	char err[256];

	assert_non_null(fresh);
	reloaded = pprof_round_trip(profile_window_merged_closed(pw));
	split = split_round_trip(pw);
	assert_int_equal(window_split_check(split, reloaded, err, sizeof(err)), 0);
	assert_int_equal(profile_window_restore(fresh, reloaded, split), 0);
	window_split_free(split);
	return fresh;
}

static bool has_function(const struct profile *p, const char *name)
{
	uint32_t idx;

	return profile_string_lookup(p, name, &idx);
}

/* a and b (their closed intervals) hold the same samples, over the same time. */
static void assert_same_window(struct profile_window *a, struct profile_window *b, unsigned upto)
{
	struct profile_totals ta, tb;
	uint64_t sa, ea, sb, eb;
	struct profile *ma, *mb;
	char name[32];
	unsigned sec;

	ma = pprof_round_trip(profile_window_merged_closed(a));
	mb = profile_window_merged_closed(b);
	profile_get_totals(ma, &ta);
	profile_get_totals(mb, &tb);
	assert_int_equal(ta.samples, tb.samples);
	assert_int_equal(ta.cpu_ns, tb.cpu_ns);
	profile_get_time(ma, &sa, &ea);
	profile_get_time(mb, &sb, &eb);
	assert_int_equal(sa, sb);
	assert_int_equal(ea, eb);
	for (sec = 0; sec < upto; sec++) {
		snprintf(name, sizeof(name), "s%u", sec);
		assert_int_equal(has_function(ma, name), has_function(mb, name));
	}
	profile_free(ma);
}

/* Window 30 s of 10 s intervals; restarted at 50 s, then 40 s more: at every
 * roll the restored window is the never-restarted one, and one restored
 * interval leaves at each roll until none is left. */
static void test_restore_as_if_no_restart(void **state)
{
	struct profile_window *a = profile_window_new(S(30), S(10), 0, T0), *b = NULL;
	struct profile_window_stats st;
	unsigned sec;

	(void)state;
	for (sec = 0; sec < 90; sec++) {
		add_second(a, sec);
		if (b != NULL)
			add_second(b, sec);
		if ((sec + 1) % 10 != 0)
			continue;
		assert_non_null(profile_window_roll(a, T0 + S(sec + 1)));
		if (b != NULL) {
			assert_non_null(profile_window_roll(b, T0 + S(sec + 1)));
			assert_same_window(a, b, sec + 1);
			profile_window_get_stats(b, &st);
			/* The three restored intervals leave one per roll. */
			assert_int_equal(st.expired, (sec + 1 - 50) / 10);
			assert_int_equal(st.intervals, 3);
		}
		if (sec + 1 == 50) {
			profile_window_merged_closed(a);
			b = restart(a, S(30), S(10), 0, T0 + S(50));
			profile_window_get_stats(b, &st);
			assert_int_equal(st.intervals, 3);
			assert_int_equal(st.start_ns, T0 + S(20));
			assert_same_window(a, b, 50);
		}
	}
	profile_window_free(a);
	profile_window_free(b);
}

/* The merge's cap folds the store's stacks (more distinct stacks than
 * --max-stacks): the split follows the folded stacks, and still checks. */
static void test_restore_past_the_cap(void **state)
{
	struct profile_window *a = profile_window_new(S(30), S(10), 8, T0), *b;
	struct profile_totals t;
	unsigned sec;

	(void)state;
	for (sec = 0; sec < 40; sec++) {
		add_second(a, sec);
		if ((sec + 1) % 10 == 0)
			assert_non_null(profile_window_roll(a, T0 + S(sec + 1)));
	}
	profile_get_totals(profile_window_merged_closed(a), &t);
	assert_true(t.folded_samples > 0);
	b = restart(a, S(30), S(10), 8, T0 + S(40));
	for (; sec < 70; sec++) {
		add_second(a, sec);
		add_second(b, sec);
		if ((sec + 1) % 10 == 0) {
			assert_non_null(profile_window_roll(a, T0 + S(sec + 1)));
			assert_non_null(profile_window_roll(b, T0 + S(sec + 1)));
			profile_get_totals(profile_window_merged_closed(b), &t);
			/* The restored intervals left: only the new ones' samples. */
			if (sec + 1 == 70)
				assert_int_equal(t.samples, 30 * 2 + (1 + 2 + 3) * 10);
		}
	}
	profile_window_free(a);
	profile_window_free(b);
}

/* A forced merge holds the current interval too: its split has it as the
 * newest part, ending at now. */
static void test_split_with_current(void **state)
{
	struct profile_window *a = profile_window_new(S(30), S(10), 0, T0);
	const struct window_split *s;
	struct profile *reloaded;
	char err[256];
	unsigned sec;

	(void)state;
	for (sec = 0; sec < 25; sec++) {
		add_second(a, sec);
		if ((sec + 1) % 10 == 0)
			assert_non_null(profile_window_roll(a, T0 + S(sec + 1)));
	}
	reloaded = pprof_round_trip(profile_window_merged(a, T0 + S(25)));
	s = profile_window_split(a);
	assert_non_null(s);
	assert_int_equal(s->nparts, 3);
	assert_int_equal(s->parts[2].start_ns, T0 + S(20));
	assert_int_equal(s->parts[2].end_ns, T0 + S(25));
	assert_int_equal(window_split_check(s, reloaded, err, sizeof(err)), 0);
	profile_free(reloaded);
	profile_window_free(a);
}

/* Refusals leave everything as it was: the profile stays the caller's. */
static void test_restore_refused(void **state)
{
	struct profile_window *a = profile_window_new(S(30), S(10), 0, T0), *b;
	struct window_split *split;
	struct profile *reloaded;
	unsigned sec;

	(void)state;
	for (sec = 0; sec < 20; sec++) {
		add_second(a, sec);
		if ((sec + 1) % 10 == 0)
			assert_non_null(profile_window_roll(a, T0 + S(sec + 1)));
	}
	reloaded = pprof_round_trip(profile_window_merged_closed(a));
	split = split_round_trip(a);
	/* Not a fresh window. */
	assert_int_equal(profile_window_restore(a, reloaded, split), -EINVAL);
	/* Another profile's split. */
	b = profile_window_new(S(30), S(10), 0, T0 + S(20));
	split->nstacks++;
	assert_int_equal(profile_window_restore(b, reloaded, split), -EINVAL);
	split->nstacks--;
	assert_int_equal(profile_window_restore(b, reloaded, split), 0);
	window_split_free(split);
	profile_window_free(a);
	profile_window_free(b);
}

/* Restored late (the exporter was down longer than an interval): what left
 * the window meanwhile is gone at once; the checkpoint joins as the newest
 * closed interval, cut where it would overlap, and leaves at its own start
 * plus the window. */
static void test_restore_late_with_tail(void **state)
{
	struct profile_window *a = profile_window_new(S(30), S(10), 0, T0), *b;
	struct profile_window_stats st;
	struct profile *reloaded, *tail;
	struct window_split *split;
	struct frame f = { .function = "tail_fn", .module = "/bin/app", .address = 0x401000,
			   .module_offset = 0x1000, .map_start = 0x400000, .map_end = 0x500000 };
	struct profile_totals t;
	unsigned sec;

	(void)state;
	for (sec = 0; sec < 30; sec++) {
		add_second(a, sec);
		if ((sec + 1) % 10 == 0)
			assert_non_null(profile_window_roll(a, T0 + S(sec + 1)));
	}
	reloaded = pprof_round_trip(profile_window_merged_closed(a));
	split = split_round_trip(a);
	/* Restarted at 35 s: [0, 10) left at 30 s. */
	b = profile_window_new(S(30), S(10), 0, T0 + S(35));
	assert_int_equal(profile_window_restore(b, reloaded, split), 0);
	window_split_free(split);
	profile_window_get_stats(b, &st);
	assert_int_equal(st.intervals, 2);
	assert_int_equal(st.start_ns, T0 + S(10));
	/* The checkpoint of [30, 34), said to start a second early. */
	tail = profile_new();
	assert_int_equal(profile_add_sample(tail, 1, 1, "app", &f, 1, false, 5, 5000), 0);
	assert_int_equal(profile_window_push_closed(b, tail, T0 + S(29), T0 + S(34)), 0);
	profile_window_get_stats(b, &st);
	assert_int_equal(st.intervals, 3);
	profile_get_totals(profile_window_merged_closed(b), &t);
	/* seconds 10 to 29: 2 shared each, and 1 + sec % 3 of their own */
	assert_int_equal(t.samples, 5 + 2 * 20 + 7 * 2 + 7 * 3 + 6 * 1);
	assert_true(has_function(profile_window_merged_closed(b), "tail_fn"));
	/* At 45 s [10, 20) leaves; at 55 s [20, 30); at 65 s the tail, cut to begin at 30 s. */
	assert_non_null(profile_window_roll(b, T0 + S(45)));
	profile_window_get_stats(b, &st);
	assert_int_equal(st.start_ns, T0 + S(20));
	assert_non_null(profile_window_roll(b, T0 + S(55)));
	profile_window_get_stats(b, &st);
	assert_int_equal(st.start_ns, T0 + S(30));
	assert_true(has_function(profile_window_merged_closed(b), "tail_fn"));
	assert_non_null(profile_window_roll(b, T0 + S(65)));
	profile_window_get_stats(b, &st);
	assert_int_equal(st.start_ns, T0 + S(35));
	assert_false(has_function(profile_window_merged_closed(b), "tail_fn"));
	/* A checkpoint ending before the newest closed interval: refused. */
	tail = profile_new();
	assert_int_equal(profile_add_sample(tail, 1, 1, "app", &f, 1, false, 5, 5000), 0);
	assert_int_equal(profile_window_push_closed(b, tail, T0 + S(1), T0 + S(2)), -EINVAL);
	profile_window_free(a);
	profile_window_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restore_as_if_no_restart),
		cmocka_unit_test(test_restore_past_the_cap),
		cmocka_unit_test(test_split_with_current),
		cmocka_unit_test(test_restore_refused),
		cmocka_unit_test(test_restore_late_with_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
