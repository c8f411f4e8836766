/*
 * pprof_reader_ and the exporter's restart state: our own profile.pb.gz read
 * back gives the same folded stacks and totals; corrupted copies (truncated,
 * bytes flipped, garbage) are refused or decoded without a crash; the
 * supervisor's "restarts" message is parsed strictly; the state record
 * round-trips and a damaged one is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exporter/exporter_loop.h"
#include "exporter/exporter_state.h"
#include "exporter/formats/pprof_reader.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/profile/profile.h"
#include "test_support.h"

static struct profile *sample_profile(void)
{
	struct profile *p = profile_new();
	struct frame f[3];

	assert_non_null(p);
	memset(f, 0, sizeof(f));
	f[0].function = "leaf";
	f[0].module = "/usr/bin/app";
	f[0].build_id = "abcdef0123";
	f[0].address = 0x401234;
	f[0].module_offset = 0x1234;
	f[0].map_start = 0x400000;
	f[0].map_end = 0x500000;
	f[0].symbolized = true;
	f[1].function = "main";
	f[1].module = "/usr/bin/app";
	f[1].build_id = "abcdef0123";
	f[1].address = 0x401000;
	f[1].module_offset = 0x1000;
	f[1].map_start = 0x400000;
	f[1].map_end = 0x500000;
	f[1].symbolized = true;
	f[2].function = "do_syscall_64";
	f[2].module = "[kernel.kallsyms]";
	f[2].address = 0xffffffff81000000ULL;
	f[2].kernel = true;
	f[2].symbolized = true;
	assert_int_equal(profile_add_sample(p, 42, 43, "app", f, 2, false, 5, 5000), 0);
	assert_int_equal(profile_add_sample(p, 42, 44, "app", &f[0], 1, true, 2, 2000), 0);
	assert_int_equal(profile_add_sample(p, 7, 7, "other", &f[2], 1, false, 1, 1000), 0);
	profile_set_time(p, 1000000000ULL, 3000000000ULL);
	return p;
}

static uint8_t *pprof_bytes(const struct profile *p, size_t *len)
{
	char *buf = NULL, err[256];
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(pprof_write(p, f, err, sizeof(err)), 0);
	fclose(f);
	return (uint8_t *)buf;
}

static void test_round_trip(void **state)
{
	struct profile *p = sample_profile(), *q = NULL;
	struct profile_totals a, b;
	uint64_t start, end;
	size_t len;
	uint8_t *gz = pprof_bytes(p, &len);
	char err[256] = "", *fa, *fb;
	struct frame f;

	(void)state;
	assert_int_equal(pprof_reader_load(gz, len, &q, err, sizeof(err)), 0);
	profile_get_totals(p, &a);
	profile_get_totals(q, &b);
	assert_int_equal(a.samples, b.samples);
	assert_int_equal(a.cpu_ns, b.cpu_ns);
	assert_int_equal(a.stacks, b.stacks);
	fa = ts_folded_text(p);
	fb = ts_folded_text(q);
	assert_string_equal(fa, fb);
	profile_get_time(q, &start, &end);
	assert_int_equal(start, 1000000000ULL);
	assert_int_equal(end, 3000000000ULL);
	/* A new sample of a known stack aggregates into the reloaded one. */
	memset(&f, 0, sizeof(f));
	f.function = "do_syscall_64";
	f.module = "[kernel.kallsyms]";
	f.address = 0xffffffff81000000ULL;
	f.kernel = true;
	assert_int_equal(profile_add_sample(q, 7, 7, "other", &f, 1, false, 1, 1000), 0);
	profile_get_totals(q, &b);
	assert_int_equal(b.stacks, a.stacks);
	free(fa);
	free(fb);
	free(gz);
	profile_free(p);
	profile_free(q);
}

/* Stacks of processes gone (folded by comm) have no pid label and come back
 * as such; the idle task's pid 0 stays 0. */
