/* The command line of `lowprof`, the only command users run. */
#ifndef LOWPROF_SUPERVISOR_OPTIONS_H
#define LOWPROF_SUPERVISOR_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "settings/defaults.h"
#include "settings/otlp_settings.h"

struct supervisor_options {
	double duration_s;        /* 0: until signalled */
	const char *output_dir;
	unsigned frequency_hz;
	pid_t pids[SETTINGS_MAX_PIDS];
	size_t npids;
	unsigned ringbuf_kb;
	unsigned interval_s;
	unsigned max_depth;
	unsigned control_interval_s; /* the controller decides this often */
	double cpu_budget_pct;       /* agent overhead ceiling, % of host CPU */
	bool no_throttle;            /* fixed settings (comparisons, benchmarks) */
	char run_dir[256];           /* status socket lives here */
	unsigned unwind;             /* enum settings_unwind */
	unsigned unwind_table_mb;    /* kernel memory for DWARF unwind tables */
	const char *user;            /* the unprivileged components run as this user */
	bool seccomp_log;            /* filters log instead of killing (diagnosis) */
	bool kernel_addresses;       /* raw kernel addresses in the outputs (KASLR visible) */
	const char *audit_log;       /* NULL: OUTPUT/audit.log */
	unsigned liveness_timeout_s; /* a silent component is killed after this */
	unsigned restart_floor_ms;   /* first restart delay */
	unsigned restart_cap_ms;     /* restart delays double up to this */
	bool otlp_enabled;           /* --otlp-endpoint given */
	struct otlp_settings otlp;   /* --otlp-*: validated, handed to the exporter */
	bool verbose;
	bool show_help;
	bool show_version;
	/* For tests: where the perf_event_max_sample_rate limit is read. */
	const char *max_sample_rate_path;
};

void supervisor_options_defaults(struct supervisor_options *o);
/*
 * Parse and validate everything (including that each pid exists and that the
 * output directory can be created and written) before anything is loaded.
 * Returns 0, or LOWPROF_EXIT_USAGE with a one-line reason in err.
 */
int supervisor_options_parse(int argc, char **argv, struct supervisor_options *o,
			     char *err, size_t errlen);
void supervisor_options_usage(FILE *out);

#endif
