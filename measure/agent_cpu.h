/*
 * The CPU time lowprof itself uses, in nanoseconds: every lowprof process is
 * the supervisor and its children (the loader, the controller, the exporter).
 *
 * It is read by the loader, not the controller: the controller is meant to run
 * unprivileged and sandboxed, where other processes' /proc entries may be out
 * of reach, while the loader is already allowed to read them.
 */
#ifndef LOWPROF_MEASURE_AGENT_CPU_H
#define LOWPROF_MEASURE_AGENT_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The fields of one /proc/PID/stat line that matter here, in clock ticks. */
struct agent_cpu_stat {
	char comm[16]; /* the command name, as the kernel cut it (15 bytes at most) */
	pid_t ppid;
	uint64_t utime, stime, cutime, cstime;
	uint64_t starttime; /* clock ticks after boot; 0 when the line stops before it */
};

/*
 * Parse /proc/PID/stat text (need not be NUL-terminated). The command name
 * may hold spaces and parentheses: fields are counted from its last ')'.
 * Returns 0 or -EINVAL.
 */
int agent_cpu_parse_stat(const char *buf, size_t len, struct agent_cpu_stat *out);

/* A process's CPU this soon after its start is start-up. */
#define AGENT_CPU_STARTUP_NS 2000000000ULL

/* Process slots: the supervisor and its children; more is a bug elsewhere. */
#define AGENT_CPU_MAX_PROCS 64

/* root's threads whose children files are read; listed again this often (readings). */
#define AGENT_CPU_MAX_TASKS 16
#define AGENT_CPU_TASKS_REFRESH 30

/* Cumulative since agent_cpu_init, in nanoseconds. */
struct agent_cpu_totals {
	uint64_t charged_ns; /* CPU of known processes since they were first seen */
	uint64_t startup_ns; /* CPU a process had used when first seen: its start-up */
	uint64_t tables_ns;  /* the part of charged_ns that the table builder used (below) */
};

/*
 * The readings of one observer. Each process is read with one syscall (its
 * CPU clock: the nanosecond sum_exec_runtime of all its threads, dead ones
 * included, as schedstat has it). A process first seen contributes what it
 * has used so far to startup_ns (loading BPF, building tables, parsing
 * kallsyms), and so does its growth while it is younger than
 * AGENT_CPU_STARTUP_NS (a start outlasts a reading), and every process's
 * growth while starting is set; only later growth goes to charged_ns:
 * start-up is reported, not charged to the budget. Both are judged over
 * the whole interval since the previous reading: growth in an interval in
 * which a process was still young, or in which start-up went on (set then
 * or now), is start-up: judged at the reading alone, the part of a start
 * between the last reading inside it and its end (a restarted exporter's
 * kallsyms, a restarted loader's tables) was charged. A process gone since
 * the previous reading loses at most one interval's CPU.
 */
struct agent_cpu {
	pid_t root;
	pid_t self;
	bool first_start;
	bool primed;
	uint64_t startup_window_ns; /* AGENT_CPU_STARTUP_NS from agent_cpu_init */
	size_t n;
	struct {
		pid_t pid;
		uint64_t last_ns;
		uint64_t start_ns; /* CLOCK_BOOTTIME of its start; 0: unknown (old enough) */
		bool tables;       /* its command name is tables_comm */
	} procs[AGENT_CPU_MAX_PROCS];
	char tables_comm[16]; /* agent_cpu_set_tables_comm; empty: none */
	struct agent_cpu_totals t;
	/* Set by the reader while a start-up phase it knows of goes on (the
	 * loader's tables of the processes running at start, which may take
	 * longer than AGENT_CPU_STARTUP_NS on a large host): every process's
	 * growth is start-up then. */
	bool starting;
	bool was_starting;     /* starting, as it was at the previous reading */
	uint64_t last_boot_ns; /* CLOCK_BOOTTIME of the previous reading */
	pid_t tids[AGENT_CPU_MAX_TASKS]; /* root's threads, from the last listing */
	size_t ntids;
	unsigned int tasks_age;          /* readings since that listing */
	int child_fd[AGENT_CPU_MAX_TASKS]; /* each thread's children file, kept open: fd + 1, 0 none */
};

/*
 * root is the supervisor; self the reading process. first_start: every
 * process of the first reading is starting (the whole agent's start);
 * otherwise (the reader restarted) only self is, and what the others used
 * before is neither start-up nor charged here.
 */
void agent_cpu_init(struct agent_cpu *a, pid_t root, pid_t self, bool first_start);
/* Close the files a's readings keep open. */
/*
 * The process whose command name is program (cut as the kernel cuts it)
 * builds unwind tables: its charged CPU is counted in tables_ns as well.
 * Table building comes with new executables, not with what is sampled, so
 * the controller keeps it out of the share it puts on off-CPU's records.
 * The name is read once, when a process is first seen; one that renames
 * itself afterwards changes nothing, and one started under that name can
 * only move CPU between the shares: charged_ns, the budget's figure, holds
 * all of it whatever the names.
 */
void agent_cpu_set_tables_comm(struct agent_cpu *a, const char *program);

void agent_cpu_fini(struct agent_cpu *a);

/*
 * Read root and its direct children (from /proc/ROOT/task/TID/children, or
 * a scan of /proc without CONFIG_PROC_CHILDREN) and update the totals.
 * Returns 0 or -errno (root unreadable: totals unchanged).
 */
int agent_cpu_sample(struct agent_cpu *a, const char *proc, struct agent_cpu_totals *out);

/* One process's CPU time (all its threads) in ns: 0 or -errno. */
int agent_cpu_process_ns(pid_t pid, uint64_t *ns);

#endif /* LOWPROF_MEASURE_AGENT_CPU_H */
