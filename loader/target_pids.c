#define _GNU_SOURCE
#include "loader/target_pids.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "common/proc_stat.h"
#include "loader/bpf_session.h"
#include "loader/loader_audit.h"

/* Is the process pidfd names the one that started at start (clock ticks)?
 * Its start time read, then the pidfd seen not yet exited, so that what was
 * read was its own and not a successor's. */
static bool target_pids_same_process(int pidfd, pid_t pid, size_t start)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	unsigned long long now;

	if (proc_stat_field(pid, PROC_STAT_STARTTIME, &now) != 0 || now != start)
		return false;
	return poll(&p, 1, 0) == 0;
}

void target_pids_open(struct target_pids *t, const pid_t *pids, const size_t *starts, size_t n)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->epfd = -1;
	if (n > SETTINGS_MAX_PIDS)
		n = SETTINGS_MAX_PIDS;
	if (n > 0) {
		t->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (t->epfd < 0)
			log_warn("epoll_create1: %s: an exited -p target is seen at the next tick",
				 strerror(errno));
	}
	for (i = 0; i < n; i++) {
		t->pid[i] = pids[i];
		/* Gone already (ESRCH): forgotten at the first check, which finds
		 * the fd missing. Any other failure (no pidfds before Linux 5.3)
		 * keeps the pid: sampled as before, by number. */
		t->pidfd[i] = (int)syscall(SYS_pidfd_open, pids[i], 0);
		if (t->pidfd[i] < 0 && errno != ESRCH)
			t->pidfd[i] = -2;
		if (t->pidfd[i] >= 0 && starts != NULL &&
		    !target_pids_same_process(t->pidfd[i], pids[i], starts[i])) {
			close(t->pidfd[i]); /* gone, perhaps its pid given out again */
			t->pidfd[i] = -1;
		}
		if (t->pidfd[i] >= 0 && t->epfd >= 0) {
			struct epoll_event ev = {.events = EPOLLIN};

			if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->pidfd[i], &ev) != 0)
				log_warn("epoll_ctl(pidfd of %d): %s: its exit is seen at the next tick",
					 (int)pids[i], strerror(errno));
		}
	}
	t->n = n;
	t->live = n;
}

/* The target at i exited: out of the map, said, forgotten (pid 0, no pidfd). */
static void target_pids_forget(struct target_pids *t, size_t i, struct bpf_session *sess)
{
	int rc = bpf_session_forget_pid(sess, t->pid[i]);

	loader_audit_pid_forgotten(t->pid[i], rc);
	if (rc != 0)
		log_warn("process %d (-p) exited, and removing it from the sampled pids failed: %s",
			 (int)t->pid[i], strerror(-rc));
	else
		log_info("process %d (-p) exited: its pid is no longer sampled", (int)t->pid[i]);
	if (t->pidfd[i] >= 0)
		close(t->pidfd[i]);
	t->pidfd[i] = -1;
	t->pid[i] = 0;
	t->live--;
	if (t->live == 0)
		log_warn("every process given with -p has exited: nothing more will be sampled");
}

size_t target_pids_check(struct target_pids *t, struct bpf_session *sess)
{
	struct pollfd pfd[SETTINGS_MAX_PIDS];
	size_t idx[SETTINGS_MAX_PIDS], n = 0, i;

	if (t->live == 0)
		return 0;
	for (i = 0; i < t->n; i++) {
		if (t->pidfd[i] == -1 && t->pid[i] != 0) {
			/* Exited before its pidfd could be opened. */
			target_pids_forget(t, i, sess);
			continue;
		}
		if (t->pidfd[i] < 0)
			continue;
		pfd[n].fd = t->pidfd[i];
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		idx[n++] = i;
	}
	if (n == 0 || poll(pfd, (nfds_t)n, 0) <= 0)
		return t->live;
	for (i = 0; i < n; i++) {
		if (pfd[i].revents != 0)
			target_pids_forget(t, idx[i], sess);
	}
	return t->live;
}

int target_pids_wakeup_fd(const struct target_pids *t)
{
	return t->live > 0 ? t->epfd : -1;
}

void target_pids_close(struct target_pids *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->pidfd[i] >= 0)
			close(t->pidfd[i]);
		t->pidfd[i] = -1;
	}
	t->n = t->live = 0;
	if (t->epfd >= 0)
		close(t->epfd);
	t->epfd = -1;
}
