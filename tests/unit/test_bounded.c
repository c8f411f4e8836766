/*
 * The exporter's bounds: the archive's retention, the timeline trimmed to the
 * window, the state file and profile a restart cannot take back moved aside
 * (bounded), and symbol names from a crafted ELF within their caps.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/mono_clock.h"
#include "exporter/exporter_loop.h"
#include "exporter/exporter_state.h"
#include "exporter/formats/archive.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_window.h"
#include "exporter/profile/timeline.h"
#include "exporter/symbols/elf_symbols.h"
#include "ipc/lowprof_fds.h"
#include "ipc/output_files.h"
#include "tests/unit/test_support.h"

#ifndef LONG_NAMES_ELF
#define LONG_NAMES_ELF "long_names.so"
#endif

static int tmpdir_fd(void)
{
	int fd = open(ts_tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static bool exists(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* LOWPROF_FD_OUTDIR back to what it was (saved: its dup, or -1 when closed). */
static void restore_outdir(int saved)
{
	if (saved >= 0) {
		dup2(saved, LOWPROF_FD_OUTDIR);
		close(saved);
	} else {
		close(LOWPROF_FD_OUTDIR);
	}
}

static void put_file(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static struct profile *small_profile(const char *fn)
{
	struct profile *p = profile_new();
	struct frame f = { .function = fn, .module = "/bin/x", .address = 0x401000,
			   .module_offset = 0x1000, .map_start = 0x400000, .map_end = 0x500000 };

	assert_int_equal(profile_add_sample(p, 1, 1, "x", &f, 1, false, 1, 1), 0);
	return p;
}

/* Retention: by age and by total size, the oldest removed first; the index
 * survives an archive_open (a restart). */
static void test_archive_retention(void **state)
{
	int dirfd = tmpdir_fd();
	struct archive *a = NULL;
	struct profile *p = small_profile("f");
	struct archive_stats st;
	char err[256];
	uint64_t t0 = 1700000000ULL * NSEC_PER_SEC, one;
	int i;

	(void)state;
	assert_int_equal(archive_open(dirfd, 100 * NSEC_PER_SEC, 1 << 20, &a, err, sizeof(err)), 0);
	assert_non_null(a);
	for (i = 0; i < 20; i++)
		assert_int_equal(archive_add(a, p, t0 + (uint64_t)i * 10 * NSEC_PER_SEC, err, sizeof(err)), 0);
	archive_get_stats(a, &st);
	/* 100 s of age at 10 s apart: the 11 newest (t0+90 .. t0+190) stay. */
	assert_int_equal(st.files, 11);
	assert_int_equal(st.written, 20);
	assert_int_equal(st.removed, 9);
	assert_false(exists(dirfd, "profile-20231114T221320.000Z.pb.gz")); /* t0 */
	assert_true(exists(dirfd, "profile-20231114T221630.000Z.pb.gz"));  /* t0 + 190 */
	one = st.bytes / st.files;
	archive_free(a);

	/* Reopened with a size bound of 3 files: the oldest go first. */
	assert_int_equal(archive_open(dirfd, 100 * NSEC_PER_SEC, one * 3 + one / 2, &a, err, sizeof(err)), 0);
	archive_prune(a, t0 + 190 * NSEC_PER_SEC);
	archive_get_stats(a, &st);
	assert_int_equal(st.files, 3);
	assert_int_equal(st.removed, 8);
	assert_true(st.bytes <= one * 3 + one / 2);
	assert_true(exists(dirfd, "profile-20231114T221630.000Z.pb.gz"));
	assert_false(exists(dirfd, "profile-20231114T221600.000Z.pb.gz")); /* t0 + 160 */
	archive_free(a);
	profile_free(p);
	close(dirfd);
}

static struct lowprof_timeline_entry tl_entry(uint64_t mono, uint32_t tier)
{
	struct lowprof_timeline_entry e;

	memset(&e, 0, sizeof(e));
	e.monotonic_ns = mono;
	e.interval_ns = NSEC_PER_SEC;
	e.online_cpus = 2;
	e.tier = tier;
	e.submitted = 10;
	e.agent_cpu_ns = NSEC_PER_MSEC;
	return e;
}

/* Entries older than the window leave the list, oldest first, into a summary. */
static void test_timeline_trim(void **state)
{
	struct timeline *tl = timeline_new(8);
	struct lowprof_timeline_entry e;
	char *js;
	uint64_t i;

	(void)state;
	for (i = 1; i <= 12; i++) {
		e = tl_entry(i * NSEC_PER_SEC, i % 2);
		assert_int_equal(timeline_add(tl, &e), 0);
	}
	/* The bound (8) summarised the 4 oldest already. */
	assert_int_equal(timeline_count(tl), 8);
	assert_int_equal(timeline_trimmed_count(tl), 4);
	timeline_trim(tl, 10 * NSEC_PER_SEC);
	assert_int_equal(timeline_count(tl), 3);
	assert_int_equal(timeline_trimmed_count(tl), 9);
	assert_int_equal(timeline_latest(tl, &e), 0);
	assert_int_equal(e.monotonic_ns, 12 * NSEC_PER_SEC);
	js = timeline_trimmed_json(tl, 0);
	assert_non_null(js);
	assert_non_null(strstr(js, "\"entries\": 9, \"from_t\": 1.000, \"to_t\": 9.000"));
	assert_non_null(strstr(js, "\"samples\": 90"));
	free(js);
	js = timeline_entries_json(tl, 0);
	assert_non_null(strstr(js, "{\"t\": 10.000"));
	assert_null(strstr(js, "{\"t\": 9.000"));
	free(js);
	timeline_free(tl);
}

/* At most EXPORTER_STATE_ASIDE_MAX copies, the newest as .aside.1. */
static void test_set_aside_bounded(void **state)
{
	int dirfd = tmpdir_fd(), i;
	char name[64], err[256], buf[16];
	ssize_t n;
	int fd;

	(void)state;
	for (i = 1; i <= EXPORTER_STATE_ASIDE_MAX + 2; i++) {
		snprintf(buf, sizeof(buf), "v%d", i);
		put_file(dirfd, "f", buf);
		assert_int_equal(exporter_state_set_aside(dirfd, "f", err, sizeof(err)), 0);
	}
	assert_false(exists(dirfd, "f"));
	for (i = 1; i <= EXPORTER_STATE_ASIDE_MAX; i++) {
		snprintf(name, sizeof(name), "f.aside.%d", i);
		assert_true(exists(dirfd, name));
	}
	snprintf(name, sizeof(name), "f.aside.%d", EXPORTER_STATE_ASIDE_MAX + 1);
	assert_false(exists(dirfd, name));
	fd = openat(dirfd, "f.aside.1", O_RDONLY);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "v6");
	close(dirfd);
}

