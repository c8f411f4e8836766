#include "exporter/profile/timeline.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/throttle.h"

struct timeline {
	struct lowprof_timeline_entry *ring; /* the newest max entries */
	/* Each entry's JSON, beside it in a ring of the same shape: an entry
	 * never changes, so it is rendered once (at the first summary after
	 * it came) for as long as it is held, not at every write; a full
	 * window holds hundreds. NULL: not yet. For text_start (t's origin). */
	char **text;
	uint64_t text_start;
	size_t cap;   /* entries allocated, grows by doubling up to max */
	size_t max;
	size_t head;  /* index of the oldest entry */
	size_t count;
	/* Entries trimmed off as older than the window, summarised. */
	struct timeline_earlier {
		size_t entries, paused, tiers[THROTTLE_TIER_COUNT];
		uint64_t first_ns, last_ns, samples, lost;
		double capacity_ns, cost_ns, max_pct;
	} earlier;
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
	size_t i;

	if (tl == NULL)
		return;
	for (i = 0; tl->text != NULL && i < tl->cap; i++)
		free(tl->text[i]);
	free(tl->text);
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
	return throttle_overhead_pct(e->bpf_run_time_ns, e->agent_cpu_ns, e->online_cpus, e->interval_ns);
}

static double timeline_drop_pct(const struct lowprof_timeline_entry *e)
{
	return throttle_drop_pct(e->reserve_failures, e->submitted);
}

/* Doubling while below the maximum (most runs never reach it); the entries
 * are unwrapped into the new array. */
static int timeline_grow(struct timeline *tl)
{
	size_t cap = tl->cap == 0 ? 64 : tl->cap * 2, i;
	struct lowprof_timeline_entry *p;
	char **text;

	if (cap > tl->max)
		cap = tl->max;
	p = malloc(cap * sizeof(*p));
	text = calloc(cap, sizeof(*text));
	if (p == NULL || text == NULL) {
		free(p);
		free(text);
		return -ENOMEM;
	}
	for (i = 0; i < tl->count; i++) {
		p[i] = tl->ring[(tl->head + i) % tl->cap];
		text[i] = tl->text[(tl->head + i) % tl->cap];
	}
	free(tl->ring);
	free(tl->text);
	tl->ring = p;
	tl->text = text;
	tl->cap = cap;
	tl->head = 0;
	return 0;
}

/* The i-th oldest entry held. */
static struct lowprof_timeline_entry *timeline_at(const struct timeline *tl, size_t i)
{
	return &tl->ring[(tl->head + i) % tl->cap];
}

static void timeline_summarise_oldest(struct timeline *tl)
{
	const struct lowprof_timeline_entry *e = timeline_at(tl, 0);
	struct timeline_earlier *x = &tl->earlier;
	double pct = timeline_overhead_pct(e);

	if (x->entries == 0 || pct > x->max_pct)
		x->max_pct = pct;
	if (x->entries == 0)
		x->first_ns = e->monotonic_ns;
	x->last_ns = e->monotonic_ns;
	x->entries++;
	x->paused += e->paused ? 1 : 0;
	x->tiers[e->tier < THROTTLE_TIER_COUNT ? e->tier : THROTTLE_TIER_HEALTHY]++;
	x->samples += e->submitted;
	x->lost += e->reserve_failures;
	x->capacity_ns += (double)e->online_cpus * (double)e->interval_ns;
	x->cost_ns += (double)e->bpf_run_time_ns + (double)e->agent_cpu_ns;
	free(tl->text[tl->head]);
	tl->text[tl->head] = NULL;
	tl->head = (tl->head + 1) % tl->cap;
	tl->count--;
}

/* Seconds from start to ns, negative before it. */
static double timeline_seconds(uint64_t ns, uint64_t start)
{
	return ns >= start ? (double)(ns - start) / 1e9 : -(double)(start - ns) / 1e9;
}

