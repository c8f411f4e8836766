/*
 * A command's new processes on the loader's side (`lowprof -- COMMAND`):
 * the fork and exit programs (bpf/follow.bpf.h) are loaded and attached
 * only when a target follows, and their counters read.
 *
 * Their links are not pinned: while a restarted loader is starting, a fork
 * of the command's processes is not seen (the child is not profiled) and
 * an exit is not either (its entry stays, refused to a later holder of the
 * pid by its start time, and replaced if that holder is followed).
 */
#ifndef LOWPROF_LOADER_FOLLOW_H
#define LOWPROF_LOADER_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/lowprof.h"

struct lowprof_bpf;
struct bpf_link;

struct follow_links {
	struct bpf_link *fork, *exit;
};

/* Before load: the programs are loaded (verified) only when enabled. */
void follow_prepare(struct lowprof_bpf *skel, bool enabled);
/* Attach both (nothing when not enabled). 0, or -errno with a message. */
int follow_attach(struct lowprof_bpf *skel, bool enabled, struct follow_links *l, char *err,
		  size_t errlen);
void follow_detach(struct follow_links *l);
/* The counters summed over CPUs. 0 or -errno. */
int follow_read_stats(struct lowprof_bpf *skel, int ncpus, struct lowprof_follow_stats *out);

#endif