/* A restart facing a malformed state file, then a profile.pb.gz it cannot
 * reload: both moved aside and counted, neither overwritten. */
static void test_restart_sets_aside(void **state)
{
	static struct exporter ex;
	struct exporter_state st;
	int dirfd = tmpdir_fd(), saved = dup(LOWPROF_FD_OUTDIR);
	const char *run = "0123456789abcdef0123456789abcdef";

	(void)state;
	assert_int_equal(dup2(dirfd, LOWPROF_FD_OUTDIR), LOWPROF_FD_OUTDIR);
	put_file(dirfd, OUTPUT_FILE_EXPORTER_STATE, "an older or damaged record, not ours to drop");
	memset(&ex, 0, sizeof(ex));
	memcpy(ex.opt.run_id, run, 33);
	exporter_restore(&ex);
	assert_true(ex.state_fd >= 0);
	assert_true(exists(dirfd, OUTPUT_FILE_EXPORTER_STATE ".aside.1"));
	assert_int_equal(ex.state.set_aside, 1);
	assert_int_equal(exporter_state_load(ex.state_fd, &st), 0);

	/* This run wrote once; then profile.pb.gz became something else. */
	st.flushes = 1;
	st.written_samples = 5;
	assert_int_equal(exporter_state_store(ex.state_fd, &st), 0);
	close(ex.state_fd);
	put_file(dirfd, OUTPUT_FILE_PPROF, "not a gzip'd profile");
	memset(&ex, 0, sizeof(ex));
	memcpy(ex.opt.run_id, run, 33);
	exporter_restore(&ex);
	assert_null(ex.restored);
	assert_false(exists(dirfd, OUTPUT_FILE_PPROF));
	assert_true(exists(dirfd, OUTPUT_FILE_PPROF ".aside.1"));
	assert_int_equal(ex.state.set_aside, 2);
	close(ex.state_fd);
	restore_outdir(saved);
	close(dirfd);
}

