/*
 * Unit tests for the shared-memory ring: real memfds and mappings, no mocks.
 * Corruption is injected with pwrite on the memfd, the way a hostile peer
 * holding the same fd would do it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipc/shm_ring.h"

#define SMALL_RING 4096u
#define GOOD_HDR SHM_RING_MAGIC, SHM_RING_VERSION

/* What the last read() returned; tests run one at a time. */
static uint8_t rbuf[SHM_RING_MAX_RECORD + 64];
static uint32_t rtype, rlen;
static char err[256];

static int read1(struct shm_ring_consumer *c, uint32_t bufsize)
{
	err[0] = '\0';
	return shm_ring_consumer_read(c, &rtype, rbuf, bufsize, &rlen, err, sizeof(err));
}

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static uint32_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

/* Record number seq: a type, a length below max_len and bytes anyone can recompute. */
static uint32_t rec_type(uint64_t seq)
{
	return mix(seq) % 1000u + 1u;
}

static uint32_t rec_len(uint64_t seq, uint32_t max_len)
{
	return mix(seq + 0x9e3779b97f4a7c15ULL) % (max_len + 1u);
}

static uint8_t rec_byte(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131u + i * 7u + (i >> 8));
}

static void rec_fill(uint8_t *buf, uint64_t seq, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		buf[i] = rec_byte(seq, i);
}

static int rec_check(const uint8_t *buf, uint64_t seq, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++) {
		if (buf[i] != rec_byte(seq, i))
			return 0;
	}
	return 1;
}

static int write_seq(struct shm_ring_producer *p, uint64_t seq, uint32_t max_len)
{
	static uint8_t wbuf[SHM_RING_MAX_RECORD];
	uint32_t len = rec_len(seq, max_len);

	rec_fill(wbuf, seq, len);
	return shm_ring_producer_write(p, rec_type(seq), wbuf, len);
}

/* Read one record and assert it is record seq. */
static void expect_seq(struct shm_ring_consumer *c, uint64_t seq, uint32_t max_len)
{
	assert_int_equal(read1(c, sizeof(rbuf)), 1);
	assert_int_equal(rtype, rec_type(seq));
	assert_int_equal(rlen, rec_len(seq, max_len));
	assert_true(rec_check(rbuf, seq, rlen));
}

static void expect_empty(struct shm_ring_consumer *c)
{
	assert_int_equal(read1(c, sizeof(rbuf)), 0);
}

static void detach_close(struct shm_ring_producer *p, struct shm_ring_consumer *c, int fd)
{
	shm_ring_consumer_detach(c);
	shm_ring_producer_detach(p);
	close(fd);
}

static int make_ring(size_t size)
{
	int fd = -1;

	assert_int_equal(shm_ring_create(size, &fd, err, sizeof(err)), 0);
	assert_true(fd >= 0);
	return fd;
}

static void attach_both(int fd, struct shm_ring_producer *p, struct shm_ring_consumer *c)
{

	assert_int_equal(shm_ring_producer_attach(p, fd, err, sizeof(err)), 0);
	assert_int_equal(shm_ring_consumer_attach(c, fd, err, sizeof(err)), 0);
}

static void poke_u64(int fd, off_t off, uint64_t v)
{
	assert_int_equal(pwrite(fd, &v, sizeof(v), off), (ssize_t)sizeof(v));
}

static off_t pos_off(unsigned int page_index)
{
	return (off_t)(page_index * page_size());
}

static off_t data_off(uint64_t pos, uint64_t data_size)
{
	return (off_t)(SHM_RING_PAGE_DATA * page_size() + (pos & (data_size - 1)));
}

static void test_create_checks_size(void **state)
{
	static const size_t bad[] = { 0, 8, 4095, 4097, 3 * 4096, (size_t)2 << 30 };
	int fd, seals;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		fd = 123;
		assert_int_equal(shm_ring_create(bad[i], &fd, err, sizeof(err)), -EINVAL);
		assert_int_equal(fd, -1);
		assert_non_null(strstr(err, "power of two"));
	}
	fd = make_ring(SMALL_RING);
	seals = fcntl(fd, F_GET_SEALS);
	assert_int_equal(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
			 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(ftruncate(fd, 0), -1);
	close(fd);
}

