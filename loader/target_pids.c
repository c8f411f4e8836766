#include "loader/target_pids.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "ipc/lowprof_fds.h"
#include "loader/bpf_session.h"
#include "loader/loader_audit.h"

void target_pids_open(struct target_pids *t, const pid_t *pids, const size_t *starts, size_t n)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->exited = n > 0 ? calloc(n, sizeof(*t->exited)) : NULL;
	if (pid_watch_init(&t->watch, n) != 0 || (n > 0 && t->exited == NULL))
		fatal(LOWPROF_EXIT_FAILURE, "out of memory");
	for (i = 0; i < n; i++)
		pid_watch_add(&t->watch, pids[i], starts != NULL ? starts[i] : 0);
}

/* The target at i exited: out of the map, said. */
static void target_pids_forget(struct target_pids *t, size_t i, struct bpf_session *sess)
{
	pid_t pid = t->watch.pid[i];
	const char *what = pid == t->command ? "the command" : "-p";
	int rc = bpf_session_forget_pid(sess, pid);

	loader_audit_pid_forgotten(pid, rc);
	if (rc != 0)
		log_warn("process %d (%s) exited, and removing it from the sampled pids failed: %s",
			 (int)pid, what, strerror(-rc));
	else
		log_info("process %d (%s) exited: its pid is no longer sampled", (int)pid, what);
}

size_t target_pids_check(struct target_pids *t, struct bpf_session *sess)
{
	size_t n = pid_watch_exited(&t->watch, t->exited), i;

	for (i = 0; i < n; i++)
		target_pids_forget(t, t->exited[i], sess);
	return t->watch.live;
}

int target_pids_wakeup_fd(const struct target_pids *t)
{
	return pid_watch_fd(&t->watch);
}

void target_pids_close(struct target_pids *t)
{
	pid_watch_close(&t->watch);
	free(t->exited);
	t->exited = NULL;
}
