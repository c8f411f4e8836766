/*
 * Writing the profile so far into the output directory: every file replaced
 * atomically, so a reader never sees a half-written profile.
 */
#ifndef LOWPROF_EXPORTER_OUTPUTS_H
#define LOWPROF_EXPORTER_OUTPUTS_H

#include <stdint.h>

#include "exporter/ingest.h"
#include "ipc/loader_stats.h"

struct profile;
struct timeline;

struct outputs_context {
	int dirfd;
	unsigned frequency_hz;
	double duration_s;
	const struct lowprof_loader_stats *loader; /* latest counters, or NULL */
	const struct ingest_stats *ingest;
	struct timeline *timeline;         /* the throttle's intervals, or NULL */
	uint64_t start_mono_ns;            /* t = 0 of the timeline */
	/* Raw JSON members of summary.json, each omitted when NULL:
	 * "export" (otlp_client_stats_json), "restarts" ({"loader": N, ...}) and
	 * "lost_on_restart" (a number: samples killed exporters had read, not written),
	 * "window" (the span the files cover and the bounds in force). */
	const char *export_json;
	const char *restarts_json;
	const char *lost_on_restart_json;
	const char *window_json; /* "window": what the files cover, the caps */
	const char *offcpu_json; /* "off_cpu": the off-CPU profile's totals (--off-cpu) */
	const char *caps_json;   /* "caps": what every bound folded, evicted or set aside */
	const char *outputs_json; /* "outputs": when each file was last written (output_pace.h) */
	const char *checkpoint_json; /* "checkpoint": the interval being collected, on disk */
	/* Called after each 64 KiB written (NULL: none): it may pause the write
	 * (the exporter yields the CPU there when a write outlasts its share). */
	void (*progress)(void *arg);
	void *progress_arg;
};

enum outputs_file { OUTPUTS_PPROF, OUTPUTS_FOLDED, OUTPUTS_SVG, OUTPUTS_SUMMARY, OUTPUTS_N };

/* Writes one of them, atomically. 0, or -1 after logging the failure. */
int outputs_write_file(const struct profile *p, const struct outputs_context *ctx,
		       enum outputs_file which);
/* Writes profile.pb.gz, profile.folded, flamegraph.svg and summary.json.
 * Returns 0, or -1 after logging which file failed (the others are still written). */
int outputs_write_all(const struct profile *p, const struct outputs_context *ctx);
/* Samples lost before reaching the exporter: BPF ring full + shared ring full. */
uint64_t outputs_lost_samples(const struct lowprof_loader_stats *loader);

#endif
