/*
 * The window's split by interval, held for the next exporter: what is
 * encoded decodes back equal, and the decoder refuses (never crashes on)
 * every kind of malformed input: cut short anywhere, a byte changed, bad
 * magic, oversized, counts that do not fit the bytes or each other, bad
 * varints, stacks out of range or order, empty refs, intervals out of order,
 * trailing bytes. And the check of a split against the profile it describes.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hash.h"
#include "exporter/formats/window_split_file.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/window_split.h"

#define T0 1700000000000000000ULL
#define SEC 1000000000ULL
/* Offsets in the encoding (window_split_file.h). */
#define OFF_NSTACKS 24
#define OFF_NPARTS 28
#define OFF_NREFS 32
#define OFF_PARTS 40

/* Three intervals of 2 s over 5 stacks: {0:1, 3:200}, {}, {1:2, 2:3, 4:70000}. */
static struct window_split *three_parts(void)
{
	static const struct window_split_ref refs[] = {
		{ 0, 1, 10 }, { 3, 200, 2000 }, { 1, 2, 20 }, { 2, 3, 30 }, { 4, 70000, 1ULL << 40 },
	};
	struct window_split *s = window_split_new(3, 5);

	assert_non_null(s);
	s->start_ns = T0;
	s->end_ns = T0 + 6 * SEC;
	s->nstacks = 5;
	s->nrefs = 5;
	memcpy(s->refs, refs, sizeof(refs));
	s->parts[0] = (struct window_split_part){ T0, T0 + 2 * SEC, 2, s->refs };
	s->parts[1] = (struct window_split_part){ T0 + 2 * SEC, T0 + 4 * SEC, 0, s->refs + 2 };
	s->parts[2] = (struct window_split_part){ T0 + 4 * SEC, T0 + 6 * SEC, 3, s->refs + 2 };
	return s;
}

static void assert_split_equal(const struct window_split *a, const struct window_split *b)
{
	size_t i, k;

	assert_int_equal(a->start_ns, b->start_ns);
	assert_int_equal(a->end_ns, b->end_ns);
	assert_int_equal(a->nstacks, b->nstacks);
	assert_int_equal(a->nparts, b->nparts);
	assert_int_equal(a->nrefs, b->nrefs);
	for (i = 0; i < a->nparts; i++) {
		assert_int_equal(a->parts[i].start_ns, b->parts[i].start_ns);
		assert_int_equal(a->parts[i].end_ns, b->parts[i].end_ns);
		assert_int_equal(a->parts[i].nrefs, b->parts[i].nrefs);
		for (k = 0; k < a->parts[i].nrefs; k++) {
			assert_int_equal(a->parts[i].refs[k].stack, b->parts[i].refs[k].stack);
			assert_int_equal(a->parts[i].refs[k].count, b->parts[i].refs[k].count);
			assert_int_equal(a->parts[i].refs[k].cpu_ns, b->parts[i].refs[k].cpu_ns);
		}
	}
}

