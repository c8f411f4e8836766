/*
 * From a sample (kernel addresses, user frames as (file, offset), vDSO
 * offsets or raw addresses) to a symbolized stack in the profile. A user
 * stack that BPF could not unwind to its end (user_stop) ends, outermost,
 * in a marker frame that says why (profile_stop_names) instead of a guess.
 */
#ifndef LOWPROF_EXPORTER_INGEST_H
#define LOWPROF_EXPORTER_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "ipc/sample_record.h"

struct process_info_cache;
struct stack_cache;
struct profile;
struct symbolizer;

/* Where one sample goes: the cumulative profile the files are written from,
 * and, when exporting OTLP, the current interval's profile and the per-pid
 * metadata (executable path, container id) read at a pid's first sight. */
struct ingest_targets {
	struct profile *cumulative;
	struct profile *interval;          /* NULL: not exporting */
	struct process_info_cache *procs;  /* NULL: not exporting */
	struct profile *offcpu;            /* off-CPU records (--off-cpu); NULL: dropped */
	struct profile *offcpu_interval;   /* ... and the OTLP interval's; NULL: not exporting */
	struct stack_cache *stacks;        /* symbolized stacks seen before; NULL: none */
};

struct ingest_stats {
	uint64_t samples;         /* accepted into the profile */
	uint64_t rejected;        /* malformed records */
	uint64_t truncated;       /* user stack cut by the depth limit */
	uint64_t no_user_stack;   /* kernel threads, or user stack unavailable */
	uint64_t interval_refused; /* in the cumulative profile, refused by the interval's */
	uint64_t offcpu;          /* off-CPU records accepted (not in samples) */
};

/* Symbolize (once) and add one validated sample to each target. 0, or -errno
 * when the cumulative profile refused it. */
int ingest_sample(const struct ingest_targets *t, struct symbolizer *sym,
		  const struct sample_view *sv, struct ingest_stats *st);

/* True when a user frame of the sample is a raw address: only those are
 * named from the pid's maps (symbolizer_prefetch_pids is for them alone). */
bool ingest_uses_maps(const struct sample_view *sv);

#endif
