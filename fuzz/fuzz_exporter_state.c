/* The exporter's restart record (.lowprof-exporter-state, 136 bytes) on
 * arbitrary file contents: the output directory is the previous exporter's,
 * and a record is checked like any input. The loader reads an fd, so the
 * bytes go through a memfd.
 *
 * A random record almost never carries a valid checksum: an input of one
 * byte more than a record is taken as a record whose checksum the harness
 * fixes (FNV-1a over the rest, as the writer computes it), so the fields
 * behind the checksum are reached too.
 *
 * Invariants: a record that loads stores and loads back to the same state
 * (decode(encode(x)) == x); and the input read as a state (run id, fields),
 * when it is a valid one, survives store -> load unchanged. */
#define _GNU_SOURCE
#include "exporter/exporter_state.h"

#include "common/hash.h"
#include "fuzz/fuzz_check.h"
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* magic, run id, 11 fields, checksum (exporter/exporter_state.c) */
#define FUZZ_STATE_SIZE (8 + 32 + 11 * 8 + 8)

static bool fuzz_state_equal(const struct exporter_state *a, const struct exporter_state *b)
{
	return strcmp(a->run_id, b->run_id) == 0 && a->start_unix_ns == b->start_unix_ns &&
	       a->pos_before == b->pos_before && a->pos_after == b->pos_after &&
	       a->accepted_before == b->accepted_before && a->accepted_after == b->accepted_after &&
	       a->lost_total == b->lost_total && a->flushes == b->flushes &&
	       a->written_samples == b->written_samples && a->window_start_ns == b->window_start_ns &&
	       a->set_aside == b->set_aside && a->offcpu_window_start_ns == b->offcpu_window_start_ns;
}

static int fuzz_memfd(const void *data, size_t size)
{
	int fd = memfd_create("fuzz_state", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (size > 0 && pwrite(fd, data, size, 0) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

/* st stored into a fresh file and loaded back must be st. */
static void fuzz_store_load(const struct exporter_state *st)
{
	struct exporter_state back;
	int fd = fuzz_memfd(NULL, 0);

	if (fd < 0)
		return;
	FUZZ_CHECK(exporter_state_store(fd, st) == 0);
	FUZZ_CHECK(exporter_state_load(fd, &back) == 0);
	FUZZ_CHECK(fuzz_state_equal(st, &back));
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t rec[FUZZ_STATE_SIZE + 16];
	struct exporter_state st;
	size_t len = size < sizeof(rec) ? size : sizeof(rec);
	uint64_t v;
	int fd, rc;

	memcpy(rec, data, len);
	if (len == FUZZ_STATE_SIZE + 1) {
		len = FUZZ_STATE_SIZE;
		v = htole64(hash_fnv1a64(rec, FUZZ_STATE_SIZE - 8));
		memcpy(rec + FUZZ_STATE_SIZE - 8, &v, 8);
	}
	fd = fuzz_memfd(rec, len);
	if (fd < 0)
		return 0;
	rc = exporter_state_load(fd, &st);
	close(fd);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOENT);
	FUZZ_CHECK(rc != -ENOENT || len == 0);
	if (rc == 0) {
		FUZZ_CHECK(strlen(st.run_id) <= 32);
		FUZZ_CHECK(st.pos_before <= st.pos_after);
		FUZZ_CHECK(st.accepted_before <= st.accepted_after);
		fuzz_store_load(&st);
	}
	/* The input as a state: 32 bytes of run id, then the eleven fields. */
	if (size >= 32 + 11 * 8) {
		memset(&st, 0, sizeof(st));
		memcpy(st.run_id, data, 32);
		memcpy(&st.start_unix_ns, data + 32, 8);
		memcpy(&st.pos_before, data + 40, 8);
		memcpy(&st.pos_after, data + 48, 8);
		memcpy(&st.accepted_before, data + 56, 8);
		memcpy(&st.accepted_after, data + 64, 8);
		memcpy(&st.lost_total, data + 72, 8);
		memcpy(&st.flushes, data + 80, 8);
		memcpy(&st.written_samples, data + 88, 8);
		memcpy(&st.window_start_ns, data + 96, 8);
		memcpy(&st.set_aside, data + 104, 8);
		memcpy(&st.offcpu_window_start_ns, data + 112, 8);
		if (strspn(st.run_id, "0123456789abcdef") == strlen(st.run_id) &&
		    st.pos_before <= st.pos_after && st.accepted_before <= st.accepted_after)
			fuzz_store_load(&st);
	}
	return 0;
}
