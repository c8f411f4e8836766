/*
 * The off-CPU profile's files (--off-cpu): offcpu.pb.gz, offcpu.folded,
 * offcpu.svg, and its member of summary.json.
 *
 * The profile is the same model as the on-CPU one; a stack's count holds its
 * off-CPU time in microseconds (so the folded values and the flame graph's
 * widths are time, with the same encoders) and its cpu_ns the time in
 * nanoseconds (pprof's default sample type, "off_cpu nanoseconds").
 */
#ifndef LOWPROF_EXPORTER_OFFCPU_OUTPUTS_H
#define LOWPROF_EXPORTER_OFFCPU_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/loader_stats.h"

struct profile;

/* How many top stacks summary.json lists. */
#define OFFCPU_SUMMARY_TOP 10

/* Writes the three files into dirfd. 0, or -1 after logging which failed. */
int offcpu_outputs_write(const struct profile *p, int dirfd);
/* summary.json's "off_cpu" member: {"records": N, "off_cpu_ns": N,
 * "stacks": N, "collection": {the switch program's counters, from loader,
 * or null}, "top_stacks": [{"pid", "comm", "off_cpu_ns", "frames": [root
 * first]}...]}. Allocated (free it), or NULL when out of memory. */
char *offcpu_summary_json(const struct profile *p, uint64_t records,
			  const struct lowprof_loader_stats *loader);
/* The "collection" object alone (or "null" without loader), into buf. */
void offcpu_collection_json(const struct lowprof_loader_stats *loader, char *buf, size_t len);

#endif
