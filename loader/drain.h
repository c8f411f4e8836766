/*
 * Moving samples from the BPF ring buffer to the shared-memory ring.
 * The BPF side never wakes us (BPF_RB_NO_WAKEUP), so this runs on a timer:
 * ring_buffer__consume() then one publish and one eventfd hint per batch.
 */
#ifndef LOWPROF_LOADER_DRAIN_H
#define LOWPROF_LOADER_DRAIN_H

#include <stdbool.h>
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
	bool notify_pending;    /* published since the exporter was last told */
};

int drain_init(struct drain *d, int ringbuf_map_fd, int shm_memfd, int eventfd,
	       char *err, size_t errlen);
/* Consume everything currently in the BPF ring; returns samples moved or -errno. */
int drain_run(struct drain *d);
/* Append a non-sample record (statistics, a timeline entry) and publish it,
 * without waking the exporter for it. */
int drain_put_record(struct drain *d, uint32_t type, const void *data, uint32_t len);
/*
 * Tell the exporter (its eventfd) about everything published since the last
 * call: drain_run and drain_put_record only publish, so that one loop pass of
 * the loader (a drain, a timeline entry, the statistics) wakes it once.
 */
void drain_flush_notify(struct drain *d);
/* Readable (poll) once the BPF program forced a wake-up: the ring passed its watermark. */
int drain_wakeup_fd(const struct drain *d);
void drain_fini(struct drain *d);

#endif
