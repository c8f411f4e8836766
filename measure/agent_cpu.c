#include "measure/agent_cpu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Children listed per root (the root has a slot too). */
#define AGENT_CPU_MAX_CHILDREN (AGENT_CPU_MAX_PROCS - 1)

int agent_cpu_parse_stat(const char *buf, size_t len, struct agent_cpu_stat *out)
{
	char line[1024];
	const char *p;
	char *end;
	unsigned long long v[18];
	long ppid;
	size_t i;

	if (len == 0 || len >= sizeof(line))
		return -EINVAL;
	memcpy(line, buf, len);
	line[len] = '\0';
	p = strrchr(line, ')');
	if (p == NULL || p[1] != ' ')
		return -EINVAL;
	/* The name: from the first '(' to the last ')', whatever is in it. */
	{
		const char *open = memchr(line, '(', (size_t)(p - line));
		size_t n = open != NULL ? (size_t)(p - open - 1) : 0;

		if (open == NULL)
			return -EINVAL;
		if (n >= sizeof(out->comm))
			n = sizeof(out->comm) - 1;
		memcpy(out->comm, open + 1, n);
		out->comm[n] = '\0';
	}
	/* Field 3 (state) follows ") "; then ppid (4) ... cstime (17). */
	p += 2;
	if (!isalpha((unsigned char)*p) || p[1] != ' ')
		return -EINVAL;
	p += 2;
	errno = 0;
	ppid = strtol(p, &end, 10);
	if (errno != 0 || end == p || ppid < 0)
		return -EINVAL;
	p = end;
	/* Fields 5..17: pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime (cutime/cstime are signed in the
	 * kernel's format but never negative); then, when present, 18..22:
	 * priority nice num_threads itrealvalue starttime. */
	memset(v, 0, sizeof(v));
	for (i = 0; i < 18; i++) {
		if (i >= 13 && *p == '\0')
			break;
		if (*p != ' ')
			return -EINVAL;
		p++;
		errno = 0;
		if (*p == '-') {
			/* tty_nr and tpgid may be -1. */
			(void)strtoll(p, &end, 10);
			v[i] = 0;
		} else {
			v[i] = strtoull(p, &end, 10);
		}
		if (errno != 0 || end == p)
			return -EINVAL;
		p = end;
	}
	out->ppid = (pid_t)ppid;
	out->utime = v[9];
	out->stime = v[10];
	out->cutime = v[11];
	out->cstime = v[12];
	out->starttime = v[17];
	return 0;
}

static int agent_cpu_read_pid(const char *proc, pid_t pid, struct agent_cpu_stat *st)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%d/stat", proc, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc != 0)
		return rc;
	/* Drop the trailing newline so the parser sees only fields. */
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	return agent_cpu_parse_stat(buf, (size_t)n, st);
}

/* Children from /proc/ROOT/task/TID/children; -ENOENT if the kernel has no such file. */
static void agent_cpu_close_children(struct agent_cpu *a)
{
	size_t t;

	for (t = 0; t < AGENT_CPU_MAX_TASKS; t++) {
		if (a->child_fd[t] > 0)
			close(a->child_fd[t] - 1);
		a->child_fd[t] = 0;
	}
}

/* root's thread ids, from /proc/ROOT/task: 0, or -errno. */
static int agent_cpu_list_tasks(struct agent_cpu *a, const char *proc)
{
	char path[96];
	struct dirent *de;
	DIR *dir;

	agent_cpu_close_children(a);
	a->ntids = 0;
	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)a->root);
	dir = opendir(path);
	if (dir == NULL)
		return -errno;
	while ((de = readdir(dir)) != NULL && a->ntids < AGENT_CPU_MAX_TASKS) {
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end == '\0' && v > 0)
			a->tids[a->ntids++] = (pid_t)v;
	}
	closedir(dir);
	return 0;
}

