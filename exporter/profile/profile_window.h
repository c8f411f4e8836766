/*
 * The sliding window the output files cover: each --interval's samples are
 * kept while it lies within the window, and the files are written from
 * their merge. So what writing costs depends on the window and the caps,
 * never on how long the run has been going. The intervals older than the
 * newest closed one (two at --interval 1) share one store of stacks (and
 * their strings, functions and locations), each keeping only its counts
 * there: a full window costs
 * its distinct stacks, not its intervals times their tables; what no
 * interval of the window uses any more leaves the store (profile_window.c).
 *
 * Times are the run's clock in nanoseconds (the exporter uses unix time kept
 * on the monotonic clock); the caller says what "now" is, so a test drives
 * the window with a fake clock.
 *
 * An interval [start, end) is in the window at time now while
 * start + window >= now: right after a roll at an interval boundary, the
 * closed intervals cover exactly the last window (or the whole run when it is
 * shorter). Not thread-safe.
 */
#ifndef LOWPROF_EXPORTER_PROFILE_WINDOW_H
#define LOWPROF_EXPORTER_PROFILE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct profile_window;
struct window_split;

struct profile_window_stats {
	size_t intervals;          /* closed intervals held */
	uint64_t start_ns;         /* the oldest held interval's start (the window's) */
	uint64_t expired;          /* intervals that left the window so far */
	/* Counts the rolls (and restores) that changed what the closed intervals
	 * hold: an interval with samples closed, folded or dropped. Equal counts:
	 * profile_window_merged_closed() would merge the same samples again, only
	 * its time range moved on (the exporter then leaves its files alone). */
	uint64_t changes;
	size_t memory_bytes;       /* heap of every held profile, the merge included */
};

/* window_ns >= interval_ns > 0; max_stacks caps every interval and the merge
 * (0: no cap). NULL when out of memory or on bad arguments. */
struct profile_window *profile_window_new(uint64_t window_ns, uint64_t interval_ns,
					  size_t max_stacks, uint64_t now_ns);
void profile_window_free(struct profile_window *pw);

/* The interval being collected: where samples go. Valid until the next roll. */
struct profile *profile_window_current(struct profile_window *pw);

/*
 * Closes the current interval at now_ns (it joins the window, even empty),
 * drops the intervals that left the window, oldest first, and opens the next.
 * Returns the interval just closed (valid until it leaves the window), or
 * NULL when out of memory (the current interval then goes on).
 */
const struct profile *profile_window_roll(struct profile_window *pw, uint64_t now_ns);

/*
 * Takes p (a profile reloaded at restart, covering [start_ns, end_ns), with
 * no split that matches it: profile_window_restore is the way with one) as
 * the window's oldest closed interval. It cannot be cut by time, so it stays
 * while its newest part is in the window, end_ns + window (end_ns counted as
 * at most start_ns + window): after a restart the files may cover up to two
 * windows, and say so in their times, rather than lose at the first roll
 * what the previous exporter wrote. 0, or -ENOMEM (p then freed).
 */
int profile_window_adopt(struct profile_window *pw, struct profile *p, uint64_t start_ns,
			 uint64_t end_ns);

/*
 * Takes back a window a previous exporter wrote, interval by interval: p (its
 * reloaded profile.pb.gz) becomes the store of the closed intervals, and
 * each part of split (its held window split, window_split_check'd
 * against p) one closed interval holding its counts there, leaving the
 * window when its own start does, as if no restart had happened. Those that
 * left it already (the exporter was down a while) leave at once. Only on a
 * window with no closed interval yet. 0 (p taken), or -EINVAL / -ENOMEM
 * (nothing changed, p still the caller's).
 */
int profile_window_restore(struct profile_window *pw, struct profile *p,
			   const struct window_split *split);

/*
 * Adds p, covering [start_ns, end_ns), as the newest closed interval (cut so
 * as not to overlap the others nor the current one): the checkpoint of the
 * interval a previous exporter was collecting when it died. 0 (p taken), or
 * -EINVAL (p freed: it ends before the newest closed interval).
 */
int profile_window_push_closed(struct profile_window *pw, struct profile *p, uint64_t start_ns,
			       uint64_t end_ns);

/*
 * The split by interval of the last merge (profile_window_merged or
 * _merged_closed): which of the merge's stacks, and how much of each, every
 * interval holds, for the file written beside it. NULL when it could not be
 * had (out of memory). Owned by the window, valid until the next merge.
 */
const struct window_split *profile_window_split(const struct profile_window *pw);
/* The same, handed over (the caller frees it): written once beside the
 * merge's file, it need not be held until the next merge. */
struct window_split *profile_window_take_split(struct profile_window *pw);

/*
 * The merge of the window's intervals and the current one, as of now_ns,
 * timed from the oldest start to now_ns. Rebuilt at each call; owned by the
 * window and valid until the next call. NULL when out of memory.
 */
struct profile *profile_window_merged(struct profile_window *pw, uint64_t now_ns);

/*
 * The merge of the closed intervals only, timed from the oldest start to the
 * current interval's: what the exporter writes after a roll, so that its
 * files and the checkpoint of the interval being collected never hold the
 * same sample (exporter_checkpoint.h). Owned as profile_window_merged's.
 */
struct profile *profile_window_merged_closed(struct profile_window *pw);

/*
 * Folding (on by default): at each roll, the closed intervals still keyed by
 * every pid, but the newest (at --interval 1 the newest two: they cover
 * 2 s, profile_window.c), have the stacks of the processes with no sample
 * in those folded by comm (profile_merge_mapped's fold) as they move into
 * the store: a process gone is named by its comm, and the identical stacks
 * of many short processes make one. Samples come in drains about a second
 * apart, so a process busy all along may have none in one 1 s interval,
 * but has some in any 2 s. The newest closed intervals (the newest is what
 * the archive and OTLP get) and the current one keep every pid. Off: every
 * pid kept.
 */
void profile_window_set_fold_gone(struct profile_window *pw, bool on);

/*
 * Called after each part merged into profile_window_merged(_closed) (the
 * store, then each interval not yet in it):
 * the caller may pause there (the write's pacing) and add samples to the
 * current interval meanwhile, but not roll. NULL: none.
 */
void profile_window_set_progress(struct profile_window *pw, void (*progress)(void *arg),
				 void *arg);

/* When the interval being collected began. */
uint64_t profile_window_current_start(const struct profile_window *pw);

void profile_window_get_stats(const struct profile_window *pw, struct profile_window_stats *out);

#endif