/* The checksum of buf[0..len) set again after a change. */
static void fix_checksum(uint8_t *buf, size_t len)
{
	uint64_t v = htole64(hash_fnv1a64(buf, len - 8));

	memcpy(buf + len - 8, &v, 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put_u64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

/* decode of buf must fail with rc and leave *out NULL. */
static void assert_refused(const uint8_t *buf, size_t len, int rc)
{
	struct window_split *out = (struct window_split *)1;
	char err[256] = "";

	assert_int_equal(window_split_decode(buf, len, &out, err, sizeof(err)), rc);
	assert_null(out);
	assert_true(err[0] != '\0');
}

static void test_round_trip(void **state)
{
	struct window_split *s = three_parts(), *back = NULL;
	uint8_t *buf;
	size_t len;
	char err[256];

	(void)state;
	assert_int_equal(window_split_validate(s, err, sizeof(err)), 0);
	assert_int_equal(window_split_encode(s, &buf, &len), 0);
	/* Header, three intervals, five refs of 3 to 14 bytes, checksum. */
	assert_true(len >= 40 + 3 * 20 + 5 * 3 + 8 && len <= 40 + 3 * 20 + 5 * 25 + 8);
	assert_int_equal(window_split_decode(buf, len, &back, err, sizeof(err)), 0);
	assert_split_equal(s, back);
	window_split_free(back);
	free(buf);
	window_split_free(s);
}

/* An empty window (no interval), and intervals with no samples. */
static void test_empty(void **state)
{
	struct window_split *s = window_split_new(0, 0), *back = NULL;
	uint8_t *buf;
	size_t len;
	char err[256];

	(void)state;
	s->start_ns = s->end_ns = T0;
	assert_int_equal(window_split_encode(s, &buf, &len), 0);
	assert_int_equal(len, 40 + 8);
	assert_int_equal(window_split_decode(buf, len, &back, err, sizeof(err)), 0);
	assert_split_equal(s, back);
	window_split_free(back);
	free(buf);
	window_split_free(s);
}

/* Every prefix, and every byte changed (the checksum then fails, or the
 * changed checksum itself). */
static void test_truncated_and_corrupt(void **state)
{
	struct window_split *s = three_parts();
	uint8_t *buf, *copy;
	size_t len, i;

	(void)state;
	assert_int_equal(window_split_encode(s, &buf, &len), 0);
	for (i = 0; i < len; i++) {
		copy = malloc(i ? i : 1); /* exactly i bytes: ASan sees any read past them */
		memcpy(copy, buf, i);
		assert_refused(copy, i, -EINVAL);
		free(copy);
	}
	copy = malloc(len);
	for (i = 0; i < len; i++) {
		memcpy(copy, buf, len);
		copy[i] ^= 0x01;
		assert_refused(copy, len, -EINVAL);
	}
	free(copy);
	free(buf);
	window_split_free(s);
}

static void test_bad_magic_and_oversized(void **state)
{
	struct window_split *s = three_parts();
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(window_split_encode(s, &buf, &len), 0);
	buf[7] = '2'; /* another version */
	fix_checksum(buf, len);
	assert_refused(buf, len, -EINVAL);
	/* Refused on its length alone, before a byte is read. */
	assert_refused(buf, (size_t)WINDOW_SPLIT_MAX_BYTES + 1, -EFBIG);
	free(buf);
	window_split_free(s);
}

/* Counts in the header that the bytes cannot hold: refused before any allocation. */
static void test_counts_do_not_fit(void **state)
{
	struct window_split *s = three_parts();
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(window_split_encode(s, &buf, &len), 0);
	put_u64(buf + OFF_NREFS, UINT64_MAX);
	fix_checksum(buf, len);
	assert_refused(buf, len, -EINVAL);
	put_u64(buf + OFF_NREFS, 5);
	put_u32(buf + OFF_NPARTS, WINDOW_SPLIT_MAX_PARTS + 1);
	fix_checksum(buf, len);
	assert_refused(buf, len, -EINVAL);
	put_u32(buf + OFF_NPARTS, 1000); /* more than the bytes hold */
	fix_checksum(buf, len);
	assert_refused(buf, len, -EINVAL);
	/* Fewer refs than the intervals hold, and more. */
	put_u32(buf + OFF_NPARTS, 3);
	put_u64(buf + OFF_NREFS, 4);
	fix_checksum(buf, len);
	assert_refused(buf, len, -EINVAL);
	put_u64(buf + OFF_NREFS, 6);
	fix_checksum(buf, len);
	assert_refused(buf, len, -EINVAL);
	/* Fewer intervals than follow: bytes left over. */
	put_u64(buf + OFF_NREFS, 2);
	put_u32(buf + OFF_NPARTS, 1);
	fix_checksum(buf, len);
	assert_refused(buf, len, -EINVAL);
	free(buf);
	window_split_free(s);
}

/* A split of one interval holding one ref, its varints given as bytes. */
static size_t one_ref(uint8_t *buf, uint32_t nstacks, const uint8_t *ref, size_t reflen)
{
	size_t len = OFF_PARTS + 20 + reflen + 8;

	memcpy(buf, "LPWSPL01", 8);
	put_u64(buf + 8, T0);
	put_u64(buf + 16, T0 + SEC);
	put_u32(buf + OFF_NSTACKS, nstacks);
	put_u32(buf + OFF_NPARTS, 1);
	put_u64(buf + OFF_NREFS, 1);
	put_u64(buf + OFF_PARTS, T0);
	put_u64(buf + OFF_PARTS + 8, T0 + SEC);
	put_u32(buf + OFF_PARTS + 16, 1);
	memcpy(buf + OFF_PARTS + 20, ref, reflen);
	fix_checksum(buf, len);
	return len;
}

static void test_varints(void **state)
{
	static const uint8_t good[] = { 0x02, 0x01, 0x05 };
	static const uint8_t overlong[] = { 0x82, 0x00, 0x01, 0x05 };        /* 2 in two bytes */
	static const uint8_t too_long[] = { 0x02, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80,
					    0x80, 0x80, 0x80, 0x80, 0x01, 0x05 };  /* 11 bytes */
	static const uint8_t bit65[] = { 0x02, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80,
					 0x80, 0x80, 0x80, 0x02, 0x05 };          /* 2^64 + 1 */
	static const uint8_t max64[] = { 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0x01, 0x05 };          /* 2^64 - 1 */
	static const uint8_t unended[] = { 0x02, 0x01, 0x85 };
	uint8_t buf[128];
	struct window_split *s = NULL;
	char err[256];
	size_t len;

	(void)state;
	len = one_ref(buf, 3, good, sizeof(good));
	assert_int_equal(window_split_decode(buf, len, &s, err, sizeof(err)), 0);
	assert_int_equal(s->parts[0].refs[0].stack, 2);
	assert_int_equal(s->parts[0].refs[0].count, 1);
	assert_int_equal(s->parts[0].refs[0].cpu_ns, 5);
	window_split_free(s);
	len = one_ref(buf, 3, max64, sizeof(max64));
	assert_int_equal(window_split_decode(buf, len, &s, err, sizeof(err)), 0);
	assert_int_equal(s->parts[0].refs[0].count, UINT64_MAX);
	window_split_free(s);
	len = one_ref(buf, 3, overlong, sizeof(overlong));
	assert_refused(buf, len, -EINVAL);
	len = one_ref(buf, 3, too_long, sizeof(too_long));
	assert_refused(buf, len, -EINVAL);
	len = one_ref(buf, 3, bit65, sizeof(bit65));
	assert_refused(buf, len, -EINVAL);
	len = one_ref(buf, 3, unended, sizeof(unended));
	assert_refused(buf, len, -EINVAL);
	/* The stack past the profile's stacks, and a count of 0. */
	len = one_ref(buf, 2, good, sizeof(good));
	assert_refused(buf, len, -EINVAL);
	len = one_ref(buf, 3, (const uint8_t[]){ 0x02, 0x00, 0x05 }, 3);
	assert_refused(buf, len, -EINVAL);
}

/* Splits that decode byte-wise but break the rules: validate refuses them,
 * and so does the decoder once they are encoded. */
static void test_inconsistent(void **state)
{
	struct window_split *s;
	char err[256];
	uint8_t *buf;
	size_t len;
	int i;

	(void)state;
	for (i = 0; i < 6; i++) {
		s = three_parts();
		switch (i) {
		case 0: /* intervals overlapping */
			s->parts[1].start_ns = T0 + SEC;
			break;
		case 1: /* an interval past the window's end */
			s->parts[2].end_ns = T0 + 7 * SEC;
			break;
		case 2: /* the oldest interval not at the window's start */
			s->start_ns = T0 - SEC;
			break;
		case 3: /* stacks not increasing */
			s->refs[3].stack = 1;
			break;
		case 4: /* an interval ending before it starts */
			s->parts[1].end_ns = T0 + SEC;
			s->parts[1].start_ns = T0 + 3 * SEC;
			break;
		default: /* the window ending before it starts */
			s->end_ns = T0 - 1;
			break;
		}
		assert_int_equal(window_split_validate(s, err, sizeof(err)), -EINVAL);
		assert_int_equal(window_split_encode(s, &buf, &len), 0);
		assert_refused(buf, len, -EINVAL);
		free(buf);
		window_split_free(s);
	}
}

/* The profile a split describes: five stacks with the sums of three_parts. */
static struct profile *described_profile(void)
{
	static const uint64_t count[] = { 1, 2, 3, 200, 70000 };
	static const uint64_t cpu[] = { 10, 20, 30, 2000, 1ULL << 40 };
	struct profile *p = profile_new();
	char name[16];
	struct frame f;
	int i;

	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "fn%d", i);
		f = (struct frame){ .function = name, .module = "/bin/app", .address = 0x401000 + i,
				    .module_offset = 0x1000 + i, .map_start = 0x400000,
				    .map_end = 0x500000 };
		assert_int_equal(profile_add_sample(p, 7, 7, "app", &f, 1, false, count[i], cpu[i]), 0);
	}
	profile_set_time(p, T0, T0 + 6 * SEC);
	return p;
}

