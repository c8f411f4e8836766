#include "exporter/profile/timeline.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/throttle.h"

struct timeline {
	struct lowprof_timeline_entry *ring; /* the newest max entries */
	size_t cap;   /* entries allocated, grows by doubling up to max */
	size_t max;
	size_t head;  /* once full: index of the oldest entry */
	size_t count;
	/* Whole-run sums: the overhead survives entries leaving the ring. */
	double capacity_ns, cost_ns, max_pct;
	uint64_t bpf_ns, events, startup_ns;
	uint32_t budget_centipct;
	bool any;
};

struct timeline *timeline_new(size_t max_entries)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (tl == NULL)
		return NULL;
	tl->max = max_entries > 0 ? max_entries : 1;
	return tl;
}

void timeline_free(struct timeline *tl)
{
	if (tl == NULL)
		return;
	free(tl->ring);
	free(tl);
}

size_t timeline_count(const struct timeline *tl)
{
	return tl->count;
}

uint64_t timeline_startup_ns(const struct timeline *tl)
{
	return tl->startup_ns;
}

static double timeline_overhead_pct(const struct lowprof_timeline_entry *e)
{
	double capacity = (double)e->online_cpus * (double)e->interval_ns;

	return ((double)e->bpf_run_time_ns + (double)e->agent_cpu_ns) / capacity * 100.0;
}

static double timeline_drop_pct(const struct lowprof_timeline_entry *e)
{
	double total = (double)e->submitted + (double)e->reserve_failures;

	return total > 0 ? (double)e->reserve_failures / total * 100.0 : 0.0;
}

int timeline_add(struct timeline *tl, const struct lowprof_timeline_entry *e)
{
	double pct = timeline_overhead_pct(e);

	/* Grow by doubling while below the maximum: most runs never reach it. */
	if (tl->count == tl->cap && tl->cap < tl->max) {
		size_t cap = tl->cap == 0 ? 64 : tl->cap * 2;
		struct lowprof_timeline_entry *p;

		if (cap > tl->max)
			cap = tl->max;
		p = realloc(tl->ring, cap * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		tl->ring = p;
		tl->cap = cap;
	}
	if (tl->count < tl->max) {
		tl->ring[tl->count++] = *e;
	} else {
		/* Full: the oldest entry gives way. */
		tl->ring[tl->head] = *e;
		tl->head = (tl->head + 1) % tl->max;
	}
	tl->capacity_ns += (double)e->online_cpus * (double)e->interval_ns;
	tl->cost_ns += (double)e->bpf_run_time_ns + (double)e->agent_cpu_ns;
	if (!tl->any || pct > tl->max_pct)
		tl->max_pct = pct;
	tl->bpf_ns += e->bpf_run_time_ns;
	tl->events += e->events;
	tl->startup_ns += e->startup_cpu_ns;
	tl->budget_centipct = e->cpu_budget_centipct;
	tl->any = true;
	return 0;
}

/* The i-th oldest entry held. */
static const struct lowprof_timeline_entry *timeline_at(const struct timeline *tl, size_t i)
{
	if (tl->count < tl->max)
		return &tl->ring[i];
	return &tl->ring[(tl->head + i) % tl->max];
}

int timeline_latest(const struct timeline *tl, struct lowprof_timeline_entry *out)
{
	if (tl == NULL || tl->count == 0)
		return -ENOENT;
	*out = *timeline_at(tl, tl->count - 1);
	return 0;
}

const char *timeline_tier_name(uint32_t tier)
{
	/* timeline_entry_decode() refused tiers out of range; be safe anyway. */
	if (tier >= THROTTLE_TIER_COUNT)
		return throttle_tier_name(THROTTLE_TIER_HEALTHY);
	return throttle_tier_name(tier);
}

char *timeline_overhead_json(const struct timeline *tl)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	if (!tl->any) {
		fputs("null", f);
	} else {
		fprintf(f, "{\"budget_pct\": %.2f, \"max_pct\": %.4f, \"mean_pct\": %.4f, ",
			tl->budget_centipct / 100.0, tl->max_pct,
			tl->capacity_ns > 0 ? tl->cost_ns / tl->capacity_ns * 100.0 : 0.0);
		if (tl->events > 0)
			fprintf(f, "\"bpf_ns_per_sample\": %.1f}", (double)tl->bpf_ns / (double)tl->events);
		else
			fputs("\"bpf_ns_per_sample\": null}", f);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void timeline_entry_json(FILE *f, const struct lowprof_timeline_entry *e, uint64_t start)
{
	double t = e->monotonic_ns >= start ? (double)(e->monotonic_ns - start) / 1e9
					    : -(double)(start - e->monotonic_ns) / 1e9;

	fprintf(f, "{\"t\": %.3f, \"tier\": \"%s\", \"frequency_hz\": %u, \"unwind\": \"%s\", "
		   "\"max_depth\": %u, \"sample_divisor\": %u, \"paused\": %s, ",
		t, timeline_tier_name(e->tier), e->frequency_hz,
		throttle_unwind_name(e->unwind), e->max_depth, e->sample_divisor,
		e->paused ? "true" : "false");
	if (e->flags & LOWPROF_TIMELINE_HOST_VALID)
		fprintf(f, "\"host_cpu_pct\": %.2f, ", e->host_cpu_centipct / 100.0);
	else
		fputs("\"host_cpu_pct\": null, ", f);
	fprintf(f, "\"drop_pct\": %.2f, \"overhead_pct\": %.4f, \"failsafe\": %s, "
		   "\"interval_s\": %.3f, \"events\": %llu, \"samples\": %llu, \"lost\": %llu, "
		   "\"bpf_run_time_ns\": %llu, \"agent_cpu_ns\": %llu, \"startup_cpu_ns\": %llu}",
		timeline_drop_pct(e), timeline_overhead_pct(e),
		(e->flags & LOWPROF_TIMELINE_FAILSAFE) ? "true" : "false", (double)e->interval_ns / 1e9,
		(unsigned long long)e->events, (unsigned long long)e->submitted,
		(unsigned long long)e->reserve_failures, (unsigned long long)e->bpf_run_time_ns,
		(unsigned long long)e->agent_cpu_ns, (unsigned long long)e->startup_cpu_ns);
}

char *timeline_entries_json(const struct timeline *tl, uint64_t start_mono_ns)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	fputc('[', f);
	for (i = 0; i < tl->count; i++) {
		fputs(i == 0 ? "\n    " : ",\n    ", f);
		timeline_entry_json(f, timeline_at(tl, i), start_mono_ns);
	}
	fputs(tl->count > 0 ? "\n  ]" : "]", f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
