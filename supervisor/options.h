/* The command line of `lowprof`, the only command users run. */
#ifndef LOWPROF_SUPERVISOR_OPTIONS_H
#define LOWPROF_SUPERVISOR_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "settings/defaults.h"
#include "settings/option_specs.h"
#include "settings/otlp_settings.h"

struct supervisor_options {
	double duration_s;        /* 0: until signalled */
	const char *output_dir;
	unsigned frequency_hz;
	pid_t pids[SETTINGS_MAX_PIDS]; /* -p as given */
	size_t npids;
	/* The processes -p names, resolved once, at start (supervisor_options_parse;
	 * a reload keeps them): a thread's id stands for its process, and each
	 * gets its start time, in clock ticks after boot, which with the pid names
	 * that process for the whole run, whoever gets the pid once it has exited
	 * (loader/target_pids.h). */
	struct options_target {
		pid_t pid;
		unsigned long long start;
	} targets[SETTINGS_MAX_PIDS];
	size_t ntargets;
	/* `-- COMMAND [ARG]...`: NULL-terminated (in argv), or NULL; once it
	 * is started (supervisor/command.h) it is a target, follow_pid, whose
	 * new processes become targets too. */
	char **command;
	pid_t follow_pid;
	unsigned ringbuf_kb;
	unsigned interval_s;
	struct settings_window window; /* --window, --max-stacks, --archive*: for the exporter */
	unsigned max_depth;
	unsigned control_interval_s; /* the controller decides this often */
	double cpu_budget_pct;       /* agent overhead ceiling, % of host CPU */
	bool no_throttle;            /* fixed settings (comparisons, benchmarks) */
	char run_dir[256];           /* status socket lives here */
	unsigned unwind;             /* enum settings_unwind */
	unsigned unwind_table_mb;    /* kernel memory for DWARF unwind tables */
	const char *user;            /* the exporter runs as this user (it owns the output files) */
	const char *controller_user; /* NULL: --user */
	const char *unwinder_user;   /* NULL: --user */
	bool seccomp_log;            /* filters log instead of killing (diagnosis) */
	bool kernel_addresses;       /* raw kernel addresses in the outputs (KASLR visible) */
	const char *audit_log;       /* NULL: OUTPUT/audit.log */
	unsigned audit_log_max_mb;   /* rotated past this size */
	unsigned audit_log_keep;     /* rotated files kept */
	unsigned liveness_timeout_s; /* a silent component is killed after this */
	unsigned restart_floor_ms;   /* first restart delay */
	unsigned restart_cap_ms;     /* restart delays double up to this */
	bool otlp_enabled;           /* --otlp-endpoint given */
	struct otlp_settings otlp;   /* --otlp-*: validated, handed to the exporter */
	bool off_cpu;                /* --off-cpu: the second (off-CPU) profile */
	unsigned off_cpu_min_us;     /* --off-cpu-min-us */
	double off_cpu_prob_pct;     /* --off-cpu-probability: the starting probability */
	bool verbose;
	bool show_help;
	bool show_version;
	/* For tests: where the perf_event_max_sample_rate limit is read. */
	const char *max_sample_rate_path;

	/* The configuration file (settings/config_file.h): --config, else
	 * default_config_path when it exists. */
	const char *config_path;
	const char *default_config_path;
	const char *config_used;     /* the file read; NULL: none */
	char *config_text;           /* its text: string settings point into it */
	/* Raw values of the table, settled into the fields above. */
	const char *run_dir_arg;     /* --run-dir */
	double otlp_queue_mb;        /* --otlp-queue-mb */
	bool otlp_other;             /* an --otlp-* option other than the endpoint */
	/* The command line, kept for a reload (it still wins over the file). */
	int argc;
	char **argv;
	/* Texts of earlier files that kept settings may still point into. */
	struct options_retired *retired;
};

struct options_retired {
	struct options_retired *next;
	char *text;
};

/* More rows than the supervisor's table has. */
#define SUPERVISOR_OPTIONS_MAX_SPECS 64

void supervisor_options_defaults(struct supervisor_options *o);
/*
 * Parse and validate everything (including that each pid exists, resolved
 * into targets, and that the output directory can be created and written)
 * before anything is loaded.
 * Returns 0, or LOWPROF_EXIT_USAGE with a one-line reason in err.
 */
int supervisor_options_parse(int argc, char **argv, struct supervisor_options *o,
			     char *err, size_t errlen);
/*
 * The same without the output directory's check (it creates the directory):
 * defaults (already in o), then the configuration file, then the command
 * line, which wins. `lowprof config` and a reload use it. Returns 0, or
 * LOWPROF_EXIT_USAGE with one line in err ("FILE:LINE: KEY: message" for a
 * bad line of the file).
 */
int supervisor_options_load(int argc, char **argv, struct supervisor_options *o, char *err,
			    size_t errlen);
/* The option table over o: specs has room for SUPERVISOR_OPTIONS_MAX_SPECS
 * rows; returns the number of rows (the NULL row after them not counted). */
size_t supervisor_options_specs(struct supervisor_options *o, struct option_spec *specs);
/* The fields derived from the raw values (--run-dir, --otlp-queue-mb) again,
 * after rows were copied from another options structure. */
void supervisor_options_settle(struct supervisor_options *o);
/* `lowprof config show`: every key of the file with its effective value. */
void supervisor_options_print(struct supervisor_options *o, FILE *out);
/* Moves from's file texts (current and retired) to to's retired list: a
 * reload's new settings may keep values that point into them. */
void supervisor_options_retire_text(struct supervisor_options *to, struct supervisor_options *from);
/* Frees the file texts (current and retired). */
void supervisor_options_free(struct supervisor_options *o);
void supervisor_options_usage(FILE *out);

#endif
