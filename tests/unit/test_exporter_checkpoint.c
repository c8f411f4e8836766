/*
 * The checkpoint of the interval being collected: when one is due, and which
 * one a restarted exporter takes back (a real pprof in a real memfd on the
 * exporter's checkpoint fd, as the supervisor hands it over): the tail of the
 * window file only, not a write cut short, nothing once cleared.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporter/exporter_checkpoint.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/profile/profile.h"
#include "ipc/lowprof_fds.h"

#define S(x) ((uint64_t)(x) * NSEC_PER_SEC)
#define T0 S(1700000000)

static void test_due(void **state)
{
	const uint64_t gap = EXPORTER_CHECKPOINT_NS;
	struct exporter_checkpoint c = {0};

	(void)state;
	assert_false(exporter_checkpoint_due(&c, T0, 0, S(1), gap));  /* nothing to keep */
	assert_true(exporter_checkpoint_due(&c, T0, 5, S(1), gap));   /* the first at once */
	c.interval_start_ns = T0;
	c.samples = 5;
	c.written_mono_ns = S(1);
	assert_false(exporter_checkpoint_due(&c, T0, 5, S(9), gap));  /* nothing new */
	assert_false(exporter_checkpoint_due(&c, T0, 6, S(2), gap));  /* too soon */
	assert_true(exporter_checkpoint_due(&c, T0, 6, S(3), gap));
	/* A new interval with as many samples is new all the same. */
	assert_true(exporter_checkpoint_due(&c, T0 + S(10), 5, S(3), gap));
	/* A costly checkpoint's longer gap holds the next one back. */
	assert_false(exporter_checkpoint_due(&c, T0, 6, S(10), S(10)));
	assert_true(exporter_checkpoint_due(&c, T0, 6, S(11), S(10)));
}

/* The gap follows the last checkpoint's cost against the writes' allowance. */
static void test_gap(void **state)
{
	const uint64_t ms = NSEC_PER_MSEC, slot = S(1);
	uint64_t g;

	(void)state;
	/* Not measured yet, or no bound on the writes: the shortest gap. */
	assert_int_equal(exporter_checkpoint_gap_ns(0, 7 * ms, slot), EXPORTER_CHECKPOINT_NS);
	assert_int_equal(exporter_checkpoint_gap_ns(19 * ms, UINT64_MAX, slot), EXPORTER_CHECKPOINT_NS);
	/* Cheap (an interval at rest): 0.3 ms against 7.5 ms a second. */
	assert_int_equal(exporter_checkpoint_gap_ns(300000, 7500000, slot), EXPORTER_CHECKPOINT_NS);
	/* 20 000 stacks (19 ms) at the default budget on 2 CPUs (7.5 ms a
	 * second): a quarter of the allowance, 1.875 ms a second, so ~10 s. */
	g = exporter_checkpoint_gap_ns(19 * ms, 7500000, slot);
	assert_true(g >= S(10) && g <= S(10) + 200 * ms);
	assert_true((double)(19 * ms) / (double)g <= 7.5e6 / 1e9 / EXPORTER_CHECKPOINT_SHARE + 1e-9);
	/* The allowance is per slot: a 2-s control interval halves the rate. */
	assert_true(exporter_checkpoint_gap_ns(19 * ms, 7500000, S(2)) >= 2 * g - 1);
	/* Never more than a minute apart, however costly; no overflow for an
	 * hour-long control interval. */
	assert_int_equal(exporter_checkpoint_gap_ns(S(1), 50000, slot), EXPORTER_CHECKPOINT_MAX_NS);
	assert_int_equal(exporter_checkpoint_gap_ns(S(1), 1, S(3600)), EXPORTER_CHECKPOINT_MAX_NS);
}