static void test_check_against_profile(void **state)
{
	struct window_split *s = three_parts();
	struct profile *p = described_profile();
	char err[256];

	(void)state;
	assert_int_equal(window_split_check(s, p, err, sizeof(err)), 0);
	/* Another time range: another file's split. */
	profile_set_time(p, T0, T0 + 8 * SEC);
	assert_int_equal(window_split_check(s, p, err, sizeof(err)), -EINVAL);
	profile_set_time(p, T0, T0 + 6 * SEC);
	/* A count off by one. */
	s->refs[4].count--;
	assert_int_equal(window_split_check(s, p, err, sizeof(err)), -EINVAL);
	s->refs[4].count++;
	s->refs[0].cpu_ns++;
	assert_int_equal(window_split_check(s, p, err, sizeof(err)), -EINVAL);
	s->refs[0].cpu_ns--;
	/* Counts that overflow when summed. */
	s->refs[0].count = UINT64_MAX;
	s->refs[1].stack = 0;
	s->parts[0].nrefs = 1;
	s->parts[1].refs = s->refs + 1;
	s->parts[1].nrefs = 1;
	assert_int_equal(window_split_check(s, p, err, sizeof(err)), -EINVAL);
	window_split_free(s);
	/* More stacks than the profile. */
	s = three_parts();
	s->nstacks = 6;
	assert_int_equal(window_split_check(s, p, err, sizeof(err)), -EINVAL);
	window_split_free(s);
	profile_free(p);
}

