/*
 * The checkpoint of the interval being collected: a restarted exporter
 * reloads the window the files hold and, after it, the samples read since
 * (exporter_checkpoint.c says why and how the two never overlap).
 */
#ifndef LOWPROF_EXPORTER_CHECKPOINT_H
#define LOWPROF_EXPORTER_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/mono_clock.h"

struct exporter;
struct profile;

/* At most this often, and only when samples came since the last one: an
 * exporter's death loses at most this much of the run. */
#define EXPORTER_CHECKPOINT_NS (2 * NSEC_PER_SEC)

struct exporter_checkpoint {
	uint64_t interval_start_ns; /* the interval last written (unix ns) */
	uint64_t samples;           /* and its samples then */
	uint64_t written_mono_ns;   /* when; 0 never */
	uint64_t written, failures;
};

/* Whether the interval begun at interval_start_ns, holding samples, is to be
 * written now: new samples since the last checkpoint, and that one old enough. */
bool exporter_checkpoint_due(const struct exporter_checkpoint *c, uint64_t interval_start_ns,
			     uint64_t samples, uint64_t now_mono_ns);

/* Writes the current interval when due (a loop turn's call; its CPU is
 * charged to the write pacing). Never fatal: a failure is logged and counted. */
void exporter_checkpoint(struct exporter *ex);

/* The checkpoint left in the output directory, when it is the tail of the
 * window file that ends at window_end_ns, of the run started at run_start_ns,
 * and ends by now: else NULL (*refused when it could not be read: to be
 * moved aside, not overwritten unseen). */
struct profile *exporter_checkpoint_reload(uint64_t window_end_ns, uint64_t run_start_ns,
					   uint64_t now_unix_ns, bool *refused);

/* A fresh run's, or a stopped one's: nothing to take back. */
void exporter_checkpoint_remove(void);

#endif
