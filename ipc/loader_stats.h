/*
 * Record types carried by the shared-memory ring, and the loader's statistics
 * record: cumulative counters the exporter puts into summary.json.
 */
#ifndef LOWPROF_IPC_LOADER_STATS_H
#define LOWPROF_IPC_LOADER_STATS_H

#include <linux/types.h>
#include <stddef.h>

enum lowprof_record_type {
	LOWPROF_REC_SAMPLE = 1,       /* struct lowprof_sample, variable length */
	LOWPROF_REC_LOADER_STATS = 2, /* struct lowprof_loader_stats */
	LOWPROF_REC_TIMELINE = 3,     /* struct lowprof_timeline_entry */
};

#define LOWPROF_LOADER_STATS_VERSION 4

/* All counters are cumulative since the BPF program was loaded. */
struct lowprof_loader_stats {
	__u32 version;
	__u32 online_cpus;
	__u64 monotonic_ns;      /* CLOCK_MONOTONIC when taken */
	__u64 events;            /* perf events handled by the BPF program */
	__u64 submitted;         /* samples written to the BPF ring buffer */
	__u64 reserve_failures;  /* samples lost: BPF ring buffer full */
	__u64 divisor_skipped;
	__u64 filtered;
	__u64 idle;
	__u64 guard_skipped;
	__u64 bpf_run_time_ns;   /* self-timed inside the program */
	__u64 drained;           /* samples read from the BPF ring buffer */
	__u64 shm_dropped;       /* samples lost: shared-memory ring full */
	__u64 ringbuf_bytes;     /* size of the BPF ring buffer */
	__u64 frequency_hz;      /* sampling frequency in force */
	/* This loader's start, in its own CPU time (not cumulative counters). */
	__u64 bpf_load_ns;       /* opening, verifying and attaching the BPF program */
	__u64 tables_ns;         /* DWARF tables built in the first control interval */
	/* The off-CPU program (all zero without --off-cpu): struct lowprof_offcpu_stats. */
	__u64 offcpu_switches;       /* context switches it ran at */
	__u64 offcpu_sampled;        /* switch-outs the probability chose */
	__u64 offcpu_stashed;        /* ... whose stack was taken */
	__u64 offcpu_guard_skipped;  /* ... skipped by the budget guard */
	__u64 offcpu_short;          /* blocked periods under --off-cpu-min-us */
	__u64 offcpu_submitted;      /* off-CPU records written to the BPF ring */
	__u64 offcpu_reserve_failures; /* off-CPU records lost: BPF ring full */
	__u64 offcpu_run_time_ns;    /* its share of bpf_run_time_ns */
	__u32 offcpu_prob_ppm;       /* the probability in force (not cumulative) */
	__u32 offcpu_attached;       /* 1 while the switch program is attached */
	/* Cumulative, like the counters above. */
	__u64 guard_proc_capped; /* user stack skipped: its owner (a user; for root, a
				   * cgroup or a process) spent its share of the guard */
	__u64 sigframe_refused;  /* DWARF walks stopped at an implausible signal frame */
	/* The switch program's floor (struct lowprof_offcpu_stats): runs that
	 * took no stack and charged no blocked time, and their run time (part of offcpu_run_time_ns). */
	__u64 offcpu_floor_runs;
	__u64 offcpu_floor_run_ns;
	/* Switch-ins whose switch-out was stashed before the last attach (dropped). */
	__u64 offcpu_stale_dropped;
};

#define LOWPROF_TIMELINE_VERSION 3

enum lowprof_timeline_flags {
	/* The loader applied the critical tier itself: the controller was silent or gone. */
	LOWPROF_TIMELINE_FAILSAFE = 1u << 0,
	/* host_cpu_centipct was measured (else /proc/stat could not be read). */
	LOWPROF_TIMELINE_HOST_VALID = 1u << 1,
};

/*
 * One control interval as the loader saw it: the throttle state in force at
 * its end and the raw counters of the interval. The exporter derives the
 * percentages (drop rate, overhead) from the counters, so nothing here is a
 * float to validate. Tier values are enum throttle_tier (ipc/throttle.h:
 * 0 healthy, 1 high, 2 critical), unwind enum lowprof_unwind_mode.
 */
struct lowprof_timeline_entry {
	__u32 version;
	__u32 flags;              /* enum lowprof_timeline_flags */
	__u64 monotonic_ns;       /* CLOCK_MONOTONIC at the end of the interval */
	__u64 interval_ns;        /* length of the interval */
	__u32 tier;
	__u32 frequency_hz;
	__u32 unwind;
	__u32 max_depth;
	__u32 sample_divisor;
	__u32 paused;             /* 0 or 1 */
	__u32 online_cpus;
	__u32 host_cpu_centipct;  /* whole-host CPU in hundredths of a percent, 0..10000 */
	__u32 cpu_budget_centipct; /* --cpu-budget in hundredths of a percent */
	__u32 reserved;           /* zero */
	__u64 events;             /* BPF program runs (perf events fired) */
	__u64 submitted;          /* samples written to the BPF ring */
	__u64 reserve_failures;   /* samples lost: BPF ring full */
	__u64 bpf_run_time_ns;    /* self-timed BPF run time, summed over CPUs */
	__u64 agent_cpu_ns;       /* CPU of every lowprof process (ns), start-ups left out */
	__u64 startup_cpu_ns;     /* CPU of lowprof processes that started (or restarted) */
	/* Off-CPU (zero without --off-cpu): the probability in force at the end of
	 * the interval, in ppm, and the switch program's run time (part of
	 * bpf_run_time_ns) and records in the interval. */
	__u32 offcpu_prob_ppm;
	__u32 offcpu_attached;    /* 0 or 1: the switch program at the end of the interval */
	__u64 offcpu_run_time_ns;
	__u64 offcpu_records;
};

/* 0 if buf is a well-formed stats record (copied into *out), else -EINVAL. */
int loader_stats_decode(const void *buf, size_t len, struct lowprof_loader_stats *out);

/* 0 if buf is a well-formed timeline entry (copied into *out), else -EINVAL:
 * wrong size or version, unknown flags, a field out of its range. */
int timeline_entry_decode(const void *buf, size_t len, struct lowprof_timeline_entry *out);

#endif
