/*
 * Golden outputs: a recorded sample stream (tests/data/golden/stream.bin, in
 * the shared ring's record format) goes through the exporter's real path --
 * the shared ring, exporter_read_batch (decode, symbolizer over fixture
 * /proc and kallsyms files, ingest into the profile and the timeline), then
 * the writers -- and every output must equal, byte for byte, the files
 * committed under tests/data/golden/expected/: the pprof protobuf (as
 * gunzipped from profile.pb.gz, whose gzip header is checked to be fixed),
 * profile.folded, flamegraph.svg, summary.json and the OTLP
 * ExportProfilesServiceRequest body.
 *
 * Nothing depends on the host: the mapped files exist nowhere (frames are
 * module+0xOFFSET), and the times, duration, host name and version are
 * fixed here. LOWPROF_UPDATE_GOLDEN=1 rewrites the expected files instead
 * (tests/data/golden/README.md).
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
#include <zlib.h>

#include "common/mono_clock.h"
#include "exporter/exporter_loop.h"
#include "exporter/profile/profile_window.h"
#include "exporter/otlp/otlp_encoder.h"
#include "exporter/formats/outputs.h"
#include "exporter/otlp/process_info.h"
#include "exporter/symbols/stack_cache.h"
#include "exporter/symbols/proc_source.h"
#include "exporter/profile/profile.h"
#include "exporter/symbols/symbolizer.h"
#include "exporter/profile/timeline.h"
#include "ipc/output_files.h"
#include "ipc/shm_ring.h"
#include "test_support.h"

#define GOLDEN_DIR LOWPROF_SOURCE_DIR "/tests/data/golden"
#define EXPECTED_DIR GOLDEN_DIR "/expected"

/* The run's fixed clock: what exporter_write would take from the host. */
#define GOLDEN_START_UNIX_NS 1717171717000000000ULL
#define GOLDEN_END_UNIX_NS (GOLDEN_START_UNIX_NS + 3250000000ULL)
#define GOLDEN_START_MONO_NS 999000000000ULL
#define GOLDEN_DURATION_S 3.25
#define GOLDEN_HZ 99

static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n;

	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	*len = 0;
	for (;;) {
		if (*len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = fread(buf + *len, 1, cap - *len, f);
		if (n == 0)
			break;
		*len += n;
	}
	fclose(f);
	return buf;
}

/* The stream into a real ring, record by record, as the loader's drain does. */
static int golden_ring(void)
{
	struct shm_ring_producer prod;
	const struct shm_ring_record_hdr *h;
	char err[256];
	size_t len, off = 0;
	uint8_t *stream = read_all(GOLDEN_DIR "/stream.bin", &len);
	int memfd, n = 0;

	if (shm_ring_create(4u << 20, &memfd, err, sizeof(err)) != 0 ||
	    shm_ring_producer_attach(&prod, memfd, err, sizeof(err)) != 0)
		fail_msg("ring: %s", err);
	while (off < len) {
		assert_true(len - off >= sizeof(*h));
		h = (const void *)(stream + off);
		assert_true(shm_ring_record_size(h->length) <= len - off);
		assert_int_equal(shm_ring_producer_write(&prod, h->type, h + 1, h->length), 0);
		off += shm_ring_record_size(h->length);
		n++;
	}
	assert_true(n > 40);
	shm_ring_producer_publish(&prod);
	shm_ring_producer_detach(&prod);
	free(stream);
	return memfd;
}

static void golden_check(const char *name, const void *got, size_t len)
{
	char path[4096];
	size_t want_len;
	void *want;

	snprintf(path, sizeof(path), "%s/%s", EXPECTED_DIR, name);
	if (getenv("LOWPROF_UPDATE_GOLDEN") != NULL && strcmp(getenv("LOWPROF_UPDATE_GOLDEN"), "1") == 0) {
		ts_write_file(path, got, len);
		print_message("golden: rewrote %s\n", name);
		return;
	}
	want = read_all(path, &want_len);
	if (want_len != len || memcmp(want, got, len) != 0) {
		/* Kept past the test's temporary directory, for a diff. */
		snprintf(path, sizeof(path), "/tmp/lowprof_golden_actual_%s", name);
		ts_write_file(path, got, len);
		fail_msg("%s differs from %s/%s (%zu bytes, want %zu): the output is in %s", name,
			 EXPECTED_DIR, name, len, want_len, path);
	}
	free(want);
}

/* profile.pb.gz: a gzip header with no time, no name and OS "unix", then the protobuf. */
static void golden_check_pprof(const char *path)
{
	size_t gzlen, cap = 1 << 20;
	uint8_t *gz = read_all(path, &gzlen), *pb = malloc(cap);
	z_stream zs;

	assert_non_null(pb);
	assert_true(gzlen > 10);
	assert_int_equal(gz[0], 0x1f);
	assert_int_equal(gz[1], 0x8b);
	assert_int_equal(gz[2], 8);  /* deflate */
	assert_int_equal(gz[3], 0);  /* no flags: no name, no comment, no extra */
	assert_int_equal(gz[4] | gz[5] | gz[6] | gz[7], 0); /* MTIME 0 */
	assert_int_equal(gz[9], 3);  /* unix */
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = gz;
	zs.avail_in = (uInt)gzlen;
	zs.next_out = pb;
	zs.avail_out = (uInt)cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	golden_check("profile.pb", pb, zs.total_out);
	inflateEnd(&zs);
	free(gz);
	free(pb);
}

static void golden_check_file(const char *name)
{
	char path[TS_TMPDIR_MAX + 64];
	size_t len;
	void *buf;

	snprintf(path, sizeof(path), "%s/%s", ts_tmpdir, name);
	buf = read_all(path, &len);
	golden_check(name, buf, len);
	free(buf);
}

