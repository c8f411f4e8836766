/* Options of lowprof-loader (started by the supervisor; validated all the same). */
#ifndef LOWPROF_LOADER_OPTIONS_H
#define LOWPROF_LOADER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "settings/defaults.h"

/* --unwind: auto lets the throttle choose (DWARF while healthy); dwarf and fp
 * pin the mode whatever the tier (frequency and depth still follow it). */
enum loader_unwind_choice {
	LOADER_UNWIND_AUTO = SETTINGS_UNWIND_AUTO,
	LOADER_UNWIND_DWARF = SETTINGS_UNWIND_DWARF,
	LOADER_UNWIND_FP = SETTINGS_UNWIND_FP,
};

struct loader_options {
	unsigned frequency_hz;
	unsigned ringbuf_kb;
	unsigned max_depth;
	unsigned drain_ms;
	unsigned stats_ms;
	double cpu_budget_pct;      /* --cpu-budget: the in-BPF guard's share; 100 = no guard */
	double control_interval_s;  /* --control-interval: timeline and controller silence clock */
	bool no_throttle;           /* --no-throttle: fixed settings, SetThrottle refused */
	unsigned unwind;            /* --unwind: enum loader_unwind_choice */
	unsigned unwind_table_mb;   /* --unwind-table-mb: kernel memory for unwind rows */
	const char *pin_dir;        /* --pin-dir: bpffs directory of this run's pins; NULL: none */
	pid_t pids[SETTINGS_MAX_PIDS];
	size_t npids;
	/* --pid-start, one per --pid in its order (or none): each target's start
	 * time in clock ticks after boot, as the supervisor read it when it
	 * checked the command line; with the pid it names the process given. */
	size_t pid_starts[SETTINGS_MAX_PIDS];
	size_t npid_starts;
	/* --follow-pid: of the --pid targets, the one whose new processes become
	 * targets too (a command, loader/follow.h); 0: none. */
	pid_t follow_pid;
	int controller_uid;         /* --controller-uid: the only uid the control socket accepts; -1: any */
	int exporter_uid;           /* --exporter-uid: the only uid the symbol socket serves; -1: any */
	const char *debug_dir;      /* --debug-dir: separate debug files (.build-id/XX/REST.debug) */
	bool off_cpu;               /* --off-cpu: attach the sched_switch program */
	unsigned off_cpu_min_us;    /* --off-cpu-min-us: shorter blocked periods not recorded */
	double off_cpu_prob_pct;    /* --off-cpu-probability: the starting sampling probability */
	unsigned liveness_timeout_s; /* --liveness-timeout: the supervisor's; pings 0.4 of it apart */
	/* --interval: the exporter's, which closes its intervals on what we
	 * drained; a steady interval (drained at its end) fits twice in it. */
	unsigned interval_s;
	bool verbose;               /* -v: debug lines, the applied throttle changes' audit among them */
};

/* Returns 0, or LOWPROF_EXIT_USAGE with a one-line reason in err. */
int loader_options_parse(int argc, char **argv, struct loader_options *out, char *err, size_t errlen);

#endif
