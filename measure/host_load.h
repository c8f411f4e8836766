/*
 * Host load for the throttle: the whole host's CPU utilisation from the
 * aggregate "cpu" line of /proc/stat, and CPU pressure from /proc/pressure/cpu.
 *
 * The loader reads /proc/stat once per control interval and keeps the
 * aggregate line as two cumulative tick sums (struct host_ticks); the
 * controller turns their deltas over an interval into a percentage
 * (host_load_of_ticks). Busy = user + nice + system + irq + softirq + steal;
 * the total adds idle + iowait (a CPU waiting for I/O could run our handler at
 * no cost to anyone). Steal counts as busy: it is capacity this host asked for
 * and did not get, so an oversubscribed VM is treated as loaded and the
 * profiler backs off there too. guest and guest_nice are already inside user
 * and nice, so they are not added again.
 *
 * Parsing is strict: the aggregate line and every cpuN line need at least the
 * eight fields up to steal, all decimal; missing, duplicated or malformed
 * lines reject the snapshot. The cpuN lines are checked and counted, not kept.
 *
 * The same file's ctxt line (context switches since boot) gives the host's
 * switch rate, which the off-CPU throttle needs while its program is
 * detached and counts nothing itself.
 */
#ifndef LOWPROF_MEASURE_HOST_LOAD_H
#define LOWPROF_MEASURE_HOST_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Cumulative jiffies (USER_HZ) of one cpu line. */
struct host_cpu_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

/* One /proc/stat snapshot: the aggregate line, and how many cpuN lines it had. */
struct host_stat {
	struct host_cpu_times total;
	size_t ncpus;    /* cpuN lines (online CPUs), at least 1 */
	bool have_ctxt;  /* a ctxt line was present */
	uint64_t ctxt;   /* context switches since boot */
};

/* The whole host's utilisation over an interval. */
struct host_load {
	double host_cpu_pct; /* 0..100 */
	/* Context switches per second of CPU capacity (per CPU per second), when
	 * the interval's switch count is known. */
	bool switches_valid;
	double switches_per_cpu_s;
};

/*
 * The aggregate line as two cumulative sums and the ctxt count: what crosses
 * a process boundary. The loader reads /proc/stat once per control interval
 * (its timeline's host CPU) and sends these in its Stats; the controller
 * computes the host's load from their deltas rather than read the file
 * again (on a large host /proc/stat is tens of KiB, generated on each read).
 */
struct host_ticks {
	uint64_t busy;  /* user + nice + system + irq + softirq + steal */
	uint64_t total; /* busy + idle + iowait; 0: unknown */
	uint64_t ctxt;
	bool have_ctxt;
};

void host_ticks_of(const struct host_stat *st, struct host_ticks *out);

/*
 * The whole host's load over an interval from its deltas: busy and total
 * ticks (total_d 0: unknown, false returned and *out zeroed), and the context
 * switches when have_ctxt. busy_d above total_d (idle and iowait may dip under
 * the kernel's NO_HZ accounting) reads as 100%.
 */
bool host_load_of_ticks(uint64_t busy_d, uint64_t total_d, bool have_ctxt, uint64_t ctxt_d,
			struct host_load *out);

/*
 * The host's load that drives the tiers: everyone else's. lowprof's own CPU
 * (own_ns over the interval: its BPF time, its processes' CPU, start-ups
 * included) is its budget's business and the in-BPF guard's, not a sign that
 * the host is busy. host_cpu_pct less own_ns as a share of cpus x
 * interval_ns, at least 0.
 */
double host_load_others_pct(double host_cpu_pct, uint64_t own_ns, uint32_t cpus, uint64_t interval_ns);

/*
 * Parse /proc/stat text (need not be NUL-terminated). Returns 0, or -EINVAL
 * with the reason in err (missing aggregate line, no cpuN lines, a field
 * missing or not a number, a CPU repeated or out of order, a malformed or
 * repeated ctxt line); on failure *out is zeroed. Nothing is allocated.
 */
int host_load_parse_stat(const char *buf, size_t len, struct host_stat *out,
			 char *err, size_t errlen);

/* Read and parse a file in /proc/stat format; -errno if it cannot be read. */
int host_load_read_stat(const char *path, struct host_stat *out, char *err, size_t errlen);

/*
 * Parse /proc/pressure/cpu text: the "some" line's avg10, 0..100. Returns 0,
 * or -EINVAL with the reason in err.
 */
int host_load_parse_pressure(const char *buf, size_t len, double *some_avg10,
			     char *err, size_t errlen);

/*
 * Read a file in /proc/pressure/cpu format. -ENOENT / -EOPNOTSUPP when the
 * kernel has no PSI (the signal is optional: callers mark it absent).
 */
int host_load_read_pressure(const char *path, double *some_avg10, char *err, size_t errlen);

/*
 * The same files read every control interval without opening them each time:
 * kept open, read with one pread from offset 0 into a kept buffer (a proc
 * file read at offset 0 is generated afresh). Four syscalls become one per
 * file and interval, and nothing is allocated for the text.
 */
struct host_load_source {
	const char *stat_path;     /* /proc/stat format */
	const char *pressure_path; /* /proc/pressure/cpu format; NULL: none */
	int stat_fd, pressure_fd;  /* -1 until the first read */
	char *buf;
	size_t cap;
};

void host_load_source_init(struct host_load_source *s, const char *stat_path,
			   const char *pressure_path);
/* As host_load_read_stat and host_load_read_pressure, from the source's files. */
int host_load_source_stat(struct host_load_source *s, struct host_stat *out, char *err,
			  size_t errlen);
int host_load_source_pressure(struct host_load_source *s, double *some_avg10, char *err,
			      size_t errlen);
/* Closes the files and frees the buffer; the source can be read again. */
void host_load_source_close(struct host_load_source *s);

#endif /* LOWPROF_MEASURE_HOST_LOAD_H */