static void test_json(void **state)
{
	struct exporter_checkpoint c = {.written = 3, .failures = 1, .cost_ns = 1500000,
					.max_cost_ns = 2500000, .cpu_ns = 5000000, .gap_ns = S(8)};
	char buf[192], tiny[16];

	(void)state;
	assert_true(exporter_checkpoint_json(&c, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "{\"writes\": 3, \"failures\": 1, \"cpu_ms\": 5.000, "
				 "\"cost_ms\": 1.500, "
				 "\"max_cost_ms\": 2.500, \"every_s\": 8.0}");
	assert_int_equal(exporter_checkpoint_json(&c, tiny, sizeof(tiny)), -1);
}

/* A checkpoint covering [start, end) with n samples, written as the exporter does. */
static void put_checkpoint(uint64_t start, uint64_t end, unsigned n)
{
	struct frame f = {.function = "tail_fn", .module = "/bin/app", .address = 0x401000,
			  .module_offset = 0x1000, .map_start = 0x400000, .map_end = 0x500000};
	struct profile *p = profile_new();
	char err[256];

	assert_non_null(p);
	assert_int_equal(profile_add_sample(p, 7, 7, "app", &f, 1, false, n, n), 0);
	profile_set_time(p, start, end);
	assert_int_equal(pprof_write_held(LOWPROF_FD_CHECKPOINT, p, err, sizeof(err)), 0);
	profile_free(p);
}

static void test_reload_rules(void **state)
{
	uint8_t old_bytes[4096], new_bytes[4096];
	ssize_t old_len, new_len;
	struct profile_totals t;
	struct profile *p;
	struct stat st;
	bool refused;
	int fd;

	(void)state;
	fd = memfd_create("test-checkpoint", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, LOWPROF_FD_CHECKPOINT), LOWPROF_FD_CHECKPOINT);
	close(fd);

	assert_null(exporter_checkpoint_reload(T0, T0, T0 + S(60), &refused)); /* none */
	assert_false(refused);
	/* The tail of a window file that ends at T0 + 20. */
	put_checkpoint(T0 + S(20), T0 + S(25), 40);
	p = exporter_checkpoint_reload(T0 + S(20), T0, T0 + S(60), &refused);
	assert_non_null(p);
	profile_get_totals(p, &t);
	assert_int_equal(t.samples, 40);
	profile_free(p);
	/* Begun before the window file ends: the file holds part of it already. */
	assert_null(exporter_checkpoint_reload(T0 + S(21), T0, T0 + S(60), &refused));
	/* Of an earlier run, or ending in the future: not this run's. */
	assert_null(exporter_checkpoint_reload(T0, T0 + S(30), T0 + S(60), &refused));
	assert_null(exporter_checkpoint_reload(T0, T0, T0 + S(24), &refused));
	assert_false(refused);

	/* A later, smaller checkpoint replaces it whole: nothing of the old one
	 * is left behind it. */
	put_checkpoint(T0 + S(20), T0 + S(28), 3);
	p = exporter_checkpoint_reload(T0 + S(20), T0, T0 + S(60), &refused);
	assert_non_null(p);
	profile_get_totals(p, &t);
	assert_int_equal(t.samples, 3);
	profile_free(p);

	/* A write the exporter's death cut short: the new one's head over the
	 * old one's tail. Refused, not taken for either. */
	old_len = pread(LOWPROF_FD_CHECKPOINT, old_bytes, sizeof(old_bytes), 0);
	assert_true(old_len > 16 && (size_t)old_len < sizeof(old_bytes));
	put_checkpoint(T0 + S(20), T0 + S(29), 7);
	new_len = pread(LOWPROF_FD_CHECKPOINT, new_bytes, sizeof(new_bytes), 0);
	assert_true(new_len > 16 && (size_t)new_len < sizeof(new_bytes));
	assert_int_equal(ftruncate(LOWPROF_FD_CHECKPOINT, 0), 0);
	assert_int_equal(pwrite(LOWPROF_FD_CHECKPOINT, old_bytes, (size_t)old_len, 0), old_len);
	assert_int_equal(pwrite(LOWPROF_FD_CHECKPOINT, new_bytes, (size_t)new_len / 2, 0),
			 new_len / 2);
	assert_null(exporter_checkpoint_reload(T0 + S(20), T0, T0 + S(60), &refused));
	assert_true(refused);
	/* Not a pprof at all: refused. */
	assert_int_equal(ftruncate(LOWPROF_FD_CHECKPOINT, 0), 0);
	assert_int_equal(pwrite(LOWPROF_FD_CHECKPOINT, "\x1f\x8bjunk", 6, 0), 6);
	assert_null(exporter_checkpoint_reload(T0, T0, T0 + S(60), &refused));
	assert_true(refused);
	/* Cleared: none, and clearing none is no error. */
	exporter_checkpoint_clear();
	assert_int_equal(fstat(LOWPROF_FD_CHECKPOINT, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_null(exporter_checkpoint_reload(T0, T0, T0 + S(60), &refused));
	assert_false(refused);
	exporter_checkpoint_clear();
	close(LOWPROF_FD_CHECKPOINT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_gap),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_reload_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
