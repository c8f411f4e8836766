/*
 * The checkpoint of the interval being collected: when one is due, and which
 * one a restarted exporter takes back (a real pprof file in a real directory
 * on the exporter's output-directory fd).
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
#include <sys/stat.h>
#include <unistd.h>

#include "exporter/exporter_checkpoint.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/profile/profile.h"
#include "ipc/lowprof_fds.h"
#include "ipc/output_files.h"

#define S(x) ((uint64_t)(x) * NSEC_PER_SEC)
#define T0 S(1700000000)

static void test_due(void **state)
{
	struct exporter_checkpoint c = {0};

	(void)state;
	assert_false(exporter_checkpoint_due(&c, T0, 0, S(1)));  /* nothing to keep */
	assert_true(exporter_checkpoint_due(&c, T0, 5, S(1)));   /* the first at once */
	c.interval_start_ns = T0;
	c.samples = 5;
	c.written_mono_ns = S(1);
	assert_false(exporter_checkpoint_due(&c, T0, 5, S(9)));  /* nothing new */
	assert_false(exporter_checkpoint_due(&c, T0, 6, S(2)));  /* too soon */
	assert_true(exporter_checkpoint_due(&c, T0, 6, S(3)));
	/* A new interval with as many samples is new all the same. */
	assert_true(exporter_checkpoint_due(&c, T0 + S(10), 5, S(3)));
}

/* A checkpoint covering [start, end) with n samples, in the output directory. */
static void put_checkpoint(uint64_t start, uint64_t end, unsigned n)
{
	struct frame f = {.function = "tail_fn", .module = "/bin/app", .address = 0x401000,
			  .module_offset = 0x1000, .map_start = 0x400000, .map_end = 0x500000};
	struct profile *p = profile_new();
	char err[256];

	assert_non_null(p);
	assert_int_equal(profile_add_sample(p, 7, 7, "app", &f, 1, false, n, n), 0);
	profile_set_time(p, start, end);
	assert_int_equal(pprof_write_file(LOWPROF_FD_OUTDIR, OUTPUT_FILE_CHECKPOINT, p, err,
					  sizeof(err)), 0);
	profile_free(p);
}

static void test_reload_rules(void **state)
{
	char dir[] = "/tmp/lowprof-ckpt.XXXXXX";
	struct profile_totals t;
	struct profile *p;
	bool refused;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, LOWPROF_FD_OUTDIR), LOWPROF_FD_OUTDIR);
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
	/* Not a pprof: refused, to be moved aside. */
	fd = openat(LOWPROF_FD_OUTDIR, OUTPUT_FILE_CHECKPOINT, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\x1f\x8bjunk", 6), 6);
	close(fd);
	assert_null(exporter_checkpoint_reload(T0, T0, T0 + S(60), &refused));
	assert_true(refused);
	/* Removed, and removing none is no error. */
	exporter_checkpoint_remove();
	assert_int_equal(faccessat(LOWPROF_FD_OUTDIR, OUTPUT_FILE_CHECKPOINT, F_OK, 0), -1);
	exporter_checkpoint_remove();
	close(LOWPROF_FD_OUTDIR);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_reload_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
