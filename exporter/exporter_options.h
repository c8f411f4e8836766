/*
 * Options of lowprof-exporter. It is started by the supervisor, never by hand,
 * but its command line is still validated like any other input.
 */
#ifndef LOWPROF_EXPORTER_OPTIONS_H
#define LOWPROF_EXPORTER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "settings/defaults.h"
#include "settings/option_specs.h"
#include "settings/otlp_settings.h"

struct exporter_options {
	unsigned interval_s;      /* rewrite the output files this often */
	struct settings_window window; /* what the files cover, the caps, the archive */
	unsigned frequency_hz;    /* nominal sampling frequency, for the title */
	/* The throttle's budget and control interval: the writes are paced within
	 * them (output_pace.h). */
	double cpu_budget_pct;
	double control_interval_s;
	const char *output_label; /* the output directory as the user named it (messages only) */
	const char *kallsyms_path;
	/* Same for every exporter of one lowprof run, new for each run: tells a
	 * restart (reload the profile this run wrote) from a fresh start. "" = none. */
	char run_id[SETTINGS_RUN_ID_LEN + 1];
	bool off_cpu;             /* --off-cpu: the loader sends off-CPU records; write their profile */
	bool kernel_addresses;    /* --kernel-addresses: raw kernel addresses in the outputs */
	unsigned liveness_timeout_s; /* --liveness-timeout: the supervisor's; pings 0.4 of it apart */
	bool otlp_enabled;        /* --otlp-endpoint given */
	struct otlp_settings otlp;
};

/* Returns 0, or LOWPROF_EXIT_USAGE with a one-line reason in err. */
int exporter_options_parse(int argc, char **argv, struct exporter_options *out,
			   char *err, size_t errlen);

#endif
