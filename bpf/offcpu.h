/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Off-CPU profiling: what the sched_switch program (bpf/offcpu.bpf.h) shares
 * with user space. Free of libc, like bpf/lowprof.h.
 *
 * An off-CPU record is a struct lowprof_sample with LOWPROF_SAMPLE_OFF_CPU in
 * its flags: the stack the thread had when it left the CPU, the time it left
 * (timestamp_ns) and, in period_ns, its weight: the blocked time divided by
 * the sampling probability it was taken with, so that the sum of weights
 * estimates the real off-CPU time without bias, whatever the controller did
 * to the probability meanwhile.
 */
#ifndef LOWPROF_BPF_OFFCPU_H
#define LOWPROF_BPF_OFFCPU_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The record is an off-CPU period, not an on-CPU sample. */
#define LOWPROF_SAMPLE_OFF_CPU (1u << 4)

/* The probability's unit: parts per million. */
#define LOWPROF_OFFCPU_PPM_ONE 1000000u

/* Threads off CPU with a recorded stack at once; past it the least recently
 * stashed go (LRU): bounded memory whatever the host does. */
#define LOWPROF_OFFCPU_MAX_THREADS 2048

/* Settings, one element of the offcpu_config array the loader writes. */
struct lowprof_offcpu_config {
	__u32 enabled;  /* 0: the program returns at once */
	__u32 prob_ppm; /* a switch-out is recorded with probability prob_ppm / 1e6 */
	__u64 min_ns;   /* blocked periods shorter than this are not recorded */
	/* When the program was last attached (CLOCK_MONOTONIC, bpf_ktime_get_ns's
	 * clock). A switch-out stashed before it is stale: while the program was
	 * detached the thread may have run and blocked again unseen. */
	__u64 attached_ns;
};

/* Per-CPU counters of the switch program; user space sums them. Monotonic. */
struct lowprof_offcpu_stats {
	__u64 switches;        /* times the program ran */
	__u64 sampled;         /* switch-outs chosen by the probability */
	__u64 stashed;         /* ... whose stack was recorded */
	__u64 guard_skipped;   /* ... skipped by the budget guard */
	__u64 short_dropped;   /* switch-ins under min_ns */
	__u64 submitted;       /* off-CPU records written to the ring buffer */
	__u64 reserve_failures;/* ring buffer full */
	__u64 run_time_ns;     /* self-timed (also added to lowprof_cpu_stats.run_time_ns) */
	__u64 stale_dropped;   /* switch-ins whose switch-out was stashed before the last attach */
	/* Runs that took no stack and found none stashed for the task coming in:
	 * what being attached costs per switch. */
	__u64 floor_runs;
	__u64 floor_run_ns;    /* their part of run_time_ns */
};

#endif /* LOWPROF_BPF_OFFCPU_H */
