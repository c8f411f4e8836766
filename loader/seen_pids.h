/*
 * seen_pids: the processes the loader has sampled lately, a bounded set.
 *
 * The symbol broker answers maps and process requests only for pids in it:
 * the exporter needs them for the samples it reads, and nothing else, so a
 * compromised exporter cannot survey the host's other processes. The drain
 * adds every sample's pid (one hash probe); the set forgets a pid about
 * SEEN_PIDS_WINDOW_S to twice that after its last sample (two generations,
 * swapped), and holds at most SEEN_PIDS_MAX pids a generation (more are
 * counted, not kept: their requests are refused, their frames then named by
 * address). With each pid, the image_id of its last sample (bpf/lowprof.h):
 * a process that execs, or a reused pid, is new again, so the exporter is
 * told of it at once and reads its executable while it runs.
 */
#ifndef LOWPROF_LOADER_SEEN_PIDS_H
#define LOWPROF_LOADER_SEEN_PIDS_H

#include <stdbool.h>
#include <stdint.h>

#define SEEN_PIDS_WINDOW_S 120
#define SEEN_PIDS_MAX 32768u
/* Slots per generation: a power of two, at most half full. */
#define SEEN_PIDS_SLOTS (2 * SEEN_PIDS_MAX)

struct seen_pids {
	uint32_t *gen[2];    /* open addressing; 0 is an empty slot (pid 0 is never asked about) */
	uint16_t *image_id[2]; /* the image_id of the pid in the same slot of gen */
	uint32_t count[2];
	unsigned cur;        /* gen[cur] takes new pids */
	uint64_t swapped_ns; /* when gen[cur] started */
	uint64_t not_kept;   /* pids not added: the generation was full */
};

/* 0 or -ENOMEM. now_ns starts the first generation. */
int seen_pids_init(struct seen_pids *s, uint64_t now_ns);
/* Whether pid was in neither generation, or with another image_id: a
 * process not sampled lately (or one the set could not keep), or one that
 * runs another program since (or another process by that pid), which the
 * exporter has not been told of. */
bool seen_pids_add(struct seen_pids *s, uint32_t pid, uint16_t image_id, uint64_t now_ns);
bool seen_pids_has(const struct seen_pids *s, uint32_t pid);
void seen_pids_fini(struct seen_pids *s);

#endif /* LOWPROF_LOADER_SEEN_PIDS_H */
