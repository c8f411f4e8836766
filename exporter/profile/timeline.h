/*
 * The throttle's timeline: one entry per control interval, forwarded by the
 * loader through the shared ring (LOWPROF_REC_TIMELINE), and what
 * summary.json says about it: "overhead" (budget, max and mean overhead,
 * BPF cost per sample) and "timeline" (the settings in force and the
 * measurements of each interval).
 */
#ifndef LOWPROF_EXPORTER_TIMELINE_H
#define LOWPROF_EXPORTER_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/lowprof.h"
#include "ipc/loader_stats.h"

/* Entries kept for "timeline" at most: a day at the default 1 s interval.
 * The exporter trims it to the window (timeline_trim); older entries leave
 * the list for a summary ("timeline_before_window") and still count in
 * "overhead". */
#define TIMELINE_MAX_ENTRIES 86400

struct timeline;

struct timeline *timeline_new(size_t max_entries);
void timeline_free(struct timeline *tl);
/* Add a validated entry (timeline_entry_decode). 0 or -ENOMEM. */
int timeline_add(struct timeline *tl, const struct lowprof_timeline_entry *e);
size_t timeline_count(const struct timeline *tl);
/* Entries older than oldest_mono_ns leave the list, oldest first, into the
 * summary of the earlier ones. */
void timeline_trim(struct timeline *tl, uint64_t oldest_mono_ns);
size_t timeline_trimmed_count(const struct timeline *tl);
/* That summary as a JSON object (times from start_mono_ns), malloc'd; NULL
 * when nothing was trimmed (or out of memory). */
char *timeline_trimmed_json(const struct timeline *tl, uint64_t start_mono_ns);
/* CPU of lowprof's processes' start-ups (first start and restarts) in the entries added. */
uint64_t timeline_startup_ns(const struct timeline *tl);
/* The newest entry (the settings in force): 0, or -ENOENT before the first. */
int timeline_latest(const struct timeline *tl, struct lowprof_timeline_entry *out);
/* How the throttle changed the sampling, over the entries held. */
struct timeline_sampling {
	double throttled_fraction; /* of the time, below the configured frequency */
	unsigned lowest_hz;        /* the lowest effective frequency (0: paused) */
};
/* Effective frequency: frequency_hz / sample_divisor, 0 while paused.
 * 0, or -ENOENT before the first entry. */
int timeline_sampling(const struct timeline *tl, unsigned configured_hz,
		      struct timeline_sampling *out);
/* "healthy", "high" or "critical". */
const char *timeline_tier_name(uint32_t tier);

/*
 * The "overhead" object, or "null" before the first entry. mean_pct is the
 * whole run's (BPF + agent CPU) / capacity, max_pct the worst interval's.
 * Returns a malloc'd string (NULL on allocation failure).
 */
char *timeline_overhead_json(const struct timeline *tl);
/* The "timeline" array; t is seconds from start_mono_ns to each interval's
 * end. Each entry is rendered once and kept while it is held (the same
 * start_mono_ns), so a write renders only the entries new since the last. */
char *timeline_entries_json(struct timeline *tl, uint64_t start_mono_ns);

#endif /* LOWPROF_EXPORTER_TIMELINE_H */
