#include "exporter/output_pace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const output_pace_names[OUTPUT_PACE_N] = {
	[OUTPUT_PACE_MERGE] = "merge",
	[OUTPUT_PACE_PPROF] = "profile.pb.gz",
	[OUTPUT_PACE_FOLDED] = "profile.folded",
	[OUTPUT_PACE_SVG] = "flamegraph.svg",
	[OUTPUT_PACE_OFFCPU] = "offcpu",
	[OUTPUT_PACE_SUMMARY] = "summary.json",
};

const char *output_pace_name(enum output_pace_job job)
{
	return (unsigned)job < OUTPUT_PACE_N ? output_pace_names[job] : "?";
}

uint64_t output_pace_allowance_ns(double budget_pct, unsigned ncpus, double control_interval_s,
				  double fraction)
{
	double ns;

	if (budget_pct >= 100.0 || ncpus == 0 || control_interval_s <= 0 || fraction <= 0)
		return UINT64_MAX;
	ns = budget_pct / 100.0 * (double)ncpus * control_interval_s * 1e9 * fraction;
	return ns >= 1.8e19 ? UINT64_MAX : (uint64_t)ns;
}

void output_pace_init(struct output_pace *p, uint64_t allowance_ns, unsigned slots_per_interval,
		      unsigned max_every)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	p->allowance_ns = allowance_ns;
	p->slots_per_interval = slots_per_interval > 0 ? slots_per_interval : 1;
	p->max_every = max_every > 0 ? max_every : 1;
	for (i = 0; i < OUTPUT_PACE_N; i++) {
		p->job[i].enabled = true;
		p->job[i].every = 1;
	}
}

void output_pace_set_limits(struct output_pace *p, uint64_t allowance_ns,
			    unsigned slots_per_interval)
{
	p->allowance_ns = allowance_ns;
	p->slots_per_interval = slots_per_interval > 0 ? slots_per_interval : 1;
}

void output_pace_enable(struct output_pace *p, enum output_pace_job job, bool on)
{
	p->job[job].enabled = on;
	if (!on)
		p->job[job].pending = false;
}

static size_t output_pace_enabled(const struct output_pace *p)
{
	size_t i, n = 0;

	for (i = 0; i < OUTPUT_PACE_N; i++)
		n += p->job[i].enabled;
	return n;
}

size_t output_pace_interval(struct output_pace *p)
{
	size_t i, n = 0;
	bool files = false;

	for (i = 0; i < OUTPUT_PACE_N; i++) {
		struct output_pace_state *j = &p->job[i];

		if (!j->enabled || i == OUTPUT_PACE_MERGE)
			continue;
		if (j->since < UINT32_MAX)
			j->since++;
		/* Due at an earlier roll and not run since: one more it waited. */
		if (j->pending && j->waited < UINT32_MAX)
			j->waited++;
		if (j->since >= j->every)
			j->pending = true;
		/* The off-CPU files have a profile of their own: no merge needed. */
		if (j->pending && i != OUTPUT_PACE_OFFCPU)
			files = true;
	}
	/* The files are written from a fresh merge: it runs whenever one is due
	 * (one still waiting from before waits one more, as a file does). */
	if (files && p->job[OUTPUT_PACE_MERGE].enabled) {
		struct output_pace_state *m = &p->job[OUTPUT_PACE_MERGE];

		if (m->pending && m->waited < UINT32_MAX)
			m->waited++;
		m->pending = true;
		m->since = 0;
	}
	for (i = 0; i < OUTPUT_PACE_N; i++)
		n += p->job[i].pending;
	return n;
}

void output_pace_slot(struct output_pace *p)
{
	size_t i;

	for (i = 0; i < OUTPUT_PACE_N; i++)
		p->deferred += p->job[i].pending;
	p->slot_spent_ns = 0;
	p->slot_jobs = 0;
}

bool output_pace_pending(const struct output_pace *p)
{
	size_t i;

	for (i = 0; i < OUTPUT_PACE_N; i++) {
		if (p->job[i].pending)
			return true;
	}
	return false;
}

/* What a job is expected to cost: its estimate, or before its first run
 * twice the merge's (a file of a merge costs about one to four merges, at
 * every window size measured); a job never measured after a merge never
 * measured either is taken as a slot's worth, and runs alone. */
static uint64_t output_pace_expect(const struct output_pace *p, size_t i)
{
	const struct output_pace_state *m = &p->job[OUTPUT_PACE_MERGE];

	if (p->job[i].runs > 0)
		return p->job[i].cost_ns;
	if (i != OUTPUT_PACE_MERGE && m->runs > 0 && m->cost_ns <= UINT64_MAX / 2)
		return 2 * m->cost_ns;
	return UINT64_MAX;
}

