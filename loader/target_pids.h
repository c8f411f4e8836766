/*
 * target_pids: the processes given with -p, watched through pidfds.
 *
 * The BPF program samples the thread groups in its target_pids map. A pid
 * outlives its process only as a number: once the process exits, the kernel
 * may give the pid to any other process, which -p would then profile, a
 * stranger's stacks in the user's profile. So each target is held by a
 * pidfd from the loader's start (an fd that names that process, never
 * another by the same number); when it polls readable the process has
 * exited, and its pid leaves the map (audited, as every BPF action) before
 * a reused one can be sampled: the pidfds are in one epoll set that wakes
 * the loader's loop, so the pid is forgotten as the process exits, before
 * the kernel has cycled through the pid space to give it out again. The
 * loader says which target exited (the supervisor, watching the same
 * processes, stops lowprof once none is left).
 *
 * The map's values close the moments no pidfd covers (from the command
 * line's check to the loader's start, and a loader's restart while its
 * pinned program runs on): each holds its target's start time, read by the
 * supervisor at the check, and the program samples only the thread group
 * whose start time it is (bpf/lowprof.bpf.c, target_pid_matches). A target
 * whose pid names another process by the time the loader opens it counts
 * as exited.
 */
#ifndef LOWPROF_LOADER_TARGET_PIDS_H
#define LOWPROF_LOADER_TARGET_PIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/pid_watch.h"

struct bpf_session;

struct target_pids {
	struct pid_watch watch;
	size_t *exited; /* target_pids_check's scratch: room for every target */
	pid_t command;  /* the target that is `lowprof -- COMMAND`'s command (its log lines); 0 */
};

/* Hold each of the n pids (before they go into the map: one that has
 * exited already is forgotten at the first check). starts: each one's
 * start time (--pid-start), or NULL: the pids alone. n is 0 without -p. */
void target_pids_open(struct target_pids *t, const pid_t *pids, const size_t *starts, size_t n);
/* Poll the pidfds (one system call, no wait); every target that exited
 * leaves the session's target_pids map and is said so. Returns how many
 * targets are left. Nothing to do without -p. */
size_t target_pids_check(struct target_pids *t, struct bpf_session *sess);
/* Readable (poll) when a target may have exited: then target_pids_check.
 * -1 without -p. */
int target_pids_wakeup_fd(const struct target_pids *t);
void target_pids_close(struct target_pids *t);

#endif
