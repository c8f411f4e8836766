#include "exporter/formats/window_split_file.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/hash.h"
#include "exporter/formats/held_file.h"
#include "exporter/profile/window_split.h"

#define SPLIT_MAGIC "LPWSPL01"
#define SPLIT_HEADER_SIZE (8 + 8 + 8 + 4 + 4 + 8)
#define SPLIT_PART_SIZE (8 + 8 + 4)
#define SPLIT_CHECKSUM_SIZE 8
/* The least a ref takes: three one-byte varints. */
#define SPLIT_REF_MIN_SIZE 3
/* The most: a u32's varint (5 bytes) and two u64's (10 each). */
#define SPLIT_REF_MAX_SIZE (5 + 10 + 10)

static uint8_t *split_put_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
	return p + 4;
}

static uint8_t *split_put_u64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
	return p + 8;
}

static uint8_t *split_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

int window_split_encode(const struct window_split *s, uint8_t **out, size_t *len)
{
	size_t max, i, k;
	uint8_t *buf, *p;
	uint32_t prev;

	*out = NULL;
	*len = 0;
	if (s->nparts > WINDOW_SPLIT_MAX_PARTS ||
	    s->nrefs > (WINDOW_SPLIT_MAX_BYTES - SPLIT_HEADER_SIZE) / SPLIT_REF_MAX_SIZE)
		return -EFBIG;
	max = SPLIT_HEADER_SIZE + s->nparts * SPLIT_PART_SIZE + s->nrefs * SPLIT_REF_MAX_SIZE +
	      SPLIT_CHECKSUM_SIZE;
	buf = malloc(max);
	if (buf == NULL)
		return -ENOMEM;
	memcpy(buf, SPLIT_MAGIC, 8);
	p = split_put_u64(buf + 8, s->start_ns);
	p = split_put_u64(p, s->end_ns);
	p = split_put_u32(p, s->nstacks);
	p = split_put_u32(p, (uint32_t)s->nparts);
	p = split_put_u64(p, s->nrefs);
	for (i = 0; i < s->nparts; i++) {
		const struct window_split_part *part = &s->parts[i];

		p = split_put_u64(p, part->start_ns);
		p = split_put_u64(p, part->end_ns);
		p = split_put_u32(p, (uint32_t)part->nrefs);
		prev = 0;
		for (k = 0; k < part->nrefs; k++) {
			const struct window_split_ref *r = &part->refs[k];

			/* Increasing stacks: the gaps are small, mostly one byte. */
			p = split_put_varint(p, k == 0 ? r->stack : r->stack - prev - 1);
			p = split_put_varint(p, r->count);
			p = split_put_varint(p, r->cpu_ns);
			prev = r->stack;
		}
	}
	p = split_put_u64(p, hash_fnv1a64(buf, (size_t)(p - buf)));
	*out = buf;
	*len = (size_t)(p - buf);
	return 0;
}

/* The decoder's cursor over the bytes before the checksum. */
struct split_reader {
	const uint8_t *p, *end;
};

static bool split_get_u32(struct split_reader *r, uint32_t *v)
{
	if (r->end - r->p < 4)
		return false;
	memcpy(v, r->p, 4);
	*v = le32toh(*v);
	r->p += 4;
	return true;
}

static bool split_get_u64(struct split_reader *r, uint64_t *v)
{
	if (r->end - r->p < 8)
		return false;
	memcpy(v, r->p, 8);
	*v = le64toh(*v);
	r->p += 8;
	return true;
}

/* At most 10 bytes, no bit past the 64th, no needless trailing zero byte. */
static bool split_get_varint(struct split_reader *r, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t b;

	for (;;) {
		if (r->p == r->end || shift > 63)
			return false;
		b = *r->p++;
		if (shift == 63 && b > 1)
			return false;
		x |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0) {
			if (b == 0 && shift > 0)
				return false; /* overlong */
			*v = x;
			return true;
		}
		shift += 7;
	}
}

static int split_decode_parts(struct split_reader *r, struct window_split *s, char *err,
			      size_t errlen)
{
	uint64_t stack, count, cpu, used = 0;
	uint32_t nrefs;
	size_t i, k;

	for (i = 0; i < s->nparts; i++) {
		struct window_split_part *part = &s->parts[i];

		if (!split_get_u64(r, &part->start_ns) || !split_get_u64(r, &part->end_ns) ||
		    !split_get_u32(r, &nrefs))
			return errbuf_fail(-EINVAL, err, errlen, "interval %zu: cut short", i);
		if (nrefs > s->nrefs - used)
			return errbuf_fail(-EINVAL, err, errlen,
					   "interval %zu: %u refs, more than the header's", i, nrefs);
		part->refs = s->refs + used;
		part->nrefs = nrefs;
		stack = 0;
		for (k = 0; k < nrefs; k++) {
			uint64_t gap;

			if (!split_get_varint(r, &gap) || !split_get_varint(r, &count) ||
			    !split_get_varint(r, &cpu))
				return errbuf_fail(-EINVAL, err, errlen,
						   "interval %zu, ref %zu: cut short or bad varint", i, k);
			/* stack < nstacks and gap < nstacks: both below 2^32, no overflow. */
			if (gap >= s->nstacks || (k > 0 && stack + gap + 1 >= s->nstacks))
				return errbuf_fail(-EINVAL, err, errlen,
						   "interval %zu, ref %zu: stack out of range", i, k);
			stack = k == 0 ? gap : stack + gap + 1;
			part->refs[k].stack = (uint32_t)stack;
			part->refs[k].count = count;
			part->refs[k].cpu_ns = cpu;
		}
		used += nrefs;
	}
	if (used != s->nrefs)
		return errbuf_fail(-EINVAL, err, errlen, "%llu refs, the header says %zu",
				   (unsigned long long)used, s->nrefs);
	if (r->p != r->end)
		return errbuf_fail(-EINVAL, err, errlen, "%zu bytes after the last interval",
				   (size_t)(r->end - r->p));
	return window_split_validate(s, err, errlen);
}