void output_pace_hold(struct output_pace *p, enum output_pace_job job)
{
	struct output_pace_state *j = &p->job[job];

	if (!j->pending)
		return;
	/* since is left as it is: still due, at once, when next not held. */
	j->pending = false;
	j->waited = 0;
	p->unchanged++;
}

bool output_pace_may_extend(const struct output_pace *p, bool trickle, unsigned spanned)
{
	return trickle && spanned < p->max_every && p->job[OUTPUT_PACE_PPROF].runs > 0 &&
	       p->job[OUTPUT_PACE_SUMMARY].runs > 0;
}

bool output_pace_extend(struct output_pace *p, bool trickle, unsigned spanned)
{
	size_t i;

	if (!output_pace_may_extend(p, trickle, spanned))
		return false;
	for (i = 0; i < OUTPUT_PACE_N; i++) {
		if (p->job[i].enabled && i != OUTPUT_PACE_MERGE && p->job[i].since < UINT32_MAX)
			p->job[i].since++;
	}
	p->extended++;
	return true;
}

/* The rolls a pending job has waited through (0: made due at the last one). */
static unsigned output_pace_overdue(const struct output_pace *p, size_t i)
{
	return p->job[i].pending ? p->job[i].waited : 0;
}

int output_pace_next(const struct output_pace *p)
{
	uint64_t cost;
	size_t i, pick = OUTPUT_PACE_N;

	/*
	 * The job furthest past its period first (a file then goes out from
	 * the merge before, which stays until the next one is made). In plain
	 * order the merge, made due again at every roll and first, kept the
	 * jobs after it from ever running once an interval's jobs took more
	 * slots than it has (pauses, a small budget): summary.json, last, was
	 * not written for a whole run.
	 */
	for (i = 0; i < OUTPUT_PACE_N; i++) {
		if (output_pace_overdue(p, i) > 0 &&
		    (pick == OUTPUT_PACE_N || output_pace_overdue(p, i) > output_pace_overdue(p, pick)))
			pick = i;
	}
	/* Otherwise in order: the merge before the files, the summary after them. */
	for (i = 0; pick == OUTPUT_PACE_N && i < OUTPUT_PACE_N; i++) {
		if (p->job[i].pending)
			pick = i;
	}
	if (pick == OUTPUT_PACE_N)
		return -1;
	if (p->slot_jobs == 0)
		return (int)pick;
	cost = output_pace_expect(p, pick);
	if (cost > p->allowance_ns || p->slot_spent_ns + cost > p->allowance_ns)
		return -1;
	return (int)pick;
}

/* How often a job that costs cost_ns may run: its share of an interval's
 * allowance (the slots' allowances shared by the enabled jobs) bounds its
 * mean cost; at most max_every. */
static unsigned output_pace_every(const struct output_pace *p, uint64_t cost_ns)
{
	double share, every;
	size_t n = output_pace_enabled(p);

	if (p->allowance_ns == UINT64_MAX || n == 0)
		return 1;
	share = (double)p->allowance_ns * (double)p->slots_per_interval / (double)n;
	if (share <= 0)
		return p->max_every;
	every = ceil((double)cost_ns / share);
	if (every < 1)
		return 1;
	return every > (double)p->max_every ? p->max_every : (unsigned)every;
}

static void output_pace_spend(struct output_pace *p, uint64_t cost_ns)
{
	bool was_over = p->slot_spent_ns > p->allowance_ns;

	p->slot_spent_ns += cost_ns;
	if (p->slot_spent_ns > p->max_slot_ns) {
		p->max_slot_ns = p->slot_spent_ns;
		p->max_slot_jobs = p->slot_jobs;
	}
	if (!was_over && p->slot_spent_ns > p->allowance_ns)
		p->slots_over++;
}

void output_pace_charge(struct output_pace *p, uint64_t cost_ns)
{
	p->roll_ns = cost_ns;
	output_pace_spend(p, cost_ns);
}

void output_pace_piece(struct output_pace *p, uint64_t cost_ns)
{
	p->pieces++;
	p->slot_jobs++;
	output_pace_spend(p, cost_ns);
}

void output_pace_stretch(struct output_pace *p, enum output_pace_job job, uint64_t ns)
{
	if (ns > p->job[job].max_stretch_ns)
		p->job[job].max_stretch_ns = ns;
}