/*
 * The children of each of root's threads (/proc/ROOT/task/TID/children).
 * The thread list is kept between readings (the supervisor does not start
 * threads) and listed again every AGENT_CPU_TASKS_REFRESH readings or when a
 * thread is gone: a reading is then a few syscalls, not a directory walk.
 * -ENOENT when the kernel has no children files.
 */
static int agent_cpu_children_file(struct agent_cpu *a, const char *proc, pid_t *kids,
				   size_t *nkids)
{
	char path[96], buf[1024];
	size_t t;
	int rc, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		if (a->ntids == 0 || a->tasks_age >= AGENT_CPU_TASKS_REFRESH || attempt > 0) {
			rc = agent_cpu_list_tasks(a, proc);
			if (rc != 0)
				return rc;
			a->tasks_age = 0;
		}
		a->tasks_age++;
		*nkids = 0;
		rc = 0;
		for (t = 0; t < a->ntids; t++) {
			char *p, *end;
			ssize_t n;
			int fd;

			/* Kept open and read from the start each time: one syscall a
			 * reading, not a path walk, an open and a close (a thread gone
			 * reads empty until the next listing). */
			fd = a->child_fd[t] - 1;
			if (fd < 0) {
				snprintf(path, sizeof(path), "%s/%d/task/%d/children", proc,
					 (int)a->root, (int)a->tids[t]);
				fd = open(path, O_RDONLY | O_CLOEXEC);
				if (fd < 0) {
					/* A thread gone, or no children files: list again, then decide. */
					if (errno == ENOENT) {
						rc = -ENOENT;
						break;
					}
					continue;
				}
				a->child_fd[t] = fd + 1;
			}
			n = pread(fd, buf, sizeof(buf) - 1, 0);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			p = buf;
			while (*nkids < AGENT_CPU_MAX_CHILDREN) {
				long v = strtol(p, &end, 10);

				if (end == p || v <= 0)
					break;
				kids[(*nkids)++] = (pid_t)v;
				p = end;
			}
		}
		if (rc == 0)
			return 0;
	}
	agent_cpu_close_children(a);
	a->ntids = 0;
	return rc;
}

static int agent_cpu_children_scan(const char *proc, pid_t root, pid_t *kids, size_t *nkids)
{
	struct agent_cpu_stat st;
	struct dirent *de;
	DIR *dir;

	dir = opendir(proc);
	if (dir == NULL)
		return -errno;
	for (;;) {
		char *end;
		long v;

		de = readdir(dir);
		if (de == NULL || *nkids == AGENT_CPU_MAX_CHILDREN)
			break;
		v = strtol(de->d_name, &end, 10);
		if (*end != '\0' || v <= 0)
			continue;
		if (agent_cpu_read_pid(proc, (pid_t)v, &st) == 0 && st.ppid == root)
			kids[(*nkids)++] = (pid_t)v;
	}
	closedir(dir);
	return 0;
}

/*
 * The kernel's process CPU clock of pid (its clockid ABI: ~pid << 3, the
 * sched clock 2, no thread flag). glibc's clock_getcpuclockid makes the same
 * id but first probes it with clock_getres: a second syscall per process per
 * reading, when clock_gettime refuses a pid that is gone (EINVAL) anyway.
 */
static clockid_t agent_cpu_clock(pid_t pid)
{
	if (pid == 0)
		return CLOCK_PROCESS_CPUTIME_ID;
	return (clockid_t)(((unsigned int)~pid << 3) | 2u);
}

int agent_cpu_process_ns(pid_t pid, uint64_t *ns)
{
	struct timespec ts;

	if (pid < 0)
		return -EINVAL;
	if (clock_gettime(agent_cpu_clock(pid), &ts) != 0)
		return errno == EINVAL ? -ESRCH : -errno;
	*ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return 0;
}

static uint64_t agent_cpu_boottime_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A process first seen, from /proc/PID/stat: CLOCK_BOOTTIME of its start
 * (0 when unknown) and whether it is the table builder. */