static void test_round_trip(void **state)
{
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	uint8_t data[300];
	int fd = make_ring(1u << 16);

	attach_both(fd, &p, &c);
	expect_empty(&c);
	/* Every length 0..200 (all paddings), with distinct types. */
	for (uint32_t i = 0; i <= 200; i++) {
		rec_fill(data, i, i);
		assert_int_equal(shm_ring_producer_write(&p, i + 1, data, i), 0);
	}
	assert_int_equal(shm_ring_producer_write(&p, 7, NULL, 0), 0);
	shm_ring_producer_publish(&p);
	for (uint32_t i = 0; i <= 200; i++) {
		memset(rbuf, 0xee, sizeof(rbuf));
		assert_int_equal(read1(&c, sizeof(rbuf)), 1);
		assert_int_equal(rtype, i + 1);
		assert_int_equal(rlen, i);
		assert_true(rec_check(rbuf, i, i));
		assert_int_equal(rbuf[i], 0xee); /* nothing copied past the payload */
	}
	assert_int_equal(read1(&c, 0), 1);
	assert_int_equal(rtype, 7);
	assert_int_equal(rlen, 0);
	expect_empty(&c);
	assert_int_equal(shm_ring_consumer_pending(&c), 0);
	shm_ring_consumer_commit(&c);
	assert_true(shm_ring_producer_fill(&p) == 0.0);
	detach_close(&p, &c, fd);
}