/* OTLP_ENCODER_PROFILE_IDS_LEN bytes, NUL included. */
static const char golden_profile_ids[] = "golden:profile:0golden:profile:";
_Static_assert(sizeof(golden_profile_ids) == OTLP_ENCODER_PROFILE_IDS_LEN, "two ids of 16 bytes");

static void test_outputs_golden(void **state)
{
	struct exporter ex;
	struct outputs_context ctx;
	struct otlp_client_stats st;
	struct otlp_encoder_meta meta;
	struct lowprof_timeline_entry te;
	struct process_info_cache *procs;
	char err[256], export_json[256], path[TS_TMPDIR_MAX + 64];
	uint8_t *body = NULL;
	size_t body_len = 0;
	int memfd, dirfd, n, total = 0;

	(void)state;
	memset(&ex, 0, sizeof(ex));
	ex.state_fd = -1;
	ex.job_running = OUTPUT_PACE_N;
	ex.opt.frequency_hz = GOLDEN_HZ;
	memfd = golden_ring();
	if (shm_ring_consumer_attach(&ex.ring, memfd, err, sizeof(err)) != 0)
		fail_msg("consumer: %s", err);
	ex.src = proc_source_direct_new(GOLDEN_DIR "/proc", "", GOLDEN_DIR "/kallsyms");
	assert_non_null(ex.src);
	ex.sym = symbolizer_new(ex.src, err, sizeof(err));
	/* As in a real run: stacks seen before come from the cache, same bytes out. */
	ex.stacks = stack_cache_new(STACK_CACHE_DEFAULT_SLOTS);
	if (ex.sym == NULL || ex.stacks == NULL)
		fail_msg("symbolizer: %s", err);
	/* Samples go to the window's interval; the files are its merge. */
	ex.window = profile_window_new(600 * NSEC_PER_SEC, 10 * NSEC_PER_SEC, 0,
				       GOLDEN_START_UNIX_NS);
	/* The golden files pin the formats as written with --kernel-addresses; the
	 * default (offsets, "[kernel]") is test_symbolizer's. */
	symbolizer_set_kernel_addresses(ex.sym, true);
	ex.timeline = timeline_new(TIMELINE_MAX_ENTRIES);
	assert_non_null(ex.window);
	assert_non_null(ex.timeline);
	while ((n = exporter_read_batch(&ex)) > 0)
		total += n;
	assert_false(ex.ring_broken);
	assert_true(total > 40);
	assert_true(ex.have_loader_stats);
	assert_int_equal(ex.ingest.rejected, 0);
	assert_int_equal(timeline_count(ex.timeline), 3);

	/* The files, as exporter_write writes them, with its clock fixed: the
	 * merge of a window shorter than --window is the whole stream, byte for
	 * byte what one cumulative profile gave. */
	assert_non_null(profile_window_roll(ex.window, GOLDEN_END_UNIX_NS));
	ex.profile = profile_window_merged(ex.window, GOLDEN_END_UNIX_NS);
	assert_non_null(ex.profile);
	memset(&st, 0, sizeof(st));
	st.sent = 3;
	st.retried = 1;
	st.bytes = 4096;
	assert_true(otlp_client_stats_json(&st, export_json, sizeof(export_json)) > 0);
	memset(&ctx, 0, sizeof(ctx));
	dirfd = open(ts_tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	ctx.dirfd = dirfd;
	ctx.frequency_hz = GOLDEN_HZ;
	ctx.duration_s = GOLDEN_DURATION_S;
	ctx.loader = &ex.loader;
	ctx.ingest = &ex.ingest;
	ctx.timeline = ex.timeline;
	ctx.start_mono_ns = GOLDEN_START_MONO_NS;
	ctx.export_json = export_json;
	ctx.restarts_json = "{\"loader\": 1, \"controller\": 0, \"exporter\": 2}";
	ctx.lost_on_restart_json = "7";
	assert_int_equal(outputs_write_all(ex.profile, &ctx), 0);
	snprintf(path, sizeof(path), "%s/%s", ts_tmpdir, OUTPUT_FILE_PPROF);
	golden_check_pprof(path);
	golden_check_file(OUTPUT_FILE_FOLDED);
	golden_check_file(OUTPUT_FILE_SVG);
	golden_check_file(OUTPUT_FILE_SUMMARY);
	close(dirfd);

	/* The interval's OTLP body, as otlp_export_interval encodes it: one
	 * interval holding the whole stream is the cumulative profile. */
	procs = process_info_new(ex.src, 0);
	assert_non_null(procs);
	memset(&meta, 0, sizeof(meta));
	meta.host_name = "golden-host";
	meta.host_arch = "amd64";
	meta.os_type = "linux";
	meta.scope_version = "0.0.0-golden";
	meta.procs = procs;
	meta.profile_ids = (const uint8_t *)golden_profile_ids;
	assert_int_equal(timeline_latest(ex.timeline, &te), 0);
	meta.tier = timeline_tier_name(te.tier);
	meta.frequency_hz = te.frequency_hz;
	if (otlp_encoder_encode(ex.profile, &meta, &body, &body_len, err, sizeof(err)) != 0)
		fail_msg("otlp: %s", err);
	golden_check("otlp_request.pb", body, body_len);
	free(body);

	process_info_free(procs);
	profile_window_free(ex.window);
	timeline_free(ex.timeline);
	stack_cache_free(ex.stacks);
	symbolizer_free(ex.sym);
	proc_source_free(ex.src);
	shm_ring_consumer_detach(&ex.ring);
	close(memfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outputs_golden),
	};

	return cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
}
