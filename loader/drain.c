#include "loader/drain.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bpf/lowprof.h"
#include "common/mono_clock.h"
#include "ipc/loader_stats.h"
#include "loader/seen_pids.h"

static int drain_on_sample(void *ctx, void *data, size_t size)
{
	struct drain *d = ctx;
	int rc;

	d->drained++;
	/* As bpf_ringbuf_query counts it: a header of 8 bytes, the length rounded up to 8. */
	d->drained_bytes += (8 + size + 7) & ~(size_t)7;
	/* Without the set every process counts as new: the exporter is told at once. */
	if (d->seen == NULL) {
		d->new_pid = true;
	} else if (size >= sizeof(struct lowprof_sample) &&
		   seen_pids_add(d->seen, ((const struct lowprof_sample *)data)->pid,
				 ((const struct lowprof_sample *)data)->image_id, d->now_ns)) {
		d->new_pid = true;
		d->new_pids++;
	}
	rc = shm_ring_producer_write(&d->shm, LOWPROF_REC_SAMPLE, data, (uint32_t)size);
	if (rc == -ENOSPC)
		d->shm_dropped++;
	else if (rc != 0)
		d->shm_errors++;
	/* Never stop the drain for one sample: the BPF ring must keep emptying. */
	return 0;
}

int drain_init(struct drain *d, int ringbuf_map_fd, int shm_memfd, int eventfd,
	       char *err, size_t errlen)
{
	int rc;

	memset(d, 0, sizeof(*d));
	d->eventfd = eventfd;
	rc = shm_ring_producer_attach(&d->shm, shm_memfd, err, errlen);
	if (rc != 0)
		return rc;
	d->wake_fd = -1;
	d->rb = ring_buffer__new(ringbuf_map_fd, drain_on_sample, d, NULL);
	if (d->rb == NULL) {
		rc = -errno;
		snprintf(err, errlen, "ring_buffer__new: %s", strerror(-rc));
		shm_ring_producer_detach(&d->shm);
		return rc;
	}
	/* Edge-triggered: readable from the program's wake until drain_run
	 * takes it, not for as long as the ring holds data. libbpf's own set is
	 * level-triggered: once woken it stays readable while anything is
	 * waiting, so a sample that lands between a drain and the next poll
	 * (every few ms on a busy host) would read as another wake. */
	d->wake_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d->wake_fd < 0 ||
	    epoll_ctl(d->wake_fd, EPOLL_CTL_ADD, ringbuf_map_fd,
		      &(struct epoll_event){.events = EPOLLIN | EPOLLET}) != 0) {
		rc = -errno;
		snprintf(err, errlen, "the ring buffer's wake-up: %s", strerror(-rc));
		drain_fini(d);
		return rc;
	}
	return 0;
}

static void drain_notify(struct drain *d)
{
	shm_ring_producer_publish(&d->shm);
	d->notify_pending = true;
}

bool drain_notice_now(bool may_wait, bool new_pid, double fill, uint64_t since_last_ns)
{
	return !may_wait || new_pid || fill >= DRAIN_NOTICE_FILL || since_last_ns >= DRAIN_NOTICE_MAX_NS;
}

void drain_flush_notify(struct drain *d, bool may_wait)
{
	uint64_t one = 1, now;

	if (!d->notify_pending)
		return;
	now = mono_ns();
	if (!drain_notice_now(may_wait, d->new_pid, shm_ring_producer_fill(&d->shm),
			      now - d->notified_ns)) {
		d->notices_deferred++;
		return;
	}
	d->notify_pending = false;
	d->new_pid = false;
	d->notified_ns = now;
	d->notices++;
	/* Only a hint: the exporter also polls, so a failed write loses nothing. */
	if (write(d->eventfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return;
}

int drain_run(struct drain *d)
{
	uint64_t before = d->drained;
	struct epoll_event ev;
	int rc;

	d->now_ns = mono_ns();
	/* Take the wake, if any, before the data: one that comes while we
	 * consume stays for the next poll (and finds what is left, or nothing). */
	(void)epoll_wait(d->wake_fd, &ev, 1, 0);
	rc = ring_buffer__consume(d->rb);
	if (rc < 0)
		return rc;
	if (d->drained != before)
		drain_notify(d);
	return (int)(d->drained - before);
}

int drain_put_record(struct drain *d, uint32_t type, const void *data, uint32_t len)
{
	int rc = shm_ring_producer_write(&d->shm, type, data, len);

	/* Published, not announced: statistics and timeline entries can wait for
	 * the exporter's next pass (its file writes, its liveness ping, or the
	 * next samples); waking it for each of them would add wake-ups. Samples
	 * announce themselves (drain_run), at once when of a process not seen
	 * lately, which must be asked about while it exists (drain.h). */
	if (rc == 0)
		shm_ring_producer_publish(&d->shm);
	return rc;
}

int drain_wakeup_fd(const struct drain *d)
{
	return d->wake_fd;
}

void drain_fini(struct drain *d)
{
	if (d->wake_fd >= 0)
		close(d->wake_fd);
	d->wake_fd = -1;
	ring_buffer__free(d->rb);
	d->rb = NULL;
	shm_ring_producer_detach(&d->shm);
}
