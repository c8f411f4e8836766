/*
 * From a raw sample (pid + addresses) to a symbolized stack in the profile.
 */
#ifndef LOWPROF_EXPORTER_INGEST_H
#define LOWPROF_EXPORTER_INGEST_H

#include <stdint.h>

#include "ipc/sample_record.h"

struct profile;
struct symbolizer;

struct ingest_stats {
	uint64_t samples;         /* accepted into the profile */
	uint64_t rejected;        /* malformed records */
	uint64_t truncated;       /* user stack cut by the depth limit */
	uint64_t no_user_stack;   /* kernel threads, or user stack unavailable */
};

/* Symbolize and add one validated sample. 0, or -errno when the profile refused it. */
int ingest_sample(struct profile *p, struct symbolizer *sym, const struct sample_view *sv,
		  struct ingest_stats *st);

#endif
