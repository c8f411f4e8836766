#include "supervisor/status_report.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct status_buf {
	char *p;
	size_t len, used;
	bool overflow;
};

static void sb_printf(struct status_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct status_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->used, b->len - b->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->len - b->used) {
		b->overflow = true;
		return;
	}
	b->used += (size_t)n;
}

/* Values arrive checked ([A-Za-z0-9._+-]); numbers are shown as numbers. */
static bool status_is_number(const char *v)
{
	char *end;

	if (v[0] == '\0')
		return false;
	strtod(v, &end);
	return *end == '\0' && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9'));
}

static double status_uptime_s(const struct component *c, int64_t now_ms)
{
	if (c->state != COMPONENT_RUNNING && c->state != COMPONENT_STARTING)
		return 0;
	return (double)(now_ms - c->started_ms) / 1000.0;
}

static void status_pairs_json(struct status_buf *b, const struct component *c)
{
	size_t i;

	sb_printf(b, "{");
	for (i = 0; i < c->nstate_pairs; i++) {
		const char *v = c->state_pairs[i].value;

		if (status_is_number(v))
			sb_printf(b, "%s\"%s\": %s", i ? ", " : "", c->state_pairs[i].key, v);
		else
			sb_printf(b, "%s\"%s\": \"%s\"", i ? ", " : "", c->state_pairs[i].key, v);
	}
	sb_printf(b, "}");
}

int status_report_json(const struct status_meta *meta, const struct component *comps, size_t n,
		       char *buf, size_t len)
{
	struct status_buf b = {buf, len, 0, false};
	size_t i;

	sb_printf(&b, "{\"version\": 1, \"lowprof\": \"%s\", \"pid\": %d, \"uptime_s\": %.1f, \"components\": [",
		  meta->version, (int)meta->pid, (double)(meta->now_ms - meta->started_ms) / 1000.0);
	for (i = 0; i < n; i++) {
		const struct component *c = &comps[i];

		sb_printf(&b, "%s\n  {\"name\": \"%s\", \"state\": \"%s\", \"pid\": %d, \"restarts\": %u, "
			      "\"uptime_s\": %.1f, \"last_exit\": \"%s\", \"reported\": ",
			  i ? "," : "", c->name, component_state_name(c->state), (int)c->pid,
			  c->restart.total_restarts, status_uptime_s(c, meta->now_ms), c->last_exit);
		status_pairs_json(&b, c);
		sb_printf(&b, "}");
	}
	sb_printf(&b, "]");
	if (meta->audit != NULL)
		sb_printf(&b, ",\n \"audit\": {\"records\": %llu, \"suppressed\": %llu, "
			      "\"rotations\": %llu, \"reopens\": %llu}",
			  (unsigned long long)meta->audit->records,
			  (unsigned long long)(meta->audit->refused + meta->audit->failed),
			  (unsigned long long)meta->audit->rotations,
			  (unsigned long long)meta->audit->reopens);
	sb_printf(&b, "}\n");
	return b.overflow ? -1 : (int)b.used;
}

static const char *status_find(const struct component *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->nstate_pairs; i++) {
		if (strcmp(c->state_pairs[i].key, key) == 0)
			return c->state_pairs[i].value;
	}
	return NULL;
}

int status_report_text(const struct status_meta *meta, const struct component *comps, size_t n,
		       char *buf, size_t len)
{
	struct status_buf b = {buf, len, 0, false};
	size_t i, j;

	sb_printf(&b, "lowprof %s, pid %d, up %.0f s\n\n", meta->version, (int)meta->pid,
		  (double)(meta->now_ms - meta->started_ms) / 1000.0);
	sb_printf(&b, "%-11s %-9s %8s %9s %10s  %s\n", "COMPONENT", "STATE", "PID", "RESTARTS",
		  "UPTIME", "LAST EXIT");
	for (i = 0; i < n; i++) {
		const struct component *c = &comps[i];

		sb_printf(&b, "%-11s %-9s %8d %9u %9.0fs  %s\n", c->name, component_state_name(c->state),
			  (int)c->pid, c->restart.total_restarts, status_uptime_s(c, meta->now_ms),
			  c->last_exit[0] ? c->last_exit : "-");
	}
	for (i = 0; i < n; i++) {
		const struct component *c = &comps[i];
		const char *tier = status_find(c, "tier");

		if (c->nstate_pairs == 0)
			continue;
		if (tier != NULL) {
			const char *f = status_find(c, "frequency_hz"), *u = status_find(c, "unwind");
			const char *o = status_find(c, "overhead_pct"), *d = status_find(c, "drop_pct");
			const char *cpus = status_find(c, "cpus");

			sb_printf(&b, "\nthrottle: tier %s, %s Hz%s%s%s, %s unwinding, overhead %s%%, "
				      "drops %s%%\n",
				  tier, f ? f : "?", cpus ? " on " : "", cpus ? cpus : "",
				  cpus ? (strcmp(cpus, "1") == 0 ? " CPU" : " CPUs") : "", u ? u : "?",
				  o ? o : "?", d ? d : "?");
		}
		if (status_find(c, "offcpu_probability_pct") != NULL) {
			const char *pr = status_find(c, "offcpu_probability_pct");
			const char *rec = status_find(c, "offcpu_records"), *sh = status_find(c, "offcpu_short");
			const char *so = status_find(c, "offcpu_sampled_out"), *dr = status_find(c, "offcpu_drops");
			const char *at = status_find(c, "offcpu_attached");

			sb_printf(&b, "\noff-CPU: probability %s%%%s, %s records, %s below the threshold, "
				      "%s switches sampled out, %s dropped\n",
				  pr, at != NULL && strcmp(at, "0") == 0 ? " (detached by the throttle)" : "",
				  rec ? rec : "?", sh ? sh : "?", so ? so : "?", dr ? dr : "?");
		}
		sb_printf(&b, "%s reports:", c->name);
		for (j = 0; j < c->nstate_pairs; j++)
			sb_printf(&b, " %s=%s", c->state_pairs[j].key, c->state_pairs[j].value);
		sb_printf(&b, "\n");
	}
	if (meta->audit != NULL)
		sb_printf(&b, "\naudit log: %llu records, %llu suppressed, %llu rotations, %llu reopens\n",
			  (unsigned long long)meta->audit->records,
			  (unsigned long long)(meta->audit->refused + meta->audit->failed),
			  (unsigned long long)meta->audit->rotations,
			  (unsigned long long)meta->audit->reopens);
	return b.overflow ? -1 : (int)b.used;
}