static void test_round_trip_gone(void **state)
{
	struct profile *p = profile_new(), *q = NULL;
	struct profile_totals a, b;
	struct frame f = { .function = "work", .module = "/usr/bin/app", .address = 0x401000,
			   .module_offset = 0x1000, .map_start = 0x400000, .map_end = 0x500000 };
	char err[256] = "";
	size_t len, i, gone = 0, idle = 0;
	uint8_t *gz;

	(void)state;
	assert_int_equal(profile_add_sample(p, PROFILE_PID_GONE, 0, "sh", &f, 1, false, 3, 3), 0);
	assert_int_equal(profile_add_sample(p, 0, 0, "swapper/0", &f, 1, false, 1, 1), 0);
	assert_int_equal(profile_add_sample(p, 9, 9, "sh", &f, 1, false, 1, 1), 0);
	gz = pprof_bytes(p, &len);
	assert_int_equal(pprof_reader_load(gz, len, &q, err, sizeof(err)), 0);
	profile_get_totals(p, &a);
	profile_get_totals(q, &b);
	assert_int_equal(a.pids, 2);
	assert_int_equal(b.pids, 2);
	assert_int_equal(b.gone_samples, 3);
	assert_int_equal(b.gone_stacks, 1);
	for (i = 0; i < profile_stack_count(q); i++) {
		const struct profile_stack *s = profile_stack_at(q, i);

		gone += s->pid == PROFILE_PID_GONE ? s->count : 0;
		idle += s->pid == 0 ? s->count : 0;
	}
	assert_int_equal(gone, 3);
	assert_int_equal(idle, 1);
	free(gz);
	profile_free(p);
	profile_free(q);
}

static void test_corrupt(void **state)
{
	struct profile *p = sample_profile(), *q;
	size_t len, i, refused = 0;
	uint8_t *gz = pprof_bytes(p, &len), *copy = malloc(len);
	static const uint8_t garbage[] = "\x1f\x8b\x08\x00garbage";
	char err[256];

	(void)state;
	assert_non_null(copy);
	/* Every truncation is refused, with a reason. */
	for (i = 0; i < len; i++) {
		q = NULL;
		err[0] = '\0';
		assert_int_not_equal(pprof_reader_load(gz, i, &q, err, sizeof(err)), 0);
		assert_null(q);
		assert_true(err[0] != '\0');
	}
	/* Flipped bytes: refused (gzip CRC, protobuf, ranges), never a crash. */
	for (i = 0; i < len; i++) {
		memcpy(copy, gz, len);
		copy[i] ^= 0x5a;
		q = NULL;
		if (pprof_reader_load(copy, len, &q, err, sizeof(err)) != 0)
			refused++;
		profile_free(q);
	}
	assert_true(refused > len / 2);
	assert_int_not_equal(pprof_reader_load(garbage, sizeof(garbage) - 1, &q, err, sizeof(err)), 0);
	assert_int_equal(pprof_reader_load_file(AT_FDCWD, "/nonexistent/profile.pb.gz", &q, err,
						sizeof(err)), -ENOENT);
	free(copy);
	free(gz);
	profile_free(p);
}

