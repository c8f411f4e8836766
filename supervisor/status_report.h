/*
 * What `lowprof status` shows: each component's life, and the values the
 * controller (throttle) and the exporter (export counters) last reported.
 */
#ifndef LOWPROF_SUPERVISOR_STATUS_REPORT_H
#define LOWPROF_SUPERVISOR_STATUS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervisor/audit_sink.h"
#include "supervisor/component.h"

struct status_meta {
	pid_t pid;
	int64_t now_ms;
	int64_t started_ms;
	const char *output_dir;
	const char *version;
	const struct audit_sink *audit; /* the audit log's counters, NULL without one */
};

/* JSON object; returns bytes written (truncated output is still valid JSON... no: returns -1). */
int status_report_json(const struct status_meta *meta, const struct component *comps, size_t n,
		       char *buf, size_t len);
/* A human-readable table. Returns bytes written or -1 if buf is too small. */
int status_report_text(const struct status_meta *meta, const struct component *comps, size_t n,
		       char *buf, size_t len);

#endif
