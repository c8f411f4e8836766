#define _GNU_SOURCE /* fopencookie */
#include "exporter/formats/outputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/log.h"
#include "exporter/formats/flamegraph_svg.h"
#include "exporter/formats/folded_writer.h"
#include "exporter/formats/output_file.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/formats/summary_json.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/timeline.h"
#include "ipc/output_files.h"

struct outputs_job {
	const struct profile *profile;
	const struct outputs_context *ctx;
	int which; /* enum outputs_file */
	char err[256];
};

uint64_t outputs_lost_samples(const struct lowprof_loader_stats *loader)
{
	return loader->reserve_failures + loader->shm_dropped;
}

static int outputs_pprof(FILE *f, void *arg)
{
	struct outputs_job *job = arg;

	return pprof_write(job->profile, f, job->err, sizeof(job->err));
}

static int outputs_folded(FILE *f, void *arg)
{
	struct outputs_job *job = arg;

	/* Its sort pauses like its bytes (ctx->progress may be NULL: none). */
	return folded_write_paced(job->profile, f, job->ctx->progress, job->ctx->progress_arg);
}

static int outputs_svg(FILE *f, void *arg)
{
	struct outputs_job *job = arg;
	struct flamegraph_options opts;
	struct timeline_sampling ts;
	char title[192];
	int n;

	memset(&opts, 0, sizeof(opts));
	/* The real sampling: what the throttle did to -F, from the timeline. */
	n = snprintf(title, sizeof(title), "lowprof: on-CPU flame graph, %u Hz", job->ctx->frequency_hz);
	if (timeline_sampling(job->ctx->timeline, job->ctx->frequency_hz, &ts) == 0 &&
	    ts.throttled_fraction > 0 && n > 0 && (size_t)n < sizeof(title)) {
		if (ts.lowest_hz == 0)
			snprintf(title + n, sizeof(title) - (size_t)n, ", paused or throttled for %.0f%% of the run",
				 100.0 * ts.throttled_fraction);
		else
			snprintf(title + n, sizeof(title) - (size_t)n, ", throttled to %u Hz for %.0f%% of the run",
				 ts.lowest_hz, 100.0 * ts.throttled_fraction);
	}
	opts.title = title;
	/* Building the tree pauses like its bytes (ctx->progress may be NULL: none). */
	opts.progress = job->ctx->progress;
	opts.progress_arg = job->ctx->progress_arg;
	return flamegraph_write_svg(job->profile, f, &opts);
}

/* The collection counters summary.json reports beside the profile itself. */
static void outputs_collection_json(const struct outputs_context *ctx, char *buf, size_t len)
{
	const struct lowprof_loader_stats *l = ctx->loader;
	double ns_per_sample = 0;

	if (l == NULL) {
		snprintf(buf, len, "null");
		return;
	}
	if (l->events > 0)
		ns_per_sample = (double)l->bpf_run_time_ns / (double)l->events;
	snprintf(buf, len,
		 "{\"frequency_hz\": %llu, \"online_cpus\": %u, \"bpf_events\": %llu, "
		 "\"submitted\": %llu, \"ringbuf_reserve_failures\": %llu, \"shm_dropped\": %llu, "
		 "\"divisor_skipped\": %llu, \"guard_skipped\": %llu, \"guard_proc_capped\": %llu, "
		 "\"sigframe_refused\": %llu, \"bpf_run_time_ns\": %llu, "
		 "\"bpf_ns_per_event\": %.1f, \"ringbuf_bytes\": %llu, "
		 "\"rejected_records\": %llu, \"truncated_stacks\": %llu, \"no_user_stack\": %llu}",
		 (unsigned long long)l->frequency_hz, l->online_cpus, (unsigned long long)l->events,
		 (unsigned long long)l->submitted, (unsigned long long)l->reserve_failures,
		 (unsigned long long)l->shm_dropped, (unsigned long long)l->divisor_skipped,
		 (unsigned long long)l->guard_skipped, (unsigned long long)l->guard_proc_capped,
		 (unsigned long long)l->sigframe_refused, (unsigned long long)l->bpf_run_time_ns,
		 ns_per_sample, (unsigned long long)l->ringbuf_bytes,
		 (unsigned long long)ctx->ingest->rejected, (unsigned long long)ctx->ingest->truncated,
		 (unsigned long long)ctx->ingest->no_user_stack);
}

