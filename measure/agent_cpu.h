/*
 * The CPU time lowprof itself uses: utime + stime of every lowprof process,
 * read from /proc. "Every lowprof process" is the supervisor and its
 * children (the loader, the controller, the exporter); the supervisor's
 * cutime/cstime add children that have exited and been reaped, so a restarted
 * component's earlier life still counts.
 *
 * It is read by the loader, not the controller: the controller is meant to run
 * unprivileged and sandboxed, where other processes' /proc entries may be out
 * of reach, while the loader is already allowed to read them.
 */
#ifndef LOWPROF_MEASURE_AGENT_CPU_H
#define LOWPROF_MEASURE_AGENT_CPU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The fields of one /proc/PID/stat line that matter here, in clock ticks. */
struct agent_cpu_stat {
	pid_t ppid;
	uint64_t utime, stime, cutime, cstime;
};

/*
 * Parse /proc/PID/stat text (need not be NUL-terminated). The command name
 * may hold spaces and parentheses: fields are counted from its last ')'.
 * Returns 0 or -EINVAL.
 */
int agent_cpu_parse_stat(const char *buf, size_t len, struct agent_cpu_stat *out);

/*
 * CPU time of root and its direct children, in nanoseconds: each one's
 * utime+stime+cutime+cstime. Children come from /proc/ROOT/task/TID/children,
 * or from a scan of /proc when the kernel lacks CONFIG_PROC_CHILDREN.
 * proc is the procfs mount ("/proc"). Returns 0 or -errno (root unreadable);
 * a child that exits meanwhile is skipped.
 */
int agent_cpu_read(const char *proc, pid_t root, uint64_t *total_ns);

#endif /* LOWPROF_MEASURE_AGENT_CPU_H */
