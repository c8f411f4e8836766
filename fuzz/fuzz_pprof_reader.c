/* The pprof reader a restarted exporter uses on its predecessor's
 * profile.pb.gz (anything may have written that file). An input that starts
 * with the gzip magic is read as it is; any other input is gzip'd here first,
 * so the fuzzer works on the protobuf itself rather than on deflate.
 *
 * Invariant: a profile the reader accepts must write back out (pprof_writer)
 * without error, and that output must read back to the same sample count,
 * CPU time, stacks and time range. */
#define _GNU_SOURCE
#include "exporter/formats/pprof_reader.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/profile/profile.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* data as one gzip member, in *out (malloc'd). 0 or -1. */
static int fuzz_gzip(const uint8_t *data, size_t size, uint8_t **out, size_t *outlen)
{
	z_stream zs;
	uLong cap;
	int zr;

	memset(&zs, 0, sizeof(zs));
	/* 15 + 16: a gzip wrapper; level 1 keeps the fuzzer fast. */
	if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	cap = deflateBound(&zs, (uLong)size);
	*out = malloc(cap);
	if (*out == NULL) {
		deflateEnd(&zs);
		return -1;
	}
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)size;
	zs.next_out = *out;
	zs.avail_out = (uInt)cap;
	zr = deflate(&zs, Z_FINISH);
	*outlen = cap - zs.avail_out;
	deflateEnd(&zs);
	if (zr != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static void fuzz_roundtrip(const struct profile *p)
{
	struct profile_totals a, b;
	struct profile *back = NULL;
	uint64_t s1, e1, s2, e2;
	char *buf = NULL;
	size_t len = 0;
	char err[256];
	FILE *out;
	int rc;

	out = open_memstream(&buf, &len);
	if (out == NULL)
		return;
	rc = pprof_write(p, out, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "pprof_write: %s\n", err);
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(fclose(out) == 0);
	rc = pprof_reader_load((const uint8_t *)buf, len, &back, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "re-read: %s\n", err);
	FUZZ_CHECK(rc == 0);
	profile_get_totals(p, &a);
	profile_get_totals(back, &b);
	FUZZ_CHECK(a.samples == b.samples);
	FUZZ_CHECK(a.cpu_ns == b.cpu_ns);
	FUZZ_CHECK(a.stacks == b.stacks);
	profile_get_time(p, &s1, &e1);
	profile_get_time(back, &s2, &e2);
	FUZZ_CHECK(s1 == s2 && e1 == e2);
	profile_free(back);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = NULL;
	uint8_t *gz = NULL;
	size_t gzlen = 0;
	char err[256];
	int rc;

	if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		rc = pprof_reader_load(data, size, &p, err, sizeof(err));
	} else {
		if (fuzz_gzip(data, size, &gz, &gzlen) != 0)
			return 0;
		rc = pprof_reader_load(gz, gzlen, &p, err, sizeof(err));
		free(gz);
	}
	FUZZ_CHECK((rc == 0) == (p != NULL));
	if (rc != 0)
		return 0;
	fuzz_roundtrip(p);
	profile_free(p);
	return 0;
}
