/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Structures shared by the BPF program (lowprof.bpf.c) and user space.
 * Kept free of libc so both sides can include it: the BPF side includes
 * vmlinux.h first, user space gets <linux/types.h> from here.
 */
#ifndef LOWPROF_BPF_SHARED_H
#define LOWPROF_BPF_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space; the BPF side has vmlinux.h */
#endif

#define LOWPROF_COMM_LEN 16
/* Deepest user stack any mode may record; --max-depth is capped here. */
#define LOWPROF_MAX_USER_DEPTH 128
/* Kernel stacks are walked by the kernel itself (ORC/frame pointers) and are cheap. */
#define LOWPROF_MAX_KERNEL_DEPTH 64
#define LOWPROF_MAX_FRAMES (LOWPROF_MAX_USER_DEPTH + LOWPROF_MAX_KERNEL_DEPTH)

enum lowprof_unwind_mode {
	LOWPROF_UNWIND_FP = 0,    /* frame pointers, bpf_get_stack(BPF_F_USER_STACK) */
	LOWPROF_UNWIND_DWARF = 1, /* .eh_frame tables (see unwind/) */
};

enum lowprof_sample_flags {
	/* The user stack filled max_depth: its outermost frames were cut. */
	LOWPROF_SAMPLE_USER_TRUNCATED = 1u << 0,
	/* The kernel stack filled LOWPROF_MAX_KERNEL_DEPTH. */
	LOWPROF_SAMPLE_KERNEL_TRUNCATED = 1u << 1,
	/* The in-BPF budget guard skipped the user stack for this sample. */
	LOWPROF_SAMPLE_USER_SKIPPED = 1u << 2,
	/* bpf_get_stack failed for the user stack (e.g. a kernel thread). */
	LOWPROF_SAMPLE_NO_USER_STACK = 1u << 3,
};

/*
 * One sample as it leaves the BPF program (ring buffer) and as it travels in
 * the shared-memory ring. Variable length: header then kernel_depth kernel
 * frames (leaf first) then user_depth user frames (leaf first).
 */
struct lowprof_sample {
	__u64 timestamp_ns;   /* bpf_ktime_get_ns(), CLOCK_MONOTONIC */
	__u64 period_ns;      /* effective sampling period: weight of this sample */
	__u32 pid;            /* thread group id (user-space pid) */
	__u32 tid;
	__u32 cpu;
	__u32 flags;          /* enum lowprof_sample_flags */
	__u16 kernel_depth;
	__u16 user_depth;
	__u32 reserved;       /* zero */
	char comm[LOWPROF_COMM_LEN];
	__u64 frames[];
};

#define LOWPROF_SAMPLE_HEADER_SIZE (sizeof(struct lowprof_sample))
#define LOWPROF_SAMPLE_MAX_SIZE (LOWPROF_SAMPLE_HEADER_SIZE + LOWPROF_MAX_FRAMES * sizeof(__u64))

/*
 * Run-time settings, one element of an array map that the loader writes.
 * Changing them needs no reload; the program reads them on every sample.
 */
struct lowprof_config {
	__u32 unwind_mode;    /* enum lowprof_unwind_mode */
	__u32 max_depth;      /* user frames, 1..LOWPROF_MAX_USER_DEPTH */
	__u32 sample_divisor; /* keep one sample in N per CPU; 1 = all */
	__u32 filter_pids;    /* 1: only tgids present in the target_pids map */
	__u64 period_ns;      /* perf event period in force (1e9 / frequency) */
	__u64 budget_ns_per_window; /* per-CPU BPF time allowed per guard window; 0 = no guard */
};

/* Per-CPU counters; user space sums them over CPUs. Monotonic. */
struct lowprof_cpu_stats {
	__u64 events;           /* times the program ran */
	__u64 submitted;        /* samples written to the ring buffer */
	__u64 reserve_failures; /* ring buffer full: sample lost */
	__u64 divisor_skipped;  /* dropped by the sampling divisor (on purpose) */
	__u64 filtered;         /* not a target pid */
	__u64 idle;             /* the idle task (pid 0) was on CPU */
	__u64 guard_skipped;    /* user stack skipped by the budget guard */
	__u64 run_time_ns;      /* self-timed: bpf_ktime_get_ns at entry and exit */
	/* Budget guard window state (not a counter). */
	__u64 window_start_ns;
	__u64 window_run_ns;
	__u64 divisor_counter;
};

#endif /* LOWPROF_BPF_SHARED_H */
