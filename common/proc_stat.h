/*
 * proc_stat: one numeric field of /proc/PID/stat ("pid (comm) state ppid
 * ..."), whatever the comm holds (spaces, parentheses), and the program a
 * process runs.
 */
#ifndef LOWPROF_COMMON_PROC_STAT_H
#define LOWPROF_COMMON_PROC_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Fields as proc(5) numbers them. */
#define PROC_STAT_PPID 4
#define PROC_STAT_STARTTIME 22 /* clock ticks after boot: with the pid, names one process */

/* Field number field (>= 4) of pid's stat into *out: 0, or -errno (-EINVAL: unparsable). */
int proc_stat_field(pid_t pid, int field, unsigned long long *out);

/*
 * The unit of PROC_STAT_STARTTIME in the kernel's terms: a task's start time
 * (start_boottime, ns) shows as (start_boottime + *boot_offset_ns) /
 * *ns_per_tick, the offset being our time namespace's boot time offset
 * (/proc/self/timens_offsets; 0 without one). 0, or -errno.
 */
int proc_stat_starttime_unit(unsigned long long *ns_per_tick, long long *boot_offset_ns);

/*
 * Does pid run a program called name (the last component of /proc/PID/exe,
 * which only an exec changes; "NAME (deleted)", the program replaced on disk
 * since it started, counts as NAME)? The target, or why unknown, goes into exe.
 */
bool proc_exe_is(pid_t pid, const char *name, char *exe, size_t len);

#endif /* LOWPROF_COMMON_PROC_STAT_H */