static int outputs_summary(FILE *f, void *arg)
{
	struct outputs_job *job = arg;
	const struct outputs_context *ctx = job->ctx;
	const struct {
		const char *key, *json;
	} given[] = {
		{"export", ctx->export_json},     {"restarts", ctx->restarts_json},
		{"lost_on_restart", ctx->lost_on_restart_json},
		{"window", ctx->window_json},     {"off_cpu", ctx->offcpu_json},
		{"caps", ctx->caps_json},         {"outputs", ctx->outputs_json},
		{"checkpoint", ctx->checkpoint_json},
	};
	struct summary_extra extra[13];
	struct summary_info info;
	size_t i;
	char collection[1024], startup[160];
	char *overhead = NULL, *timeline = NULL, *earlier = NULL;
	int rc;

	memset(&info, 0, sizeof(info));
	info.duration_s = ctx->duration_s;
	if (ctx->loader != NULL) {
		info.lost_samples = outputs_lost_samples(ctx->loader);
		info.idle_samples = ctx->loader->idle;
	}
	outputs_collection_json(ctx, collection, sizeof(collection));
	extra[0].key = "collection";
	extra[0].raw_json = collection;
	info.extras = extra;
	info.nextras = 1;
	/* The throttle's record (docs/THROTTLE.md): only when the loader sends one. */
	if (ctx->timeline != NULL) {
		overhead = timeline_overhead_json(ctx->timeline);
		timeline = timeline_entries_json(ctx->timeline, ctx->start_mono_ns);
		if (overhead != NULL && timeline != NULL) {
			extra[1].key = "overhead";
			extra[1].raw_json = overhead;
			extra[2].key = "timeline";
			extra[2].raw_json = timeline;
			info.nextras = 3;
		}
		/* Entries older than the window, summarised. */
		earlier = timeline_trimmed_json(ctx->timeline, ctx->start_mono_ns);
		if (earlier != NULL && info.nextras == 3) {
			extra[info.nextras].key = "timeline_before_window";
			extra[info.nextras++].raw_json = earlier;
		}
	}
	/* Start-up is reported here, not charged to the overhead above. */
	if (ctx->loader != NULL && ctx->timeline != NULL) {
		snprintf(startup, sizeof(startup),
			 "{\"cpu_ms\": %.1f, \"bpf_load_ms\": %.1f, \"tables_ms\": %.1f}",
			 (double)timeline_startup_ns(ctx->timeline) / 1e6,
			 (double)ctx->loader->bpf_load_ns / 1e6, (double)ctx->loader->tables_ns / 1e6);
		extra[info.nextras].key = "startup";
		extra[info.nextras++].raw_json = startup;
	}
	/* The caller's members, in this order, each when given. */
	for (i = 0; i < sizeof(given) / sizeof(given[0]); i++) {
		if (given[i].json != NULL) {
			extra[info.nextras].key = given[i].key;
			extra[info.nextras++].raw_json = given[i].json;
		}
	}
	rc = summary_json_write(job->profile, &info, f);
	free(earlier);
	free(overhead);
	free(timeline);
	return rc;
}

/* profile.pb.gz and summary.json are fsynced before they replace the old
 * ones (output_file.h): after a host crash the profile and its counters are
 * there. The folded stacks and the flame graph are views of profile.pb.gz,
 * replaced as atomically for readers but not fsynced: two of a write's
 * four fsyncs, a dozen I/O sleeps, saved at every roll (docs/BENCHMARKS.md,
 * "Fewer wakes at rest"); after a host crash they may be older than
 * profile.pb.gz, or empty on a filesystem that does not order a rename
 * after the data (ext4's default does), until the next run's first write. */
static const struct {
	const char *name;
	int (*writer)(FILE *, void *);
	unsigned flags; /* output_file_write_flags */
} outputs_files[OUTPUTS_N] = {
	[OUTPUTS_PPROF] = {OUTPUT_FILE_PPROF, outputs_pprof, 0},
	[OUTPUTS_FOLDED] = {OUTPUT_FILE_FOLDED, outputs_folded, OUTPUT_FILE_PROCESS_SAFE},
	[OUTPUTS_SVG] = {OUTPUT_FILE_SVG, outputs_svg, OUTPUT_FILE_PROCESS_SAFE},
	[OUTPUTS_SUMMARY] = {OUTPUT_FILE_SUMMARY, outputs_summary, 0},
};

/* With a progress hook, the writer's bytes go through this stream: after each
 * buffer handed on, the hook may pause the write (the exporter's pacing). */
struct outputs_progress_stream {
	FILE *under;
	const struct outputs_context *ctx;
};

static ssize_t outputs_progress_write(void *cookie, const char *buf, size_t n)
{
	struct outputs_progress_stream *ps = cookie;

	if (fwrite(buf, 1, n, ps->under) != n)
		return -1;
	ps->ctx->progress(ps->ctx->progress_arg);
	return (ssize_t)n;
}

#define OUTPUTS_PROGRESS_BUFFER (64 * 1024)

static int outputs_progress_writer(FILE *f, void *arg)
{
	struct outputs_job *job = arg;
	struct outputs_progress_stream ps = {f, job->ctx};
	cookie_io_functions_t io = {.write = outputs_progress_write};
	FILE *pf;
	int rc;

	pf = fopencookie(&ps, "w", io);
	if (pf == NULL)
		return outputs_files[job->which].writer(f, arg);
	setvbuf(pf, NULL, _IOFBF, OUTPUTS_PROGRESS_BUFFER);
	rc = outputs_files[job->which].writer(pf, arg);
	if (fclose(pf) != 0 && rc == 0)
		rc = -EIO;
	return rc;
}

int outputs_write_file(const struct profile *p, const struct outputs_context *ctx,
		       enum outputs_file which)
{
	struct outputs_job job;
	char err[256];

	if ((unsigned)which >= OUTPUTS_N)
		return -1;
	memset(&job, 0, sizeof(job));
	job.profile = p;
	job.ctx = ctx;
	job.which = which;
	if (output_file_write_flags(ctx->dirfd, outputs_files[which].name,
				    ctx->progress != NULL ? outputs_progress_writer
							  : outputs_files[which].writer,
				    &job, outputs_files[which].flags, err, sizeof(err)) != 0) {
		log_error("writing %s: %s%s%s", outputs_files[which].name, err, job.err[0] ? ": " : "",
			  job.err);
		return -1;
	}
	return 0;
}

int outputs_write_all(const struct profile *p, const struct outputs_context *ctx)
{
	int status = 0;
	int i;

	for (i = 0; i < OUTPUTS_N; i++) {
		if (outputs_write_file(p, ctx, (enum outputs_file)i) != 0)
			status = -1;
	}
	return status;
}
