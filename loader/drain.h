/*
 * Moving samples from the BPF ring buffer to the shared-memory ring.
 * The BPF side never wakes us (BPF_RB_NO_WAKEUP), so this runs on a timer:
 * ring_buffer__consume() then one publish and one eventfd hint per batch.
 */
#ifndef LOWPROF_LOADER_DRAIN_H
#define LOWPROF_LOADER_DRAIN_H

#include <stdint.h>

#include "ipc/shm_ring.h"

struct ring_buffer;
struct seen_pids;

struct drain {
	struct ring_buffer *rb;
	struct shm_ring_producer shm;
	int eventfd;
	uint64_t drained;     /* samples read from the BPF ring */
	uint64_t shm_dropped; /* samples lost because the shared ring was full */
	uint64_t shm_errors;  /* shared ring refused for another reason (corrupt consumer) */
	struct seen_pids *seen; /* every sample's pid goes in (the broker's pids); NULL: none */
	uint64_t now_ns;        /* of the current drain_run */
};

int drain_init(struct drain *d, int ringbuf_map_fd, int shm_memfd, int eventfd,
	       char *err, size_t errlen);
/* Consume everything currently in the BPF ring; returns samples moved or -errno. */
int drain_run(struct drain *d);
/* Append a non-sample record (statistics) and publish it. */
int drain_put_record(struct drain *d, uint32_t type, const void *data, uint32_t len);
/* Readable (poll) once the BPF program forced a wake-up: the ring passed its watermark. */
int drain_wakeup_fd(const struct drain *d);
void drain_fini(struct drain *d);

#endif
