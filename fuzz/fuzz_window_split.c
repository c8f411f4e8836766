/* The window's split by interval a restarted exporter reads back for
 * profile.pb.gz: the held memfd is the previous exporter's (which may have
 * died mid-write, or been compromised), and it is checked like any input.
 *
 * A random input almost never carries a valid checksum: each input is
 * decoded as it is, then with its last 8 bytes replaced by the checksum the
 * writer would compute, so the fields behind the checksum are reached too.
 *
 * Invariants: the decoder returns 0, -EINVAL or -ENOMEM and sets *out only
 * on 0; what it accepts passes window_split_validate, encodes back to the
 * very same bytes (the encoding is canonical: no overlong varint, no slack),
 * and checks against a profile without crashing (0 only when the profile's
 * stack counts are exactly the intervals' sums). */
#define _GNU_SOURCE
#include "exporter/formats/window_split_file.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/window_split.h"

#include "common/hash.h"
#include "fuzz/fuzz_check.h"
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A profile of n stacks, stack i holding i + 1 samples of (i + 1) * 10 ns. */
static struct profile *fuzz_profile(uint32_t n, uint64_t start, uint64_t end)
{
	struct profile *p = profile_new();
	char name[16];
	struct frame f;
	uint32_t i;

	if (p == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		f = (struct frame){ .function = name, .module = "/bin/x", .address = 0x1000 + i,
				    .module_offset = 0x1000 + i };
		if (profile_add_sample(p, 1, 1, "x", &f, 1, false, i + 1, (i + 1) * 10ULL) != 0) {
			profile_free(p);
			return NULL;
		}
	}
	profile_set_time(p, start, end);
	return p;
}

static void fuzz_one(const uint8_t *data, size_t size)
{
	struct window_split *s = (struct window_split *)1;
	struct profile *p;
	char err[256];
	uint8_t *buf;
	size_t len;
	int rc;

	rc = window_split_decode(data, size, &s, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc != 0) {
		FUZZ_CHECK(s == NULL);
		return;
	}
	FUZZ_CHECK(window_split_validate(s, err, sizeof(err)) == 0);
	FUZZ_CHECK(window_split_encode(s, &buf, &len) == 0);
	FUZZ_CHECK(len == size && memcmp(buf, data, size) == 0);
	free(buf);
	/* Against a small profile of its time range (a large nstacks would only
	 * cost the fuzzer time: the count mismatch is found first). */
	if (s->nstacks <= 64) {
		p = fuzz_profile(s->nstacks, s->start_ns, s->end_ns);
		if (p != NULL) {
			rc = window_split_check(s, p, err, sizeof(err));
			FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
			profile_free(p);
		}
	}
	window_split_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	uint64_t v;

	fuzz_one(data, size);
	if (size < 8)
		return 0;
	copy = malloc(size);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	v = htole64(hash_fnv1a64(copy, size - 8));
	memcpy(copy + size - 8, &v, 8);
	fuzz_one(copy, size);
	free(copy);
	return 0;
}
