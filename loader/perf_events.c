#include "loader/perf_events.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "loader/cpu_list.h"

#define NSEC_PER_SEC 1000000000ULL

uint64_t perf_events_period_ns(unsigned frequency_hz)
{
	return frequency_hz ? NSEC_PER_SEC / frequency_hz : NSEC_PER_SEC;
}

static int perf_event_open_cpu(int cpu, uint64_t period_ns)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	/* A fixed period in ns of CPU clock (not freq mode): the kernel never
	 * retunes it, so every sample weighs exactly period_ns. */
	attr.sample_period = period_ns;
	attr.disabled = 1;
	return (int)syscall(SYS_perf_event_open, &attr, -1 /* any task */, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

/* One more than the highest possible CPU: a CPU that comes online later
 * has room. */
static size_t possible_cpus(void)
{
	static bool possible[CPU_LIST_MAX];
	size_t n = 0, cpu;

	if (cpu_list_read_online("/sys/devices/system/cpu/possible", possible) <= 0)
		return 0;
	for (cpu = 0; cpu < CPU_LIST_MAX; cpu++)
		if (possible[cpu])
			n = cpu + 1;
	return n;
}

int perf_events_open(struct perf_event_set *set, unsigned frequency_hz, char *err, size_t errlen)
{
	static bool online[CPU_LIST_MAX];
	size_t cap;
	int n, cpu, fd, rc;

	memset(set, 0, sizeof(*set));
	n = cpu_list_read_online("/sys/devices/system/cpu/online", online);
	if (n <= 0) {
		snprintf(err, errlen, "cannot read the online CPU list from /sys/devices/system/cpu/online");
		return -EINVAL;
	}
	cap = possible_cpus();
	if (cap < (size_t)n)
		cap = CPU_LIST_MAX;
	set->capacity = cap;
	set->fds = calloc(cap, sizeof(int));
	set->cpus = calloc(cap, sizeof(int));
	if (set->fds == NULL || set->cpus == NULL) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	set->period_ns = perf_events_period_ns(frequency_hz);
	for (cpu = 0; cpu < CPU_LIST_MAX; cpu++) {
		if (!online[cpu])
			continue;
		fd = perf_event_open_cpu(cpu, set->period_ns);
		if (fd < 0) {
			rc = -errno;
			/* A CPU that went offline since we read the list is not an error. */
			if (rc == -ENODEV)
				continue;
			snprintf(err, errlen, "perf_event_open(cpu-clock, cpu %d): %s%s", cpu, strerror(-rc),
				 rc == -EACCES || rc == -EPERM ? " (needs CAP_PERFMON)" : "");
			goto fail;
		}
		set->fds[set->count] = fd;
		set->cpus[set->count] = cpu;
		set->count++;
	}
	return 0;
fail:
	perf_events_close(set);
	return rc;
}

int perf_events_add_cpu(struct perf_event_set *set, int cpu)
{
	int fd;

	if (set->count >= set->capacity || cpu < 0 || cpu >= CPU_LIST_MAX)
		return -ENOSPC;
	fd = perf_event_open_cpu(cpu, set->period_ns);
	if (fd < 0)
		return -errno;
	set->fds[set->count] = fd;
	set->cpus[set->count] = cpu;
	return (int)set->count++;
}

int perf_events_find(const struct perf_event_set *set, int cpu)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		if (set->cpus[i] == cpu)
			return (int)i;
	return -1;
}

void perf_events_remove_at(struct perf_event_set *set, size_t i)
{
	if (i >= set->count)
		return;
	if (set->fds[i] >= 0)
		close(set->fds[i]);
	set->count--;
	set->fds[i] = set->fds[set->count];
	set->cpus[i] = set->cpus[set->count];
}

int perf_events_set_frequency(struct perf_event_set *set, unsigned frequency_hz)
{
	uint64_t period = perf_events_period_ns(frequency_hz);
	size_t i;

	for (i = 0; i < set->count; i++) {
		if (ioctl(set->fds[i], PERF_EVENT_IOC_PERIOD, &period) != 0)
			return -errno;
	}
	set->period_ns = period;
	return 0;
}

static int perf_events_ioctl_all(struct perf_event_set *set, unsigned long request)
{
	size_t i;

	for (i = 0; i < set->count; i++) {
		if (ioctl(set->fds[i], request, 0) != 0)
			return -errno;
	}
	return 0;
}

int perf_events_enable(struct perf_event_set *set)
{
	return perf_events_ioctl_all(set, PERF_EVENT_IOC_ENABLE);
}

int perf_events_disable(struct perf_event_set *set)
{
	return perf_events_ioctl_all(set, PERF_EVENT_IOC_DISABLE);
}

void perf_events_close(struct perf_event_set *set)
{
	size_t i;

	for (i = 0; i < set->count; i++) {
		if (set->fds[i] >= 0)
			close(set->fds[i]);
	}
	free(set->fds);
	free(set->cpus);
	memset(set, 0, sizeof(*set));
}
