/*
 * pid_watch: processes held by pidfds, each named by its pid and its start
 * time (clock ticks after boot, /proc/PID/stat's field 22), in one epoll set
 * that a poll loop waits on. A pidfd names one process, never another that
 * later gets its number; a pid whose start time is not the one given names
 * another process already, and counts as exited from the start.
 */
#ifndef LOWPROF_COMMON_PID_WATCH_H
#define LOWPROF_COMMON_PID_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <poll.h>
#include <sys/types.h>

struct pid_watch {
	pid_t *pid;
	int *pidfd;    /* -1: exited (seen or not yet said), -2: no pidfd (kept by number) */
	bool *said;    /* its exit returned by pid_watch_exited already */
	struct pollfd *poll; /* pid_watch_exited's scratch: the held pidfds */
	size_t *poll_index;
	size_t n, max;
	size_t live;   /* not yet returned by pid_watch_exited */
	int epfd;      /* every open pidfd; -1 when none */
};

/* Room for max processes, none held yet; the soft limit on open files
 * raised by max (up to the hard limit) for their pidfds. 0, or -ENOMEM. */
int pid_watch_init(struct pid_watch *w, size_t max);
/*
 * Hold pid, the process that started at start (0: the pid alone). One gone
 * already, or whose pid names another process now, is returned by the next
 * pid_watch_exited. A failure other than that (no pidfds before Linux 5.3,
 * no fd left) keeps the pid by number: never said to exit.
 */
void pid_watch_add(struct pid_watch *w, pid_t pid, unsigned long long start);
/*
 * The processes that exited since the last call (one poll, no wait): their
 * indexes into out (room for w->n), and how many. Each is said once.
 */
size_t pid_watch_exited(struct pid_watch *w, size_t *out);
/* Readable (poll) when a process may have exited; -1 when none is held. */
int pid_watch_fd(const struct pid_watch *w);
void pid_watch_close(struct pid_watch *w);

#endif /* LOWPROF_COMMON_PID_WATCH_H */
