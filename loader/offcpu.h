/*
 * Off-CPU profiling on the loader's side: the sched_switch program is loaded
 * and attached only when --off-cpu is given (without it no program runs at
 * context switches), its settings map, its counters, and the sampling
 * probability the controller adjusts (docs/THROTTLE.md, "Off-CPU").
 */
#ifndef LOWPROF_LOADER_OFFCPU_H
#define LOWPROF_LOADER_OFFCPU_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "ipc/throttle.h"
#include "bpf/offcpu.h"

struct lowprof_bpf;
struct bpf_link;
struct loader_options;

struct offcpu_settings {
	bool enabled;     /* --off-cpu */
	__u64 min_ns;     /* --off-cpu-min-us, in ns */
	/* The probability in force, parts per million: the user's (also the
	 * ceiling) until the controller changes it; a re-attach writes this one. */
	__u32 prob_ppm;
	unsigned full_frequency_hz; /* the user's -F: the healthy tier's rate */
};

/* The settings --off-cpu, --off-cpu-min-us and --off-cpu-probability give. */
void offcpu_settings_from_options(const struct loader_options *o, struct offcpu_settings *out);
/*
 * Whether the switch program may be attached under throttle t: only while
 * sampling runs healthy and at the full rate. Off-CPU profiling is the first
 * thing given up when the host is busy or lowprof is over its budget (a
 * switch storm makes it the costliest part), and it comes back with the
 * full rate. Nor while the controller has parked it (struct throttle).
 */
bool offcpu_allowed(const struct offcpu_settings *set, const struct throttle *t);
/* Before load: the program is loaded (verified) only when enabled. */
void offcpu_prepare(struct lowprof_bpf *skel, const struct offcpu_settings *set);
/* After load: write the settings and attach. *link stays NULL when disabled.
 * 0, or -errno with the reason in err. */
int offcpu_attach(struct lowprof_bpf *skel, const struct offcpu_settings *set,
		  struct bpf_link **link, char *err, size_t errlen);
/*
 * The throttle's word on the switch path: attached while the tier is below
 * critical and sampling is not paused, detached otherwise (a detached
 * program costs the scheduler nothing; an attached one, even returning at
 * once, costs every switch). No-op without --off-cpu. 0 or -errno.
 */
int offcpu_follow_throttle(struct lowprof_bpf *skel, const struct offcpu_settings *set,
			   bool allowed, struct bpf_link **link, char *err, size_t errlen);
/* A new probability (clamped to 1..LOWPROF_OFFCPU_PPM_ONE). 0 or -errno. */
int offcpu_set_probability(struct lowprof_bpf *skel, __u32 prob_ppm);
/* The current settings map (zeroes when the program is not loaded). */
int offcpu_read_config(struct lowprof_bpf *skel, struct lowprof_offcpu_config *out);
/* Sum of the per-CPU counters over ncpus possible CPUs. 0 or -errno. */
int offcpu_read_stats(struct lowprof_bpf *skel, int ncpus, struct lowprof_offcpu_stats *sum);

#endif