int window_split_decode(const uint8_t *buf, size_t len, struct window_split **out, char *err,
			size_t errlen)
{
	struct split_reader r;
	struct window_split *s;
	uint64_t start, end, nrefs, sum;
	uint32_t nstacks, nparts;
	int rc;

	*out = NULL;
	if (len > WINDOW_SPLIT_MAX_BYTES)
		return errbuf_fail(-EFBIG, err, errlen, "%zu bytes, more than %u MiB", len,
				   WINDOW_SPLIT_MAX_BYTES >> 20);
	if (len < SPLIT_HEADER_SIZE + SPLIT_CHECKSUM_SIZE || memcmp(buf, SPLIT_MAGIC, 8) != 0)
		return errbuf_fail(-EINVAL, err, errlen, "not a window split (bad magic or too short)");
	memcpy(&sum, buf + len - SPLIT_CHECKSUM_SIZE, 8);
	if (le64toh(sum) != hash_fnv1a64(buf, len - SPLIT_CHECKSUM_SIZE))
		return errbuf_fail(-EINVAL, err, errlen, "checksum mismatch");
	r.p = buf + 8;
	r.end = buf + len - SPLIT_CHECKSUM_SIZE;
	/* The length was checked above: the header is there. */
	if (!split_get_u64(&r, &start) || !split_get_u64(&r, &end) ||
	    !split_get_u32(&r, &nstacks) || !split_get_u32(&r, &nparts) ||
	    !split_get_u64(&r, &nrefs))
		return errbuf_fail(-EINVAL, err, errlen, "header cut short");
	/* Before anything is allocated: the counts must fit the bytes that follow. */
	if (nparts > WINDOW_SPLIT_MAX_PARTS)
		return errbuf_fail(-EINVAL, err, errlen, "%u intervals, more than %u", nparts,
				   WINDOW_SPLIT_MAX_PARTS);
	if ((uint64_t)nparts * SPLIT_PART_SIZE > (uint64_t)(r.end - r.p) ||
	    nrefs > ((uint64_t)(r.end - r.p) - (uint64_t)nparts * SPLIT_PART_SIZE) / SPLIT_REF_MIN_SIZE)
		return errbuf_fail(-EINVAL, err, errlen,
				   "%u intervals and %llu refs do not fit in %zu bytes", nparts,
				   (unsigned long long)nrefs, len);
	s = window_split_new(nparts, (size_t)nrefs);
	if (s == NULL)
		return errbuf_fail(-ENOMEM, err, errlen, "out of memory");
	s->start_ns = start;
	s->end_ns = end;
	s->nstacks = nstacks;
	s->nrefs = (size_t)nrefs;
	rc = split_decode_parts(&r, s, err, errlen);
	if (rc != 0) {
		window_split_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

struct split_write_ctx {
	const uint8_t *buf;
	size_t len;
};

static int split_write(FILE *f, void *arg)
{
	const struct split_write_ctx *c = arg;

	return fwrite(c->buf, 1, c->len, f) == c->len ? 0 : -EIO;
}

int window_split_write_held(int fd, const struct window_split *s, char *err, size_t errlen)
{
	struct split_write_ctx c;
	uint8_t *buf;
	int rc;

	rc = window_split_encode(s, &buf, &c.len);
	if (rc != 0)
		return errbuf_fail(rc, err, errlen, "window split: %s", strerror(-rc));
	c.buf = buf;
	/* The held file empties itself when the write fails: no stale split. */
	rc = held_file_write(fd, split_write, &c, WINDOW_SPLIT_MAX_BYTES, err, errlen);
	free(buf);
	return rc;
}

int window_split_load_held(int fd, struct window_split **out, char *err, size_t errlen)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	rc = held_file_read(fd, WINDOW_SPLIT_MAX_BYTES, &buf, &len, err, errlen);
	if (rc != 0)
		return rc;
	if (len == 0)
		return errbuf_fail(-ENOENT, err, errlen, "window split: none held");
	rc = window_split_decode(buf, len, out, err, errlen);
	free(buf);
	return rc;
}
