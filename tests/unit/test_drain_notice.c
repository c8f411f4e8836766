/*
 * When the loader tells the exporter of what it published (loader/drain.h):
 * at once for a process not sampled lately, for a shared ring a quarter
 * full, for a quiet interval or the stop; otherwise at most
 * DRAIN_NOTICE_MAX_NS after the last notice. Run on a real shared ring
 * (memfd) and a real eventfd, as the loader's drain has them; and the
 * answer of seen_pids_add that says which processes are new.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/mono_clock.h"
#include "ipc/shm_ring.h"
#include "loader/drain.h"
#include "loader/seen_pids.h"

#define RING_SIZE (64u * 1024u)
#define T0 (1000 * NSEC_PER_SEC)

struct fixture {
	struct drain d;
	int memfd;
};

static int setup(void **state)
{
	static struct fixture f;
	char err[256];

	memset(&f, 0, sizeof(f));
	assert_int_equal(shm_ring_create(RING_SIZE, &f.memfd, err, sizeof(err)), 0);
	assert_int_equal(shm_ring_producer_attach(&f.d.shm, f.memfd, err, sizeof(err)), 0);
	f.d.eventfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(f.d.eventfd >= 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	shm_ring_producer_detach(&f->d.shm);
	close(f->d.eventfd);
	close(f->memfd);
	return 0;
}

/* The hints written since the last call (the eventfd's counter), 0 none. */
static uint64_t hints(const struct drain *d)
{
	uint64_t n = 0;

	if (read(d->eventfd, &n, sizeof(n)) != sizeof(n)) {
		assert_int_equal(errno, EAGAIN);
		return 0;
	}
	return n;
}

/* Something published, as a drain pass leaves it, the last notice `ago` back. */
static void published(struct drain *d, bool new_pid, uint64_t ago)
{
	d->notify_pending = true;
	d->new_pid = new_pid;
	d->notified_ns = mono_ns() - ago;
}

static void test_rule(void **state)
{
	(void)state;
	/* A busy host sampling the processes it sampled a second ago: waits. */
	assert_false(drain_notice_now(true, false, 0.0, 0));
	assert_false(drain_notice_now(true, false, DRAIN_NOTICE_FILL - 0.001, DRAIN_NOTICE_MAX_NS - 1));
	/* Each reason alone tells the exporter now. */
	assert_true(drain_notice_now(false, false, 0.0, 0));
	assert_true(drain_notice_now(true, true, 0.0, 0));
	assert_true(drain_notice_now(true, false, DRAIN_NOTICE_FILL, 0));
	assert_true(drain_notice_now(true, false, 0.0, DRAIN_NOTICE_MAX_NS));
}

static void test_known_processes_wait(void **state)
{
	struct fixture *f = *state;

	published(&f->d, false, 0);
	drain_flush_notify(&f->d, true);
	assert_int_equal(hints(&f->d), 0);
	/* Still owed: the next pass that may not wait tells it. */
	assert_true(f->d.notify_pending);
	assert_int_equal(f->d.notices_deferred, 1);
	drain_flush_notify(&f->d, true);
	assert_int_equal(hints(&f->d), 0);
	/* The bound: DRAIN_NOTICE_MAX_NS after the last notice. */
	f->d.notified_ns = mono_ns() - DRAIN_NOTICE_MAX_NS;
	drain_flush_notify(&f->d, true);
	assert_int_equal(hints(&f->d), 1);
	assert_false(f->d.notify_pending);
	assert_true(mono_ns() - f->d.notified_ns < DRAIN_NOTICE_MAX_NS);
	/* Nothing published: nothing to tell, however long ago. */
	f->d.notified_ns = mono_ns() - 2 * DRAIN_NOTICE_MAX_NS;
	drain_flush_notify(&f->d, false);
	assert_int_equal(hints(&f->d), 0);
}

