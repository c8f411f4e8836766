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
};

#define LOWPROF_LOADER_STATS_VERSION 1

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
};

/* 0 if buf is a well-formed stats record (copied into *out), else -EINVAL. */
int loader_stats_decode(const void *buf, size_t len, struct lowprof_loader_stats *out);

#endif