/* Through a held file (a memfd, as the supervisor's): written whole, read
 * back; an empty one is -ENOENT, an oversized or malformed one refused. */
static void test_held(void **state)
{
	struct window_split *s = three_parts(), *back = NULL;
	int fd = memfd_create("test-window-split", MFD_CLOEXEC);
	char err[256];

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(window_split_load_held(fd, &back, err, sizeof(err)), -ENOENT);
	assert_null(back);
	assert_int_equal(window_split_write_held(fd, s, err, sizeof(err)), 0);
	assert_int_equal(window_split_load_held(fd, &back, err, sizeof(err)), 0);
	assert_split_equal(s, back);
	window_split_free(back);
	back = NULL;
	/* Written again: the held file is the new split alone, no tail of the old. */
	window_split_free(s);
	s = window_split_new(0, 0);
	assert_non_null(s);
	assert_int_equal(window_split_write_held(fd, s, err, sizeof(err)), 0);
	assert_int_equal(window_split_load_held(fd, &back, err, sizeof(err)), 0);
	assert_split_equal(s, back);
	window_split_free(back);
	back = NULL;
	/* Bytes that are no split. */
	assert_int_equal(pwrite(fd, "LPWSPL01junk", 12, 0), 12);
	assert_int_equal(window_split_load_held(fd, &back, err, sizeof(err)), -EINVAL);
	assert_null(back);
	/* Grown past the cap (a sparse memfd: no memory used). */
	assert_int_equal(ftruncate(fd, (off_t)WINDOW_SPLIT_MAX_BYTES + 4096), 0);
	assert_int_equal(window_split_load_held(fd, &back, err, sizeof(err)), -EFBIG);
	assert_null(back);
	close(fd);
	window_split_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_truncated_and_corrupt),
		cmocka_unit_test(test_bad_magic_and_oversized),
		cmocka_unit_test(test_counts_do_not_fit),
		cmocka_unit_test(test_varints),
		cmocka_unit_test(test_inconsistent),
		cmocka_unit_test(test_check_against_profile),
		cmocka_unit_test(test_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
