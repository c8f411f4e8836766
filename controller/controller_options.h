/* Options of lowprof-controller (started by the supervisor; validated all the same). */
#ifndef LOWPROF_CONTROLLER_OPTIONS_H
#define LOWPROF_CONTROLLER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

struct controller_options {
	double interval_s;      /* --control-interval: decide this often */
	double cpu_budget_pct;  /* --cpu-budget: agent overhead ceiling, % of host CPU */
	unsigned frequency_hz;  /* --frequency: the user's -F, the healthy tier's */
	unsigned max_depth;     /* --max-depth: the healthy tier's depth, every tier's ceiling */
	bool no_throttle;       /* --no-throttle: measure only */
	bool off_cpu;           /* --off-cpu: the loader runs the switch program */
	unsigned off_cpu_min_us; /* --off-cpu-min-us (accepted with the others; unused here) */
	double off_cpu_prob_pct; /* --off-cpu-probability: the ceiling of the probability */
	unsigned liveness_timeout_s; /* --liveness-timeout: the supervisor's; pings 0.4 of it apart */
	bool verbose;           /* -v */
};

/* Returns 0, or LOWPROF_EXIT_USAGE with a one-line reason in err. */
int controller_options_parse(int argc, char **argv, struct controller_options *out, char *err,
			     size_t errlen);

#endif
