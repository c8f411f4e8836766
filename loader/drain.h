/*
 * Moving samples from the BPF ring buffer to the shared-memory ring.
 * The BPF side never wakes us (BPF_RB_NO_WAKEUP), so this runs on a timer:
 * ring_buffer__consume() then one publish per batch, and an eventfd hint
 * when the exporter has a reason to read now (drain_notice_now).
 */
#ifndef LOWPROF_LOADER_DRAIN_H
#define LOWPROF_LOADER_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/mono_clock.h"
#include "ipc/shm_ring.h"

/*
 * When the exporter is told (its eventfd) of what was published.
 *
 * At once when a pass holds a sample of a process not sampled lately
 * (seen_pids_add): the exporter asks the loader about a process (its
 * executable, its container) while it exists, and a short-lived one is gone
 * in a second. Otherwise, on a busy host sampling the same processes, at
 * most DRAIN_NOTICE_MAX_NS after the last notice, or sooner once the shared
 * ring is DRAIN_NOTICE_FILL full: each wake of the exporter costs it far
 * more than the samples of a second (~290 us a wake at 19 Hz on a 2-CPU VM),
 * and what it has not read stays in the shared ring, which a restarted
 * exporter reads on from (the supervisor holds it): nothing waits at risk.
 * The files and OTLP are not later for it: the exporter wakes for an
 * interval's end on its own timer and reads the ring then.
 * At rest (a quiet interval) every pass tells it: the quiet intervals are
 * already seconds apart and the exporter's own timeout is set by them.
 */
#define DRAIN_NOTICE_MAX_NS (5 * NSEC_PER_SEC)
#define DRAIN_NOTICE_FILL 0.25

struct ring_buffer;
struct seen_pids;

struct drain {
	struct ring_buffer *rb;
	int wake_fd;          /* epoll, edge-triggered on the ring: its wake-ups (drain_wakeup_fd) */
	struct shm_ring_producer shm;
	int eventfd;
	uint64_t drained;     /* samples read from the BPF ring */
	uint64_t drained_bytes; /* ... and the ring space they took (8-byte headers, 8-byte aligned) */
	uint64_t shm_dropped; /* samples lost because the shared ring was full */
	uint64_t shm_errors;  /* shared ring refused for another reason (corrupt consumer) */
	struct seen_pids *seen; /* every sample's pid goes in (the broker's pids); NULL: none */
	uint64_t now_ns;        /* of the current drain_run */
	bool notify_pending;    /* published since the exporter was last told */
	bool new_pid;           /* a process not seen lately is among them */
	uint64_t new_pids;      /* processes not seen lately, sampled (seen_pids_add); none without the set */
	uint64_t notified_ns;   /* the last eventfd hint (mono_ns); 0 none */
	uint64_t notices, notices_deferred; /* hints written; passes that waited */
};

/* Whether a pass that published something tells the exporter now (see
 * DRAIN_NOTICE_MAX_NS): may_wait false (a quiet interval, the stop) tells
 * it always. fill: the shared ring's, 0..1. */
bool drain_notice_now(bool may_wait, bool new_pid, double fill, uint64_t since_last_ns);

int drain_init(struct drain *d, int ringbuf_map_fd, int shm_memfd, int eventfd,
	       char *err, size_t errlen);
/* Consume everything currently in the BPF ring, and the wake-up that asked
 * for it; returns samples moved or -errno. */
int drain_run(struct drain *d);
/* Append a non-sample record (statistics, a timeline entry) and publish it,
 * without waking the exporter for it. */
int drain_put_record(struct drain *d, uint32_t type, const void *data, uint32_t len);
/*
 * Tell the exporter (its eventfd) about everything published since the last
 * call, when drain_notice_now says so: drain_run and drain_put_record only
 * publish, so that one loop pass of the loader (a drain, a timeline entry,
 * the statistics) wakes it once at most. may_wait: see drain_notice_now.
 */
void drain_flush_notify(struct drain *d, bool may_wait);
/* Readable (poll) once the BPF program forced a wake-up (the ring passed its
 * watermark, a new process), until the next drain_run. */
int drain_wakeup_fd(const struct drain *d);
void drain_fini(struct drain *d);

#endif