int timeline_add(struct timeline *tl, const struct lowprof_timeline_entry *e)
{
	double pct = timeline_overhead_pct(e);

	if (tl->count == tl->cap && tl->cap < tl->max && timeline_grow(tl) != 0)
		return -ENOMEM;
	/* Full: the oldest entry gives way, into the summary of the earlier ones. */
	if (tl->count == tl->cap)
		timeline_summarise_oldest(tl);
	*timeline_at(tl, tl->count) = *e;
	tl->text[(tl->head + tl->count) % tl->cap] = NULL;
	tl->count++;
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

void timeline_trim(struct timeline *tl, uint64_t oldest_mono_ns)
{
	while (tl->count > 0 && timeline_at(tl, 0)->monotonic_ns < oldest_mono_ns)
		timeline_summarise_oldest(tl);
}

size_t timeline_trimmed_count(const struct timeline *tl)
{
	return tl->earlier.entries;
}

char *timeline_trimmed_json(const struct timeline *tl, uint64_t start_mono_ns)
{
	const struct timeline_earlier *x = &tl->earlier;
	char *buf = NULL;
	size_t len = 0;
	uint32_t t;
	FILE *f;

	if (x->entries == 0)
		return NULL;
	f = open_memstream(&buf, &len);
	if (f == NULL)
		return NULL;
	fprintf(f, "{\"entries\": %zu, \"from_t\": %.3f, \"to_t\": %.3f, \"max_overhead_pct\": %.4f, "
		   "\"mean_overhead_pct\": %.4f, \"samples\": %llu, \"lost\": %llu, \"paused\": %zu, "
		   "\"tiers\": {",
		x->entries, timeline_seconds(x->first_ns, start_mono_ns),
		timeline_seconds(x->last_ns, start_mono_ns), x->max_pct,
		x->capacity_ns > 0 ? x->cost_ns / x->capacity_ns * 100.0 : 0.0,
		(unsigned long long)x->samples, (unsigned long long)x->lost, x->paused);
	for (t = 0; t < THROTTLE_TIER_COUNT; t++)
		fprintf(f, "%s\"%s\": %zu", t == 0 ? "" : ", ", timeline_tier_name(t), x->tiers[t]);
	fputs("}}", f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int timeline_sampling(const struct timeline *tl, unsigned configured_hz,
		      struct timeline_sampling *out)
{
	double all_ns = 0, throttled_ns = 0;
	unsigned hz;
	size_t i;

	out->throttled_fraction = 0;
	out->lowest_hz = configured_hz;
	if (tl == NULL || tl->count == 0)
		return -ENOENT;
	for (i = 0; i < tl->count; i++) {
		const struct lowprof_timeline_entry *e = timeline_at(tl, i);

		hz = e->paused ? 0 : e->frequency_hz / (e->sample_divisor > 1 ? e->sample_divisor : 1);
		all_ns += (double)e->interval_ns;
		if (hz < configured_hz) {
			throttled_ns += (double)e->interval_ns;
			if (hz < out->lowest_hz)
				out->lowest_hz = hz;
		}
	}
	if (all_ns > 0)
		out->throttled_fraction = throttled_ns / all_ns;
	return 0;
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
	double t = timeline_seconds(e->monotonic_ns, start);

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
		   "\"bpf_run_time_ns\": %llu, \"agent_cpu_ns\": %llu, \"startup_cpu_ns\": %llu",
		timeline_drop_pct(e), timeline_overhead_pct(e),
		(e->flags & LOWPROF_TIMELINE_FAILSAFE) ? "true" : "false", (double)e->interval_ns / 1e9,
		(unsigned long long)e->events, (unsigned long long)e->submitted,
		(unsigned long long)e->reserve_failures, (unsigned long long)e->bpf_run_time_ns,
		(unsigned long long)e->agent_cpu_ns, (unsigned long long)e->startup_cpu_ns);
	/* With --off-cpu: the probability the throttle keeps (capped here: the
	 * decoder does not range-check it) and the switch program's share. */
	if (e->offcpu_prob_ppm > 0) {
		uint32_t ppm = e->offcpu_prob_ppm > 1000000 ? 1000000 : e->offcpu_prob_ppm;

		fprintf(f, ", \"offcpu_probability_pct\": %.4f, \"offcpu_attached\": %s, "
			   "\"offcpu_bpf_pct\": %.4f, \"offcpu_records\": %llu",
			ppm / 1e4, e->offcpu_attached ? "true" : "false",
			(double)e->offcpu_run_time_ns /
				((double)e->online_cpus * (double)e->interval_ns) * 100.0,
			(unsigned long long)e->offcpu_records);
	}
	fputc('}', f);
}

/* Entry i's JSON, rendered now if it was not (or for another origin). NULL
 * when out of memory. */
static const char *timeline_entry_text(struct timeline *tl, size_t i)
{
	char **slot = &tl->text[(tl->head + i) % tl->cap];
	size_t len = 0;
	FILE *f;

	if (*slot != NULL)
		return *slot;
	f = open_memstream(slot, &len);
	if (f == NULL)
		return NULL;
	timeline_entry_json(f, timeline_at(tl, i), tl->text_start);
	if (fclose(f) != 0) {
		free(*slot);
		*slot = NULL;
	}
	return *slot;
}

char *timeline_entries_json(struct timeline *tl, uint64_t start_mono_ns)
{
	const char *text;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;

	/* Another origin (a restart's run clock): every entry's t changes. */
	if (start_mono_ns != tl->text_start) {
		for (i = 0; i < tl->count; i++) {
			free(tl->text[(tl->head + i) % tl->cap]);
			tl->text[(tl->head + i) % tl->cap] = NULL;
		}
		tl->text_start = start_mono_ns;
	}
	f = open_memstream(&buf, &len);
	if (f == NULL)
		return NULL;
	fputc('[', f);
	for (i = 0; i < tl->count; i++) {
		text = timeline_entry_text(tl, i);
		if (text == NULL) {
			fclose(f);
			free(buf);
			return NULL;
		}
		fputs(i == 0 ? "\n    " : ",\n    ", f);
		fputs(text, f);
	}
	fputs(tl->count > 0 ? "\n  ]" : "]", f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
