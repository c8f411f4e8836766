#define _GNU_SOURCE /* open_memstream */
#include "exporter/formats/offcpu_outputs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "exporter/formats/flamegraph_svg.h"
#include "exporter/formats/folded_writer.h"
#include "exporter/formats/output_file.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/formats/summary_json.h"
#include "exporter/profile/profile.h"
#include "ipc/output_files.h"

struct offcpu_job {
	const struct profile *p;
	char err[256];
};

static int offcpu_pprof(FILE *f, void *arg)
{
	static const struct pprof_sample_types types = {
		.count_type = "off_cpu_us", .count_unit = "microseconds",
		.value_type = "off_cpu", .value_unit = "nanoseconds",
	};
	struct offcpu_job *job = arg;

	return pprof_write_types(job->p, &types, f, job->err, sizeof(job->err));
}

static int offcpu_folded(FILE *f, void *arg)
{
	struct offcpu_job *job = arg;

	return folded_write(job->p, f);
}

static int offcpu_svg(FILE *f, void *arg)
{
	struct offcpu_job *job = arg;
	struct flamegraph_options opts;

	memset(&opts, 0, sizeof(opts));
	opts.title = "lowprof: off-CPU flame graph (widths: blocked time; \"samples\" are microseconds)";
	return flamegraph_write_svg(job->p, f, &opts);
}

int offcpu_outputs_write(const struct profile *p, int dirfd)
{
	/* Durable like profile.pb.gz, its views not fsynced (outputs.c). */
	static const struct {
		const char *name;
		int (*writer)(FILE *, void *);
		unsigned flags; /* output_file_write_flags */
	} files[] = {
		{OUTPUT_FILE_OFFCPU_PPROF, offcpu_pprof, 0},
		{OUTPUT_FILE_OFFCPU_FOLDED, offcpu_folded, OUTPUT_FILE_PROCESS_SAFE},
		{OUTPUT_FILE_OFFCPU_SVG, offcpu_svg, OUTPUT_FILE_PROCESS_SAFE},
	};
	struct offcpu_job job;
	char err[256];
	size_t i;
	int status = 0;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		memset(&job, 0, sizeof(job));
		job.p = p;
		if (output_file_write_flags(dirfd, files[i].name, files[i].writer, &job,
					    files[i].flags, err, sizeof(err)) != 0) {
			log_error("writing %s: %s%s%s", files[i].name, err, job.err[0] ? ": " : "", job.err);
			status = -1;
		}
	}
	return status;
}

static int offcpu_cmp_ns(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	uint64_t x = profile_stack_at(p, *(const size_t *)a)->cpu_ns;
	uint64_t y = profile_stack_at(p, *(const size_t *)b)->cpu_ns;

	if (x != y)
		return x > y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void offcpu_stack_json(FILE *f, const struct profile *p, const struct profile_stack *s)
{
	uint32_t i;

	if (s->pid == PROFILE_PID_GONE)
		fputs("{\"pid\": null, \"comm\": ", f); /* processes gone, folded by comm */
	else
		fprintf(f, "{\"pid\": %" PRIu32 ", \"comm\": ", s->pid);
	summary_json_write_string(f, profile_string(p, s->comm));
	fprintf(f, ", \"off_cpu_ns\": %" PRIu64 ", \"frames\": [", s->cpu_ns);
	for (i = 0; i < s->nlocations; i++) {
		const struct profile_function *fn = profile_stack_function(p, s, i, PROFILE_ROOT_FIRST);

		if (i > 0)
			fputs(", ", f);
		summary_json_write_string(f, profile_string(p, fn->name));
	}
	fputs("]}", f);
}

void offcpu_collection_json(const struct lowprof_loader_stats *l, char *buf, size_t len)
{
	if (l == NULL) {
		snprintf(buf, len, "null");
		return;
	}
	/* sampled_out: switches whose outgoing task the probability passed over
	 * (with the idle task and filtered pids, which are never recorded). */
	snprintf(buf, len,
		 "{\"switches\": %" PRIu64 ", \"sampled_out\": %" PRIu64 ", \"stashed\": %" PRIu64
		 ", \"guard_skipped\": %" PRIu64 ", \"below_threshold\": %" PRIu64
		 ", \"records\": %" PRIu64 ", \"drops\": %" PRIu64 ", \"bpf_run_time_ns\": %" PRIu64
		 ", \"floor_runs\": %" PRIu64 ", \"floor_run_ns\": %" PRIu64
		 ", \"stale_dropped\": %" PRIu64
		 ", \"probability_pct\": %.4f, \"attached\": %s}",
		 (uint64_t)l->offcpu_switches,
		 (uint64_t)(l->offcpu_switches > l->offcpu_sampled ? l->offcpu_switches - l->offcpu_sampled : 0),
		 (uint64_t)l->offcpu_stashed, (uint64_t)l->offcpu_guard_skipped,
		 (uint64_t)l->offcpu_short, (uint64_t)l->offcpu_submitted,
		 (uint64_t)l->offcpu_reserve_failures, (uint64_t)l->offcpu_run_time_ns,
		 (uint64_t)l->offcpu_floor_runs, (uint64_t)l->offcpu_floor_run_ns,
		 (uint64_t)l->offcpu_stale_dropped,
		 (l->offcpu_prob_ppm > 1000000 ? 1000000 : l->offcpu_prob_ppm) / 1e4,
		 l->offcpu_attached ? "true" : "false");
}

char *offcpu_summary_json(const struct profile *p, uint64_t records,
			  const struct lowprof_loader_stats *loader)
{
	char collection[768];
	struct profile_totals t;
	size_t n = profile_stack_count(p), i, *order, len = 0;
	char *buf = NULL;
	FILE *f;

	order = calloc(n ? n : 1, sizeof(*order));
	if (order == NULL)
		return NULL;
	f = open_memstream(&buf, &len);
	if (f == NULL) {
		free(order);
		return NULL;
	}
	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), offcpu_cmp_ns, (void *)p);
	profile_get_totals(p, &t);
	offcpu_collection_json(loader, collection, sizeof(collection));
	fprintf(f, "{\"records\": %" PRIu64 ", \"off_cpu_ns\": %" PRIu64 ", \"stacks\": %zu, "
		   "\"collection\": %s, \"top_stacks\": [", records, t.cpu_ns, t.stacks, collection);
	for (i = 0; i < n && i < OFFCPU_SUMMARY_TOP; i++) {
		if (i > 0)
			fputs(", ", f);
		offcpu_stack_json(f, p, profile_stack_at(p, order[i]));
	}
	fputs("]}", f);
	free(order);
	if (fclose(f) != 0 || buf == NULL) {
		free(buf);
		return NULL;
	}
	return buf;
}
