/* pid_watch: processes held by pidfds (see the header). */
#define _GNU_SOURCE
#include "common/pid_watch.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/proc_stat.h"

/* Room for max pidfds beside the fds the process has: the soft limit on
 * open files raised toward the hard one (1024, the usual soft limit, is
 * what -p allows, and the process has its own fds too). Every loop here
 * polls; none uses select, which fds past 1024 would break. */
static void pid_watch_make_room(size_t max)
{
	struct rlimit r;
	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
		return;
	want = r.rlim_cur + (rlim_t)max;
	if (r.rlim_max != RLIM_INFINITY && want > r.rlim_max)
		want = r.rlim_max;
	if (want > r.rlim_cur) {
		r.rlim_cur = want;
		(void)setrlimit(RLIMIT_NOFILE, &r); /* else the last ones are kept by number */
	}
}

int pid_watch_init(struct pid_watch *w, size_t max)
{
	memset(w, 0, sizeof(*w));
	w->epfd = -1;
	if (max == 0)
		return 0;
	pid_watch_make_room(max);
	w->pid = calloc(max, sizeof(*w->pid));
	w->pidfd = calloc(max, sizeof(*w->pidfd));
	w->said = calloc(max, sizeof(*w->said));
	w->poll = calloc(max, sizeof(*w->poll));
	w->poll_index = calloc(max, sizeof(*w->poll_index));
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->pid == NULL || w->pidfd == NULL || w->said == NULL || w->poll == NULL ||
	    w->poll_index == NULL) {
		pid_watch_close(w);
		return -ENOMEM;
	}
	w->max = max;
	return 0;
}

/* Is the process pidfd names the one that started at start? Its start time
 * read, then the pidfd seen not yet exited, so that what was read was its
 * own and not a successor's. */
static bool pid_watch_same_process(int pidfd, pid_t pid, unsigned long long start)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	unsigned long long now;

	if (start == 0)
		return true;
	if (proc_stat_field(pid, PROC_STAT_STARTTIME, &now) != 0 || now != start)
		return false;
	return poll(&p, 1, 0) == 0;
}

void pid_watch_add(struct pid_watch *w, pid_t pid, unsigned long long start)
{
	size_t i = w->n;
	int fd;

	if (i >= w->max)
		return;
	w->n++;
	w->live++;
	w->pid[i] = pid;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0) {
		w->pidfd[i] = errno == ESRCH ? -1 : -2;
		return;
	}
	if (!pid_watch_same_process(fd, pid, start)) {
		close(fd); /* gone, perhaps its pid given out again */
		w->pidfd[i] = -1;
		return;
	}
	w->pidfd[i] = fd;
	if (w->epfd >= 0) {
		struct epoll_event ev = {.events = EPOLLIN};

		/* Without it the process's exit is seen at the caller's next
		 * pid_watch_exited, not at once. */
		(void)epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev);
	}
}

size_t pid_watch_exited(struct pid_watch *w, size_t *out)
{
	size_t i, k, npoll = 0, n = 0;

	if (w->live == 0)
		return 0;
	for (i = 0; i < w->n; i++) {
		if (w->said[i] || w->pidfd[i] == -2)
			continue;
		if (w->pidfd[i] == -1) { /* gone before it could be held */
			w->said[i] = true;
			w->live--;
			out[n++] = i;
			continue;
		}
		w->poll[npoll].fd = w->pidfd[i];
		w->poll[npoll].events = POLLIN;
		w->poll[npoll].revents = 0;
		w->poll_index[npoll++] = i;
	}
	/* One system call for them all, no wait. */
	if (npoll == 0 || poll(w->poll, (nfds_t)npoll, 0) <= 0)
		return n;
	for (k = 0; k < npoll; k++) {
		if (w->poll[k].revents == 0)
			continue;
		i = w->poll_index[k];
		close(w->pidfd[i]); /* out of the epoll set with it */
		w->pidfd[i] = -1;
		w->said[i] = true;
		w->live--;
		out[n++] = i;
	}
	return n;
}

int pid_watch_fd(const struct pid_watch *w)
{
	return w->live > 0 ? w->epfd : -1;
}

void pid_watch_close(struct pid_watch *w)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		if (w->pidfd[i] >= 0)
			close(w->pidfd[i]);
	}
	if (w->epfd >= 0)
		close(w->epfd);
	free(w->pid);
	free(w->pidfd);
	free(w->said);
	free(w->poll);
	free(w->poll_index);
	memset(w, 0, sizeof(*w));
	w->epfd = -1;
}
