/*
 * A per-CPU array's slot 0 summed over the CPUs: the BPF programs' counters
 * (bpf/lowprof.h, bpf/offcpu.h) are per CPU so that the sample path never
 * shares a cache line, and user space adds them up when it reads them.
 */
#ifndef LOWPROF_LOADER_PERCPU_SUM_H
#define LOWPROF_LOADER_PERCPU_SUM_H

#include <stddef.h>

struct bpf_map;

/* Sum every 64-bit field of the value (value_size bytes, a struct of
 * __u64 only) of slot 0 of map over ncpus possible CPUs into out.
 * 0, or -errno (out zeroed). */
int percpu_sum_u64(const struct bpf_map *map, size_t value_size, int ncpus, void *out);

#endif