static long minor_faults(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

/* Both sides map the ring whole when they attach: its first lap (hours at a
 * host's rest) takes no page fault, where each would be a wake's cost. */
static void test_first_lap_no_faults(void **state)
{
	static uint8_t data[4000];
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	const uint32_t ring = 1u << 20;
	uint64_t written = 0, seq = 0;
	long before;
	int fd = make_ring(ring);

	(void)state;
	attach_both(fd, &p, &c);
	/* Our own buffers touched first: only the ring's pages are measured. */
	memset(rbuf, 0, sizeof(rbuf));
	rec_fill(data, 0, sizeof(data));
	before = minor_faults();
	while (written < (uint64_t)ring + sizeof(data)) {
		assert_int_equal(shm_ring_producer_write(&p, 1, data, sizeof(data)), 0);
		shm_ring_producer_publish(&p);
		assert_int_equal(read1(&c, sizeof(rbuf)), 1);
		assert_int_equal(rlen, sizeof(data));
		shm_ring_consumer_commit(&c);
		written += sizeof(data);
		seq++;
	}
	/* A fault per page of the data area (256 here) on either side without it;
	 * strays allowed: AddressSanitizer's shadow of the ring, an eighth of its
	 * pages, faults in on first use. */
	assert_in_range(minor_faults() - before, 0, ring / page_size() / 4);
	assert_true(seq > ring / sizeof(data));
	detach_close(&p, &c, fd);
}

static void test_producer_rejects_bad_args(void **state)
{
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	int fd = make_ring(SMALL_RING);
	int big = make_ring(1u << 17);

	attach_both(fd, &p, &c);
	assert_int_equal(shm_ring_producer_write(&p, 0, rbuf, 4), -EINVAL);
	assert_int_equal(shm_ring_producer_write(&p, 1, NULL, 4), -EINVAL);
	assert_int_equal(shm_ring_producer_write(&p, 1, rbuf, SHM_RING_MAX_RECORD + 1), -EMSGSIZE);
	/* Larger than the whole data area: can never fit, so not -ENOSPC. */
	assert_int_equal(shm_ring_producer_write(&p, 1, rbuf, SMALL_RING), -EMSGSIZE);
	shm_ring_producer_publish(&p);
	expect_empty(&c);
	shm_ring_consumer_detach(&c);
	shm_ring_producer_detach(&p);

	/* The largest record round-trips in a ring big enough for it. */
	attach_both(big, &p, &c);
	assert_int_equal(write_seq(&p, 5, 0), 0);
	rec_fill(rbuf, 9, SHM_RING_MAX_RECORD);
	assert_int_equal(shm_ring_producer_write(&p, 3, rbuf, SHM_RING_MAX_RECORD), 0);
	shm_ring_producer_publish(&p);
	memset(rbuf, 0, sizeof(rbuf));
	expect_seq(&c, 5, 0);
	assert_int_equal(read1(&c, SHM_RING_MAX_RECORD), 1);
	assert_int_equal(rlen, SHM_RING_MAX_RECORD);
	assert_true(rec_check(rbuf, 9, rlen));
	detach_close(&p, &c, big);
	close(fd);
}

static void test_publish_visibility(void **state)
{
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	int fd = make_ring(SMALL_RING);

	attach_both(fd, &p, &c);
	assert_int_equal(write_seq(&p, 1, 100), 0);
	assert_int_equal(write_seq(&p, 2, 100), 0);
	expect_empty(&c);
	assert_int_equal(shm_ring_consumer_pending(&c), 0);
	shm_ring_producer_publish(&p);
	assert_int_equal(shm_ring_consumer_pending(&c),
			 shm_ring_record_size(rec_len(1, 100)) + shm_ring_record_size(rec_len(2, 100)));
	/* Written after the snapshot and not published: not seen. */
	assert_int_equal(write_seq(&p, 3, 100), 0);
	expect_seq(&c, 1, 100);
	/*
	 * Published mid-batch: the consumer keeps its snapshot (one load of the
	 * producer position per batch) and sees record 3 only after record 2.
	 */
	shm_ring_producer_publish(&p);
	assert_int_equal(shm_ring_consumer_pending(&c), shm_ring_record_size(rec_len(2, 100)));
	expect_seq(&c, 2, 100);
	assert_int_equal(shm_ring_consumer_pending(&c), shm_ring_record_size(rec_len(3, 100)));
	expect_seq(&c, 3, 100);
	expect_empty(&c);
	detach_close(&p, &c, fd);
}

static void test_full_ring(void **state)
{
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	uint8_t data[504];
	int fd = make_ring(SMALL_RING);
	int n = 0;

	attach_both(fd, &p, &c);
	/* 504-byte payloads take exactly 512 bytes: eight fill the ring to the byte. */
	for (;;) {
		int ret;

		rec_fill(data, (uint64_t)n, sizeof(data));
		ret = shm_ring_producer_write(&p, (uint32_t)n + 1, data, sizeof(data));
		if (ret == -ENOSPC)
			break;
		assert_int_equal(ret, 0);
		n++;
	}
	assert_int_equal(n, 8);
	assert_true(shm_ring_producer_fill(&p) == 1.0);
	assert_int_equal(shm_ring_producer_write(&p, 1, NULL, 0), -ENOSPC);
	shm_ring_producer_publish(&p);
	/* Reading without committing frees nothing; committing frees exactly that record. */
	assert_int_equal(read1(&c, sizeof(rbuf)), 1);
	assert_int_equal(rtype, 1);
	assert_true(rec_check(rbuf, 0, rlen));
	assert_int_equal(shm_ring_producer_write(&p, 1, NULL, 0), -ENOSPC);
	shm_ring_consumer_commit(&c);
	assert_int_equal(shm_ring_producer_write(&p, 99, data, sizeof(data)), 0);
	assert_int_equal(shm_ring_producer_write(&p, 1, NULL, 0), -ENOSPC);
	shm_ring_producer_publish(&p);
	for (int i = 1; i < 8; i++) {
		assert_int_equal(read1(&c, sizeof(rbuf)), 1);
		assert_int_equal(rtype, (uint32_t)i + 1);
		assert_int_equal(rlen, sizeof(data));
		assert_true(rec_check(rbuf, (uint64_t)i, rlen));
	}
	assert_int_equal(read1(&c, sizeof(rbuf)), 1);
	assert_int_equal(rtype, 99);
	assert_int_equal(rlen, sizeof(data));
	expect_empty(&c);
	detach_close(&p, &c, fd);
}

static void test_wrap_around(void **state)
{
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	const uint32_t max_len = 700;
	uint64_t wseq = 0, rseq = 0, straddles = 0;
	int fd = make_ring(SMALL_RING);

	attach_both(fd, &p, &c);
	while (rseq < 20000) {
		int ret;

		/* Fill as far as it goes, then drain; odd lengths move every boundary around. */
		for (;;) {
			ret = write_seq(&p, wseq, max_len);
			if (ret == -ENOSPC)
				break;
			assert_int_equal(ret, 0);
			wseq++;
		}
		shm_ring_producer_publish(&p);
		while (rseq < wseq) {
			uint64_t off = c.pos & (SMALL_RING - 1);

			if (off + shm_ring_record_size(rec_len(rseq, max_len)) > SMALL_RING)
				straddles++;
			expect_seq(&c, rseq, max_len);
			rseq++;
		}
		expect_empty(&c);
		shm_ring_consumer_commit(&c);
	}
	assert_true(c.pos > 100 * SMALL_RING); /* many trips around the ring */
	assert_true(straddles > 100);
	detach_close(&p, &c, fd);
}

/* Two mappings in one process, interleaved batches of varying size. */
static void test_two_mappings(void **state)
{
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	const uint32_t max_len = 300;
	uint64_t wseq = 0, rseq = 0;
	int fd = make_ring(8192);

	attach_both(fd, &p, &c);
	assert_ptr_not_equal(p.data, c.data);
	for (uint32_t round = 0; rseq < 10000; round++) {
		uint32_t burst = mix(round) % 40u;
		uint32_t take = mix(round + 77) % 40u;

		for (uint32_t i = 0; i < burst && write_seq(&p, wseq, max_len) == 0; i++)
			wseq++;
		shm_ring_producer_publish(&p);
		for (uint32_t i = 0; i < take && rseq < wseq; i++)
			expect_seq(&c, rseq++, max_len);
		shm_ring_consumer_commit(&c);
	}
	detach_close(&p, &c, fd);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Child process: produce n records; exit status says what went wrong. */
static void child_produce(int fd, uint64_t n, uint32_t max_len)
{
	struct shm_ring_producer p;
	double deadline = now_s() + 60.0;

	alarm(90);
	if (shm_ring_producer_attach(&p, fd, err, sizeof(err)) < 0)
		_exit(10);
	for (uint64_t seq = 0; seq < n;) {
		int ret = write_seq(&p, seq, max_len);

		if (ret == 0) {
			seq++;
			if (seq % 16 == 0)
				shm_ring_producer_publish(&p);
			continue;
		}
		if (ret != -ENOSPC)
			_exit(11);
		shm_ring_producer_publish(&p);
		if (now_s() > deadline)
			_exit(12);
		sched_yield();
	}
	shm_ring_producer_publish(&p);
	shm_ring_producer_detach(&p);
	_exit(0);
}

static void test_fork_exchange(void **state)
{
	struct shm_ring_consumer c;
	const uint64_t n = 50000;
	const uint32_t max_len = 1000;
	uint64_t rseq = 0;
	double deadline = now_s() + 60.0;
	int fd = make_ring(1u << 14);
	int status = 0;
	pid_t pid;

	assert_int_equal(shm_ring_consumer_attach(&c, fd, err, sizeof(err)), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child_produce(fd, n, max_len);
	while (rseq < n && now_s() < deadline) {
		int ret = read1(&c, sizeof(rbuf));

		if (ret < 0)
			fail_msg("consumer: %s", err);
		if (ret == 0) {
			shm_ring_consumer_commit(&c);
			sched_yield();
			continue;
		}
		if (rtype != rec_type(rseq) || rlen != rec_len(rseq, max_len) ||
		    !rec_check(rbuf, rseq, rlen))
			fail_msg("record %llu differs", (unsigned long long)rseq);
		rseq++;
		if (rseq % 32 == 0)
			shm_ring_consumer_commit(&c);
	}
	shm_ring_consumer_commit(&c);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(rseq, n);
	expect_empty(&c);
	shm_ring_consumer_detach(&c);
	close(fd);
}

static void test_resume(void **state)
{
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	const uint32_t max_len = 200;
	int fd = make_ring(SMALL_RING);

	attach_both(fd, &p, &c);
	for (uint64_t s = 0; s < 10; s++)
		assert_int_equal(write_seq(&p, s, max_len), 0);
	shm_ring_producer_publish(&p);
	assert_int_equal(write_seq(&p, 1000, max_len), 0); /* never published: lost */
	for (uint64_t s = 0; s < 4; s++)
		expect_seq(&c, s, max_len);
	shm_ring_consumer_commit(&c);
	expect_seq(&c, 4, max_len); /* read, not committed: read again after restart */
	shm_ring_consumer_detach(&c);
	shm_ring_producer_detach(&p);

	/* Restarted loader and exporter pick up where the shared positions say. */
	attach_both(fd, &p, &c);
	for (uint64_t s = 10; s < 15; s++)
		assert_int_equal(write_seq(&p, s, max_len), 0);
	shm_ring_producer_publish(&p);
	for (uint64_t s = 4; s < 15; s++)
		expect_seq(&c, s, max_len);
	expect_empty(&c);
	shm_ring_consumer_commit(&c);
	assert_true(shm_ring_producer_fill(&p) == 0.0);
	detach_close(&p, &c, fd);
}

/* Publish records 0..n-1 and read `consumed` of them, leaving a poisonable consumer. */
static int setup_pair(struct shm_ring_producer *p, struct shm_ring_consumer *c, int n, int consumed)
{
	int fd = make_ring(SMALL_RING);

	attach_both(fd, p, c);
	for (int s = 0; s < n; s++)
		assert_int_equal(write_seq(p, (uint64_t)s, 100), 0);
	shm_ring_producer_publish(p);
	for (int s = 0; s < consumed; s++)
		expect_seq(c, (uint64_t)s, 100);
	shm_ring_consumer_commit(c);
	return fd;
}

/* The consumer refuses with `want`, mentions `why`, and stays refused. */
static void expect_poisoned(struct shm_ring_consumer *c, int want, const char *why)
{
	for (int i = 0; i < 3; i++) {
		assert_int_equal(read1(c, sizeof(rbuf)), want);
		assert_non_null(strstr(err, why));
	}
	assert_int_equal(shm_ring_consumer_pending(c), 0);
}

static void test_corrupt_producer_position(void **state)
{
	static const struct { int64_t delta; const char *why; } cases[] = {
		{ -8, "behind" }, { SMALL_RING + 8, "ahead" }, { 12, "misaligned" },
	};
	struct shm_ring_producer p;
	struct shm_ring_consumer c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = setup_pair(&p, &c, 4, 4);
		uint64_t good = p.published;

		poke_u64(fd, pos_off(SHM_RING_PAGE_PRODUCER), c.pos + (uint64_t)cases[i].delta);
		expect_poisoned(&c, -EPROTO, cases[i].why);
		/* Putting the position right does not help: no resync once poisoned. */
		poke_u64(fd, pos_off(SHM_RING_PAGE_PRODUCER), good);
		expect_poisoned(&c, -EPROTO, cases[i].why);
		detach_close(&p, &c, fd);
	}
}

static void corrupt_record(uint32_t length, uint32_t type, uint32_t bufsize, int want,
			   const char *why)
{
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	struct shm_ring_record_hdr rh = { .length = length, .type = type };
	int fd = setup_pair(&p, &c, 3, 1);

	/* Overwrite the header of record 1, the next one the consumer reads. */
	assert_int_equal(pwrite(fd, &rh, sizeof(rh), data_off(c.pos, SMALL_RING)), (ssize_t)sizeof(rh));
	memset(rbuf, 0x5a, sizeof(rbuf));
	assert_int_equal(read1(&c, bufsize), want);
	for (size_t i = 0; i < sizeof(rbuf); i++)
		assert_int_equal(rbuf[i], 0x5a); /* nothing copied */
	expect_poisoned(&c, want, why);
	detach_close(&p, &c, fd);
}

static void test_corrupt_records(void **state)
{
	uint32_t published_after = 2 * (uint32_t)shm_ring_record_size(100);

	corrupt_record(SHM_RING_MAX_RECORD + 1, 1, sizeof(rbuf), -EPROTO, "maximum");
	corrupt_record(0xffffffffu, 1, sizeof(rbuf), -EPROTO, "maximum");
	/* Fits the maximum but runs past what was published. */
	corrupt_record(published_after, 1, sizeof(rbuf), -EPROTO, "past the producer position");
	corrupt_record(4, 0, sizeof(rbuf), -EPROTO, "type 0");
	/* An honest record longer than the caller's buffer. */
	corrupt_record(50, 1, 49, -EMSGSIZE, "buffer");
}

static void test_corrupt_consumer_position(void **state)
{
	/*
	 * Consumer positions relative to what was published: ahead of it, more
	 * than a ring behind, misaligned.  With records written but unpublished
	 * two more lies: "ahead" into unpublished data, and exactly a ring behind
	 * what was published (plausible alone) but more than a ring behind what
	 * was written, which would let the next write overwrite unread records.
	 */
	static const struct { int unpublished; int64_t delta; } cases[] = {
		{ 0, 8 }, { 0, 4096 }, { 0, -(int64_t)SMALL_RING - 8 }, { 0, -5 }, { 0, INT64_MIN },
		{ 2, 8 }, { 2, -(int64_t)SMALL_RING },
	};
	struct shm_ring_producer p;
	struct shm_ring_consumer c;
	size_t size = SHM_RING_PAGE_DATA * page_size() + SMALL_RING;
	uint8_t *before = malloc(size);
	uint8_t *after = malloc(size);

	assert_non_null(before);
	assert_non_null(after);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = setup_pair(&p, &c, 5, 2);

		for (int u = 0; u < cases[i].unpublished; u++)
			assert_int_equal(write_seq(&p, 50 + (uint64_t)u, 100), 0);
		poke_u64(fd, pos_off(SHM_RING_PAGE_CONSUMER), p.published + (uint64_t)cases[i].delta);
		assert_int_equal(pread(fd, before, size, 0), (ssize_t)size);
		assert_int_equal(write_seq(&p, 77, 100), -EPROTO);
		assert_int_equal(shm_ring_producer_write(&p, 1, NULL, 0), -EPROTO);
		assert_true(shm_ring_producer_fill(&p) == 1.0);
		assert_int_equal(pread(fd, after, size, 0), (ssize_t)size);
		assert_memory_equal(before, after, size); /* nothing written anywhere */
		detach_close(&p, &c, fd);
	}
	free(before);
	free(after);
}

/* A memfd with a valid-looking header, `extra` bytes of wrong size, and `seals`. */
static int fake_ring(int allow_sealing, int seals, off_t extra, uint64_t magic, uint32_t version)
{
	struct shm_ring_header hdr = {
		.magic = magic, .version = version,
		.page_size = (uint32_t)page_size(), .data_size = SMALL_RING,
	};
	int fd = memfd_create("fake-ring", MFD_CLOEXEC | (allow_sealing ? MFD_ALLOW_SEALING : 0));

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(3 * page_size() + SMALL_RING) + extra), 0);
	assert_int_equal(pwrite(fd, &hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	if (seals != 0)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

static void expect_attach_refused(int fd, const char *why)
{
	struct shm_ring_producer p;
	struct shm_ring_consumer c;

	err[0] = '\0';
	assert_true(shm_ring_consumer_attach(&c, fd, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, why));
	assert_null(c.map);
	err[0] = '\0';
	assert_true(shm_ring_producer_attach(&p, fd, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, why));
	assert_null(p.map);
	close(fd);
}

static void test_attach_refuses(void **state)
{
	const int both = F_SEAL_SHRINK | F_SEAL_GROW;
	int fds[2];
	int fd;

	/* The fake is attachable when nothing is wrong with it. */
	fd = fake_ring(1, both, 0, GOOD_HDR);
	{
		struct shm_ring_consumer c;

		assert_int_equal(shm_ring_consumer_attach(&c, fd, err, sizeof(err)), 0);
		shm_ring_consumer_detach(&c);
		close(fd);
	}
	expect_attach_refused(fake_ring(0, 0, 0, GOOD_HDR), "sealed");
	expect_attach_refused(fake_ring(1, 0, 0, GOOD_HDR), "not sealed");
	expect_attach_refused(fake_ring(1, F_SEAL_SHRINK, 0, GOOD_HDR), "not sealed");
	expect_attach_refused(fake_ring(1, F_SEAL_GROW, 0, GOOD_HDR), "not sealed");
	expect_attach_refused(fake_ring(1, both, 4096, GOOD_HDR), "header says");
	expect_attach_refused(fake_ring(1, both, -2048, GOOD_HDR), "header says");
	expect_attach_refused(fake_ring(1, both, 0, SHM_RING_MAGIC ^ 1, SHM_RING_VERSION), "magic");
	expect_attach_refused(fake_ring(1, both, 0, SHM_RING_MAGIC, SHM_RING_VERSION + 1), "version");
	expect_attach_refused(fake_ring(1, both | F_SEAL_WRITE, 0, GOOD_HDR), "against writes");
	/* Something that is not a memfd at all. */
	assert_int_equal(pipe(fds), 0);
	close(fds[1]);
	expect_attach_refused(fds[0], "F_GET_SEALS");
	/* A misaligned stored consumer position (the exporter's own page) is refused too. */
	fd = make_ring(SMALL_RING);
	poke_u64(fd, pos_off(SHM_RING_PAGE_CONSUMER), 12);
	{
		struct shm_ring_consumer c;

		assert_int_equal(shm_ring_consumer_attach(&c, fd, err, sizeof(err)), -EPROTO);
		assert_non_null(strstr(err, "misaligned"));
	}
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_checks_size),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_first_lap_no_faults),
		cmocka_unit_test(test_producer_rejects_bad_args),
		cmocka_unit_test(test_publish_visibility),
		cmocka_unit_test(test_full_ring),
		cmocka_unit_test(test_wrap_around),
		cmocka_unit_test(test_two_mappings),
		cmocka_unit_test(test_fork_exchange),
		cmocka_unit_test(test_resume),
		cmocka_unit_test(test_corrupt_producer_position),
		cmocka_unit_test(test_corrupt_records),
		cmocka_unit_test(test_corrupt_consumer_position),
		cmocka_unit_test(test_attach_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
