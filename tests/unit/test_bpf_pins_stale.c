/*
 * Which pin directories of earlier runs the next lowprof removes: those whose
 * supervisor is gone, told by pid and start time ("PID-START"), so that a
 * reused pid does not keep a dead run's pins (whose links would go on
 * sampling with nobody draining). A bare "PID" of an older lowprof stays only
 * while that pid runs `lowprof`. Run on a plain directory: the names decide.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/proc_stat.h"
#include "loader/bpf_pins.h"

static void make_run(const char *parent, const char *name)
{
	char path[512], file[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", parent, name);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(file, sizeof(file), "%s/link_cpu0", path);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
}

static int exists(const char *parent, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", parent, name);
	return stat(path, &st) == 0;
}

static void test_stale_runs(void **state)
{
	char top[] = "/tmp/lowprof-pins.XXXXXX", parent[64], mine[128], err[256];
	char alive[64], reused[64], bare[64];
	unsigned long long start;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(parent, sizeof(parent), "%s/lowprof", top);
	assert_int_equal(mkdir(parent, 0700), 0);
	assert_int_equal(proc_stat_field(getpid(), PROC_STAT_STARTTIME, &start), 0);
	/* A live run (this very process), the same pid with another start time
	 * (the pid reused), a bare pid that runs no lowprof, a dead pid. */
	snprintf(alive, sizeof(alive), "%d-%llu", (int)getpid(), start);
	snprintf(reused, sizeof(reused), "%d-%llu", (int)getpid(), start + 1);
	snprintf(bare, sizeof(bare), "%d", (int)getpid());
	make_run(parent, alive);
	make_run(parent, reused);
	make_run(parent, bare);
	make_run(parent, "999999999-1");
	make_run(parent, "junk");
	snprintf(mine, sizeof(mine), "%s/1-1", parent);

	assert_int_equal(bpf_pins_prepare(mine, err, sizeof(err)), 4);
	assert_true(exists(parent, alive));
	assert_false(exists(parent, reused));
	assert_false(exists(parent, bare));
	assert_false(exists(parent, "999999999-1"));
	assert_false(exists(parent, "junk"));
	assert_true(exists(parent, "1-1"));

	assert_int_equal(bpf_pins_remove_dir(mine), 0);
	{
		char path[160];

		snprintf(path, sizeof(path), "%s/%s", parent, alive);
		assert_int_equal(bpf_pins_remove_dir(path), 0);
	}
	assert_int_equal(rmdir(parent), 0);
	assert_int_equal(rmdir(top), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
