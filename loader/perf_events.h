/*
 * One software cpu-clock sampling event per online CPU. cpu-clock is used
 * because it exists everywhere, including VMs without a hardware PMU.
 * A CPU that comes online later gets one too (perf_events_add_cpu,
 * loader/cpu_uevents.h): room is kept for every possible CPU.
 */
#ifndef LOWPROF_LOADER_PERF_EVENTS_H
#define LOWPROF_LOADER_PERF_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct perf_event_set {
	int *fds;         /* fds[i] is the event on cpus[i] */
	int *cpus;
	size_t count;
	size_t capacity;  /* the possible CPUs */
	uint64_t period_ns;
};

/* Period of a sampling frequency, in nanoseconds of CPU clock. */
uint64_t perf_events_period_ns(unsigned frequency_hz);

/* Opens disabled events on every online CPU (offline ones skipped). 0 or -errno. */
int perf_events_open(struct perf_event_set *set, unsigned frequency_hz, char *err, size_t errlen);
/* Open a disabled event on cpu at the set's period, as the last entry: its
 * index, or -errno (-ENODEV: the CPU is offline again). */
int perf_events_add_cpu(struct perf_event_set *set, int cpu);
/* The index of cpu's event, or -1. */
int perf_events_find(const struct perf_event_set *set, int cpu);
/* Close entry i (unless its fd is -1: a link closed it) and move the last
 * entry into its place. */
void perf_events_remove_at(struct perf_event_set *set, size_t i);
/* PERF_EVENT_IOC_PERIOD on every event: changes the rate without detaching. */
int perf_events_set_frequency(struct perf_event_set *set, unsigned frequency_hz);
int perf_events_enable(struct perf_event_set *set);
int perf_events_disable(struct perf_event_set *set);
void perf_events_close(struct perf_event_set *set);

#endif