static void agent_cpu_first_seen(const struct agent_cpu *a, const char *proc, pid_t pid,
				 uint64_t *start_ns, bool *tables)
{
	struct agent_cpu_stat st;
	long hz = sysconf(_SC_CLK_TCK);

	*start_ns = 0;
	*tables = false;
	if (agent_cpu_read_pid(proc, pid, &st) != 0)
		return;
	*tables = a->tables_comm[0] != '\0' && strcmp(st.comm, a->tables_comm) == 0;
	if (st.starttime != 0 && hz > 0)
		*start_ns = st.starttime * (1000000000ULL / (uint64_t)hz);
}

void agent_cpu_init(struct agent_cpu *a, pid_t root, pid_t self, bool first_start)
{
	memset(a, 0, sizeof(*a));
	a->root = root;
	a->self = self;
	a->first_start = first_start;
	a->startup_window_ns = AGENT_CPU_STARTUP_NS;
}

void agent_cpu_set_tables_comm(struct agent_cpu *a, const char *program)
{
	/* The kernel keeps the first 15 bytes of the program's name. */
	snprintf(a->tables_comm, sizeof(a->tables_comm), "%s", program);
}

void agent_cpu_fini(struct agent_cpu *a)
{
	agent_cpu_close_children(a);
	a->ntids = 0;
}

/* The slot of pid in the previous reading, or -1. */
static long agent_cpu_slot(const struct agent_cpu *a, pid_t pid)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (a->procs[i].pid == pid)
			return (long)i;
	}
	return -1;
}

int agent_cpu_sample(struct agent_cpu *a, const char *proc, struct agent_cpu_totals *out)
{
	pid_t pids[AGENT_CPU_MAX_PROCS];
	uint64_t now[AGENT_CPU_MAX_PROCS], start[AGENT_CPU_MAX_PROCS];
	bool tables[AGENT_CPU_MAX_PROCS];
	size_t npids = 1, nkids = 0, i, n = 0;
	uint64_t boot = agent_cpu_boottime_ns();
	/* Start-up went on in this interval: at its start or at its end. */
	bool starting = a->starting || a->was_starting;
	int rc;

	pids[0] = a->root;
	rc = agent_cpu_process_ns(a->root, &now[0]);
	if (rc != 0)
		return rc;
	rc = agent_cpu_children_file(a, proc, pids + 1, &nkids);
	if (rc == -ENOENT) {
		nkids = 0;
		agent_cpu_children_scan(proc, a->root, pids + 1, &nkids);
	}
	for (i = 1; i <= nkids; i++) {
		/* A child that exits between the listing and here is simply skipped. */
		if (agent_cpu_process_ns(pids[i], &now[npids]) == 0)
			pids[npids++] = pids[i];
	}
	for (i = 0; i < npids; i++) {
		long slot = agent_cpu_slot(a, pids[i]);

		if (slot >= 0 && now[i] >= a->procs[slot].last_ns) {
			uint64_t d = now[i] - a->procs[slot].last_ns;

			start[i] = a->procs[slot].start_ns;
			tables[i] = a->procs[slot].tables;
			/* Young at the previous reading: this interval began in its start. */
			if (starting ||
			    (start[i] != 0 && a->last_boot_ns < start[i] + a->startup_window_ns)) {
				a->t.startup_ns += d;
			} else {
				a->t.charged_ns += d;
				if (tables[i])
					a->t.tables_ns += d;
			}
			continue;
		}
		/* First seen (or its pid reused): when did it start, what is it? */
		agent_cpu_first_seen(a, proc, pids[i], &start[i], &tables[i]);
		if (a->primed || a->first_start || pids[i] == a->self)
			a->t.startup_ns += now[i];
	}
	/* Gone processes drop out; the rest are the next reading's base. */
	for (i = 0; i < npids; i++) {
		a->procs[n].pid = pids[i];
		a->procs[n].last_ns = now[i];
		a->procs[n].start_ns = start[i];
		a->procs[n].tables = tables[i];
		n++;
	}
	a->n = n;
	a->primed = true;
	a->was_starting = a->starting;
	a->last_boot_ns = boot;
	*out = a->t;
	return 0;
}