static void test_restarts_message(void **state)
{
	unsigned r[EXPORTER_RESTARTS_N] = {9, 9, 9};
	static const char *const bad[] = {
		"restarts loader=1 controller=2", "restarts loader=1 controller=2 exporter=",
		"restarts loader=1 controller=2 exporter=3 x=1", "restarts  loader=1 controller=2 exporter=3",
		"restarts loader=-1 controller=2 exporter=3", "restarts loader=99999999999 controller=2 exporter=3",
		"restart loader=1 controller=2 exporter=3", "restarts exporter=3 loader=1 controller=2", "",
	};
	size_t i;

	(void)state;
	assert_int_equal(exporter_parse_restarts("restarts loader=1 controller=0 exporter=12\n", 43, r), 0);
	assert_int_equal(r[EXPORTER_RESTARTS_LOADER], 1);
	assert_int_equal(r[EXPORTER_RESTARTS_CONTROLLER], 0);
	assert_int_equal(r[EXPORTER_RESTARTS_EXPORTER], 12);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(exporter_parse_restarts(bad[i], strlen(bad[i]), r), -1);
		assert_int_equal(r[EXPORTER_RESTARTS_EXPORTER], 12); /* untouched */
	}
	{
		/* The audit log's counters, the same rules. */
		unsigned a[EXPORTER_AUDIT_N] = {7, 7, 7, 7};

		assert_int_equal(exporter_parse_audit("audit records=10 suppressed=2 rotations=1 reopens=3", 51, a), 0);
		assert_int_equal(a[EXPORTER_AUDIT_RECORDS], 10);
		assert_int_equal(a[EXPORTER_AUDIT_SUPPRESSED], 2);
		assert_int_equal(a[EXPORTER_AUDIT_ROTATIONS], 1);
		assert_int_equal(a[EXPORTER_AUDIT_REOPENS], 3);
		assert_int_equal(exporter_parse_audit("audit records=10 suppressed=2 rotations=1", 41, a), -1);
		assert_int_equal(exporter_parse_audit("restarts loader=1 controller=0 exporter=12", 42, a), -1);
		assert_int_equal(exporter_parse_restarts("audit records=10 suppressed=2 rotations=1 reopens=3", 51, r), -1);
		assert_int_equal(a[EXPORTER_AUDIT_RECORDS], 10);
	}
	{
		/* The budget the writes are paced within: 1.5% as 15000 ppm. */
		unsigned p[EXPORTER_PACE_N];

		assert_int_equal(exporter_parse_pace("pace budget_ppm=15000 control_ms=1000\n", 38, p), 0);
		assert_int_equal(p[EXPORTER_PACE_BUDGET_PPM], 15000);
		assert_int_equal(p[EXPORTER_PACE_CONTROL_MS], 1000);
		assert_int_equal(exporter_parse_pace("pace budget_ppm=1.5 control_ms=1000", 35, p), -1);
		assert_int_equal(exporter_parse_pace("pace control_ms=1000 budget_ppm=15000", 37, p), -1);
	}
	/* A reload's restart: the word alone. */
	assert_true(exporter_is_restart_message("restart", 7));
	assert_true(exporter_is_restart_message("restart\n", 8));
	assert_false(exporter_is_restart_message("restarts", 8));
	assert_false(exporter_is_restart_message("restarts loader=1 controller=0 exporter=0", 41));
	assert_false(exporter_is_restart_message("restar", 6));
}

static void test_state_file(void **state)
{
	char dir[] = "/tmp/lowprof-state-test.XXXXXX";
	struct exporter_state a, b;
	unsigned char byte;
	int dfd, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	fd = exporter_state_open(dfd);
	assert_true(fd >= 0);
	assert_int_equal(exporter_state_load(fd, &b), -ENOENT);
	memset(&a, 0, sizeof(a));
	snprintf(a.run_id, sizeof(a.run_id), "0123456789abcdef0123456789abcdef");
	a.start_unix_ns = 11;
	a.pos_before = 100;
	a.pos_after = 200;
	a.accepted_before = 5;
	a.accepted_after = 9;
	a.lost_total = 3;
	a.flushes = 2;
	assert_int_equal(exporter_state_store(fd, &a), 0);
	assert_int_equal(exporter_state_load(fd, &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	/* One byte changed anywhere: refused. */
	assert_int_equal(pread(fd, &byte, 1, 50), 1);
	byte ^= 1;
	assert_int_equal(pwrite(fd, &byte, 1, 50), 1);
	assert_int_equal(exporter_state_load(fd, &b), -EINVAL);
	close(fd);
	unlinkat(dfd, EXPORTER_STATE_FILE, 0);
	close(dfd);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_gone),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_restarts_message),
		cmocka_unit_test(test_state_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