static void test_new_process_told_at_once(void **state)
{
	struct fixture *f = *state;

	published(&f->d, true, 0);
	drain_flush_notify(&f->d, true);
	assert_int_equal(hints(&f->d), 1);
	assert_false(f->d.new_pid);
	/* The next pass of known processes waits again. */
	published(&f->d, false, 0);
	drain_flush_notify(&f->d, true);
	assert_int_equal(hints(&f->d), 0);
}

static void test_rest_and_stop_told_at_once(void **state)
{
	struct fixture *f = *state;

	published(&f->d, false, 0);
	drain_flush_notify(&f->d, false);
	assert_int_equal(hints(&f->d), 1);
	assert_int_equal(f->d.notices, 1);
}

static void test_filling_ring_told(void **state)
{
	struct fixture *f = *state;
	static uint8_t payload[4000];
	unsigned writes = 0;

	/* Records the exporter has not read, as samples would be, until the
	 * ring passes the mark: each pass before that waits, the one after
	 * it tells. */
	published(&f->d, false, 0);
	while (shm_ring_producer_fill(&f->d.shm) < DRAIN_NOTICE_FILL) {
		drain_flush_notify(&f->d, true);
		assert_int_equal(hints(&f->d), 0);
		assert_int_equal(drain_put_record(&f->d, 1, payload, sizeof(payload)), 0);
		writes++;
	}
	/* A 64-KiB ring: a quarter is four or five such records. */
	assert_in_range(writes, 4, 5);
	drain_flush_notify(&f->d, true);
	assert_int_equal(hints(&f->d), 1);
}

static void test_seen_pids_new(void **state)
{
	struct seen_pids s;

	(void)state;
	assert_int_equal(seen_pids_init(&s, T0), 0);
	assert_true(seen_pids_add(&s, 4242, 7, T0));
	assert_false(seen_pids_add(&s, 4242, 7, T0 + 1));
	assert_true(seen_pids_add(&s, 4243, 7, T0 + 2));
	/* pid 0 (the idle task) is never asked about, never new. */
	assert_false(seen_pids_add(&s, 0, 7, T0));
	/* After a swap the pid is in the older generation: known, and kept. */
	assert_false(seen_pids_add(&s, 4242, 7, T0 + SEEN_PIDS_WINDOW_S * NSEC_PER_SEC));
	/* Two swaps without a sample of it: forgotten, new again. */
	assert_true(seen_pids_add(&s, 4243, 7, T0 + 2 * SEEN_PIDS_WINDOW_S * NSEC_PER_SEC));
	/* 4242, sampled at the first swap, is in the older generation still. */
	assert_false(seen_pids_add(&s, 4242, 7, T0 + 2 * SEEN_PIDS_WINDOW_S * NSEC_PER_SEC + 1));
	seen_pids_fini(&s);
}

/* A process that execs, or a reused pid, is new again (another image_id):
 * in the current generation, in the older one; the same image_id is not. */
static void test_seen_pids_image(void **state)
{
	struct seen_pids s;
	uint64_t swap = T0 + SEEN_PIDS_WINDOW_S * NSEC_PER_SEC;

	(void)state;
	assert_int_equal(seen_pids_init(&s, T0), 0);
	assert_true(seen_pids_add(&s, 4242, 7, T0));
	assert_true(seen_pids_add(&s, 4242, 0x9e37, T0 + 1));
	assert_false(seen_pids_add(&s, 4242, 0x9e37, T0 + 2));
	assert_true(seen_pids_add(&s, 4243, 0xffff, T0 + 3));
	assert_false(seen_pids_add(&s, 4243, 0xffff, T0 + 4));
	/* After a swap: both in the older generation. */
	assert_false(seen_pids_add(&s, 4242, 0x9e37, swap));
	assert_true(seen_pids_add(&s, 4243, 1, swap + 1));
	assert_false(seen_pids_add(&s, 4243, 1, swap + 2));
	assert_true(seen_pids_has(&s, 4243));
	seen_pids_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test_setup_teardown(test_known_processes_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_process_told_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rest_and_stop_told_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filling_ring_told, setup, teardown),
		cmocka_unit_test(test_seen_pids_new),
		cmocka_unit_test(test_seen_pids_image),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