void output_pace_done(struct output_pace *p, enum output_pace_job job, uint64_t cost_ns,
		      uint64_t slot_cost_ns, uint64_t now_unix_ns, bool forced)
{
	struct output_pace_state *j = &p->job[job];

	j->pending = false;
	j->since = 0;
	j->waited = 0;
	j->last_cost_ns = cost_ns;
	if (cost_ns > j->max_cost_ns)
		j->max_cost_ns = cost_ns;
	/* Up at once, down by a quarter per run: one cheap run after a costly
	 * one (a quiet interval) does not let the next costly one through. */
	if (j->runs == 0 || cost_ns >= j->cost_ns)
		j->cost_ns = cost_ns;
	else
		j->cost_ns = j->cost_ns - (j->cost_ns - cost_ns) / 4;
	j->runs++;
	if (job != OUTPUT_PACE_MERGE)
		j->last_unix_ns = now_unix_ns;
	/* The merge's cost goes to every interval that writes a file: the files
	 * share it, so it does not set a period of its own. profile.pb.gz is
	 * what a restarted exporter reloads: every interval (spread and paused
	 * like the others), so that a crash loses one interval at most. */
	if (job != OUTPUT_PACE_MERGE && job != OUTPUT_PACE_PPROF)
		j->every = output_pace_every(p, j->cost_ns);
	if (forced)
		return;
	p->slot_jobs++;
	output_pace_spend(p, slot_cost_ns);
}

void output_pace_force(struct output_pace *p)
{
	size_t i;

	for (i = 0; i < OUTPUT_PACE_N; i++) {
		if (p->job[i].enabled)
			p->job[i].pending = true;
	}
	p->forced++;
}

int output_pace_json(const struct output_pace *p, uint64_t start_unix_ns, char *buf, size_t len)
{
	size_t used = 0, i;
	bool first = true;
	int n;

#define OUTPUT_PACE_PUT(...)                                                   \
	do {                                                                   \
		n = snprintf(buf + used, len - used, __VA_ARGS__);             \
		if (n < 0 || (size_t)n >= len - used)                          \
			return -1;                                             \
		used += (size_t)n;                                             \
	} while (0)

	if (len == 0)
		return -1;
	if (p->allowance_ns == UINT64_MAX)
		OUTPUT_PACE_PUT("{\"allowance_ms\": null");
	else
		OUTPUT_PACE_PUT("{\"allowance_ms\": %.3f", (double)p->allowance_ns / 1e6);
	OUTPUT_PACE_PUT(", \"slots_per_interval\": %u, \"max_every\": %u, \"max_slot_ms\": %.3f, "
			"\"max_slot_jobs\": %u, \"slots_over\": %llu, \"deferred\": %llu, "
			"\"forced\": %llu, \"pauses\": %llu, \"unchanged\": %llu, \"extended\": %llu, \"roll_ms\": %.3f, \"merge_ms\": %.3f, \"merge_max_stretch_ms\": %.3f, \"files\": {",
			p->slots_per_interval, p->max_every, (double)p->max_slot_ns / 1e6,
			p->max_slot_jobs, (unsigned long long)p->slots_over,
			(unsigned long long)p->deferred, (unsigned long long)p->forced,
			(unsigned long long)p->pieces, (unsigned long long)p->unchanged,
			(unsigned long long)p->extended,
			(double)p->roll_ns / 1e6, (double)p->job[OUTPUT_PACE_MERGE].last_cost_ns / 1e6,
			(double)p->job[OUTPUT_PACE_MERGE].max_stretch_ns / 1e6);
	for (i = OUTPUT_PACE_MERGE + 1; i < OUTPUT_PACE_N; i++) {
		const struct output_pace_state *j = &p->job[i];

		if (!j->enabled)
			continue;
		OUTPUT_PACE_PUT("%s\"%s\": {\"written_s\": ", first ? "" : ", ", output_pace_names[i]);
		first = false;
		if (j->last_unix_ns == 0)
			OUTPUT_PACE_PUT("null");
		else
			OUTPUT_PACE_PUT("%.3f", j->last_unix_ns >= start_unix_ns
							? (double)(j->last_unix_ns - start_unix_ns) / 1e9
							: 0.0);
		OUTPUT_PACE_PUT(", \"every_intervals\": %u, \"cost_ms\": %.3f, \"max_cost_ms\": %.3f, "
				"\"max_stretch_ms\": %.3f, \"writes\": %llu}",
				j->every, (double)j->last_cost_ns / 1e6, (double)j->max_cost_ns / 1e6,
				(double)j->max_stretch_ns / 1e6, (unsigned long long)j->runs);
	}
	OUTPUT_PACE_PUT("}}");
#undef OUTPUT_PACE_PUT
	return (int)used;
}
