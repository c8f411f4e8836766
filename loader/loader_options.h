/* Options of lowprof-loader (started by the supervisor; validated all the same). */
#ifndef LOWPROF_LOADER_OPTIONS_H
#define LOWPROF_LOADER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LOADER_MAX_PIDS 1024
/* --unwind-table-mb default: this host's few hundred processes need about
 * 20 MiB of rows (docs/BENCHMARKS.md); twice that leaves room. */
#define LOADER_UNWIND_TABLE_MB_DEFAULT 48
#define LOADER_UNWIND_TABLE_MB_MAX 2048
/* --debug-dir default: where Debian's dbgsym packages install debug files. */
#define LOADER_DEBUG_DIR_DEFAULT "/usr/lib/debug"
/* --debug-dir: an absolute path at most this long (the broker builds paths under it). */
#define LOADER_DEBUG_DIR_MAX 512

/* --unwind: auto lets the throttle choose (DWARF while healthy); dwarf and fp
 * pin the mode whatever the tier (frequency and depth still follow it). */
enum loader_unwind_choice {
	LOADER_UNWIND_AUTO = 0,
	LOADER_UNWIND_DWARF = 1,
	LOADER_UNWIND_FP = 2,
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
	pid_t pids[LOADER_MAX_PIDS];
	size_t npids;
	long controller_uid;        /* --controller-uid: the only uid the control socket accepts; -1: any */
	long exporter_uid;          /* --exporter-uid: the only uid the symbol socket serves; -1: any */
	const char *debug_dir;      /* --debug-dir: separate debug files (.build-id/XX/REST.debug) */
};

/* Returns 0, or LOWPROF_EXIT_USAGE with a one-line reason in err. */
int loader_options_parse(int argc, char **argv, struct loader_options *out, char *err, size_t errlen);

#endif
