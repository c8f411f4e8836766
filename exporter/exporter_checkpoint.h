/*
 * The checkpoint of the interval being collected: a restarted exporter
 * reloads the window the files hold and, after it, the samples read since
 * (exporter_checkpoint.c says why and how the two never overlap).
 */
#ifndef LOWPROF_EXPORTER_CHECKPOINT_H
#define LOWPROF_EXPORTER_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mono_clock.h"

struct exporter;
struct profile;

/*
 * How far apart checkpoints are, and only when samples came since the last
 * one: an exporter's death loses at most that much of the run.
 *
 * A checkpoint encodes the whole interval being collected, so its cost grows
 * with the interval: at a long --interval on a busy host, 20 000 stacks of
 * 30 frames take ~19 ms to write, and every 2 s that would be 1% of a CPU,
 * more than the writes' whole allowance (output_pace.h) at the default
 * budget. So the gap follows the last checkpoint's measured cost: the
 * checkpoints take at most 1/EXPORTER_CHECKPOINT_SHARE of the writes'
 * allowance, at least EXPORTER_CHECKPOINT_NS apart (a small interval's
 * checkpoint, at rest, costs a fraction of a ms) and at most
 * EXPORTER_CHECKPOINT_MAX_NS: beyond that the samples a crash could lose
 * matter more than the cost (the files' own bound, max_every, is the same
 * trade). While the interval holds a trickle (exporter_trickle: an idle
 * host), at least an --interval apart (at most EXPORTER_CHECKPOINT_MAX_NS).
 *
 * The checkpoint is for the exporter's death, and only an exporter of the
 * same run reads it back: it lives in a memfd the supervisor holds
 * (LOWPROF_FD_CHECKPOINT, formats/held_file.h), which ends with the run.
 * In the output directory it had cost a file created, renamed over the
 * last one, the last one's blocks freed (a synchronous discard where the
 * file system is mounted `discard`) and written back to disk, for every
 * checkpoint; its fsyncs, earlier, two I/O sleeps and a fifth of its CPU.
 */
#define EXPORTER_CHECKPOINT_NS (2 * NSEC_PER_SEC)
#define EXPORTER_CHECKPOINT_MAX_NS (60 * NSEC_PER_SEC)
#define EXPORTER_CHECKPOINT_SHARE 4

struct exporter_checkpoint {
	uint64_t interval_start_ns; /* the interval last written (unix ns) */
	uint64_t samples;           /* and its samples then */
	uint64_t written_mono_ns;   /* when; 0 never */
	uint64_t written, failures;
	uint64_t cost_ns;           /* the last one's CPU time; 0 before the first */
	uint64_t max_cost_ns;       /* the most one cost */
	uint64_t cpu_ns;            /* all of them */
	uint64_t gap_ns;            /* the gap after the last one (exporter_checkpoint_gap_ns) */
};

/* The gap after a checkpoint that cost cost_ns, the writes being allowed
 * allowance_ns per slot_ns (UINT64_MAX: no bound): within
 * [EXPORTER_CHECKPOINT_NS, EXPORTER_CHECKPOINT_MAX_NS]. */
uint64_t exporter_checkpoint_gap_ns(uint64_t cost_ns, uint64_t allowance_ns, uint64_t slot_ns);

/* Whether the interval begun at interval_start_ns, holding samples, is to be
 * written now: new samples since the last checkpoint, and that one gap_ns old. */
bool exporter_checkpoint_due(const struct exporter_checkpoint *c, uint64_t interval_start_ns,
			     uint64_t samples, uint64_t now_mono_ns, uint64_t gap_ns);

/* summary.json's "checkpoint": {"writes": N, "failures": N, "cpu_ms": (all
 * of them), "cost_ms": (the last), "max_cost_ms": .., "every_s": (the gap now)}. The length written, or -1 when buf is
 * too small. */
int exporter_checkpoint_json(const struct exporter_checkpoint *c, char *buf, size_t len);

/* Writes the current interval when due (a loop turn's call; its CPU is
 * charged to the write pacing). Never fatal: a failure is logged and counted. */
void exporter_checkpoint(struct exporter *ex);

/* The checkpoint the last exporter of this run left, when it is the tail of
 * the window file that ends at window_end_ns, of the run started at
 * run_start_ns, and ends by now: else NULL (*refused when it could not be
 * read: a write the exporter's death cut short, logged and counted lost). */
struct profile *exporter_checkpoint_reload(uint64_t window_end_ns, uint64_t run_start_ns,
					   uint64_t now_unix_ns, bool *refused);

/* Nothing to take back (the stop wrote everything to the files). */
void exporter_checkpoint_clear(void);

#endif