/* The index as the exporter writes it, for the interval ends given. */
static void index_text(const uint64_t *ends, size_t n, char *out, size_t len)
{
	char name[ARCHIVE_NAME_MAX];
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		archive_entry_name(ends[i], name);
		used += (size_t)snprintf(out + used, len - used, "%s %llu %llu\n", name,
					 (unsigned long long)ends[i], (unsigned long long)(100 + i));
	}
}

/* Every malformed kind is refused as a whole, with the line and the rule. */
static void test_archive_index_malformed(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"profile-20231114T221320.000Z.pb.gz 1700000000000000000 7", "line 1: the last line has no newline"},
		{"profile-20231114T221320.000Z.pb.gz 1700000000000000000\n", "line 1: END_NS is not"},
		{"profile-20231114T221320.000Z.pb.gz 1700000000000000000 7 8\n", "line 1: BYTES is not"},
		{"profile-20231114T221320.000Z.pb.gz 01700000000000000000 7\n", "line 1: END_NS is not"},
		{"profile-20231114T221320.000Z.pb.gz 1700000000000000000 -7\n", "line 1: BYTES is not"},
		{"profile-20231114T221320.000Z.pb.gz 1700000000000000000 18446744073709551616\n", "line 1: BYTES is not"},
		{"profile-20231114T221321.000Z.pb.gz 1700000000000000000 7\n", "line 1: the file name is not the archive name"},
		{"../etc/passwd 1700000000000000000 7\n", "line 1: the file name is not the archive name"},
		{"\n", "line 1: not \"NAME END_NS BYTES\""},
		{"profile-20231114T221320.000Z.pb.gz 1700000000000000000 7\r\n", "line 1: BYTES is not"},
	};
	struct archive_entry *e;
	char err[256], text[512], twice[1024];
	uint64_t ends[2] = {1700000000ULL * NSEC_PER_SEC, 1700000010ULL * NSEC_PER_SEC};
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e = (struct archive_entry *)1;
		n = 99;
		err[0] = '\0';
		assert_int_equal(archive_index_parse(bad[i].text, strlen(bad[i].text), &e, &n, err,
						     sizeof(err)),
				 -EINVAL);
		assert_null(e);
		assert_int_equal(n, 0);
		if (strncmp(err, bad[i].why, strlen(bad[i].why)) != 0)
			fail_msg("case %zu: \"%s\", expected \"%s...\"", i, err, bad[i].why);
	}
	/* Valid lines, then one going back in time: line 3 named. */
	index_text(ends, 2, text, sizeof(text));
	snprintf(twice, sizeof(twice), "%s%.*s", text, (int)(strchr(text, '\n') - text + 1), text);
	assert_int_equal(archive_index_parse(twice, strlen(twice), &e, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 3: END_NS does not increase");
	/* The valid one, and the empty one. */
	assert_int_equal(archive_index_parse(text, strlen(text), &e, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(e[1].end_ns, ends[1]);
	assert_int_equal(e[1].bytes, 101);
	free(e);
	assert_int_equal(archive_index_parse("", 0, &e, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	free(e);
}

/* A refused index is never overwritten and the files it lists stay, whatever
 * the archive writes meanwhile; once moved aside, the archive writes its own. */
static void test_archive_refused_index_kept(void **state)
{
	static const char damaged[] = "profile-20231114T221320.000Z.pb.gz 1700000000000000000 999999\n"
				      "garbage\n";
	struct archive *a = NULL;
	struct profile *p = small_profile("g");
	struct archive_stats st;
	char err[256], buf[256];
	uint64_t t = 1700000100ULL * NSEC_PER_SEC;
	int dirfd, fd;
	ssize_t n;

	(void)state;
	dirfd = tmpdir_fd();
	assert_int_equal(mkdirat(dirfd, "refused", 0700), 0);
	fd = openat(dirfd, "refused", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(dirfd);
	dirfd = fd;
	put_file(dirfd, ARCHIVE_INDEX_FILE, damaged);
	put_file(dirfd, "profile-20231114T221320.000Z.pb.gz", "an older interval");
	assert_int_equal(archive_open(dirfd, 1000 * NSEC_PER_SEC, 1 << 20, &a, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(a);
	assert_non_null(strstr(err, ARCHIVE_INDEX_FILE ": line 2: "));
	/* Files added and retention applied (the refused index listed 999999 bytes) ... */
	assert_int_equal(archive_add(a, p, t, err, sizeof(err)), 0);
	archive_prune(a, t + NSEC_PER_SEC);
	archive_get_stats(a, &st);
	assert_int_equal(st.files, 1);
	/* ... the refused index is as it was, and the file it lists is still there. */
	fd = openat(dirfd, ARCHIVE_INDEX_FILE, O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_int_equal(n, (ssize_t)strlen(damaged));
	assert_memory_equal(buf, damaged, strlen(damaged));
	assert_true(exists(dirfd, "profile-20231114T221320.000Z.pb.gz"));
	/* Moved aside: the archive's own index replaces it at the next change. */
	assert_int_equal(exporter_state_set_aside(dirfd, ARCHIVE_INDEX_FILE, err, sizeof(err)), 0);
	archive_index_moved(a);
	assert_int_equal(archive_add(a, p, t + 10 * NSEC_PER_SEC, err, sizeof(err)), 0);
	archive_free(a);
	assert_int_equal(archive_open(dirfd, 1000 * NSEC_PER_SEC, 1 << 20, &a, err, sizeof(err)), 0);
	archive_get_stats(a, &st);
	assert_int_equal(st.files, 2);
	assert_true(exists(dirfd, ARCHIVE_INDEX_FILE ".aside.1"));
	/* An interval ending before the newest (clock set back) is not archived. */
	assert_int_equal(archive_add(a, p, t - 100 * NSEC_PER_SEC, err, sizeof(err)), -EINVAL);
	archive_free(a);
	profile_free(p);
	close(dirfd);
}

/* The exporter's start with --archive and a damaged index: moved aside and
 * counted with the other files a restart could not take back. */
static void test_restart_archive_index_aside(void **state)
{
	static struct exporter ex;
	int top = tmpdir_fd(), saved = dup(LOWPROF_FD_OUTDIR), dirfd;

	(void)state;
	assert_int_equal(mkdirat(top, "restart", 0700), 0);
	dirfd = openat(top, "restart", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(top);
	assert_true(dirfd >= 0);
	assert_int_equal(dup2(dirfd, LOWPROF_FD_OUTDIR), LOWPROF_FD_OUTDIR);
	put_file(dirfd, ARCHIVE_INDEX_FILE, "not an index\n");
	memset(&ex, 0, sizeof(ex));
	ex.state_fd = -1;
	ex.job_running = OUTPUT_PACE_N;
	ex.opt.interval_s = 10;
	ex.opt.window.window_s = 60;
	ex.opt.window.archive = true;
	ex.opt.window.archive_max_age_s = 3600;
	ex.opt.window.archive_max_mb = 1;
	exporter_window_start(&ex);
	assert_non_null(ex.archive);
	assert_false(exists(dirfd, ARCHIVE_INDEX_FILE));
	assert_true(exists(dirfd, ARCHIVE_INDEX_FILE ".aside.1"));
	assert_int_equal(ex.state.set_aside, 1);
	archive_free(ex.archive);
	profile_window_free(ex.window);
	restore_outdir(saved);
	close(dirfd);
}

/* A library whose symbols have names of 64 KiB each: each kept name is cut
 * to ELF_SYMBOLS_NAME_MAX, and all of them together stay under the bound. */
static void test_long_symbol_names(void **state)
{
	struct elf_symbols *e = NULL;
	char err[256];
	int fd = open(LONG_NAMES_ELF, O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(elf_symbols_open_fd(fd, &e, err, sizeof(err)), 0);
	close(fd);
	assert_true(elf_symbols_count(e) >= 200);
	/* Uncapped: 300 names of 64 KiB from .symtab and .dynsym, ~39 MiB. */
	assert_true(elf_symbols_memory(e) < (size_t)2 << 20);
	elf_symbols_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_archive_retention),
		cmocka_unit_test(test_archive_index_malformed),
		cmocka_unit_test(test_archive_refused_index_kept),
		cmocka_unit_test(test_restart_archive_index_aside),
		cmocka_unit_test(test_timeline_trim),
		cmocka_unit_test(test_set_aside_bounded),
		cmocka_unit_test(test_restart_sets_aside),
		cmocka_unit_test(test_long_symbol_names),
	};

	return cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
}
