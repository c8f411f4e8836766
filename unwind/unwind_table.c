/* unwind_table: validation, lookup and the flat wire form of unwind tables.
 * Building them from ELF files is in unwind_build.c. */
#include "unwind/unwind_table.h"

#include "common/errbuf.h"

#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void unwind_table_free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

static int validate_row(const struct unwind_row *r, size_t i, char *err, size_t errlen)
{
	switch (r->cfa_kind) {
	case UNWIND_CFA_RSP:
	case UNWIND_CFA_RBP:
		if (r->cfa_off < UNWIND_CFA_OFF_MIN || r->cfa_off > UNWIND_CFA_OFF_MAX)
			return errbuf_fail(-EINVAL, err, errlen, "row %zu: CFA offset %d out of range", i, r->cfa_off);
		switch (r->rbp_kind) {
		case UNWIND_RBP_AT_CFA:
			if (r->rbp_off < UNWIND_RBP_OFF_MIN || r->rbp_off > UNWIND_RBP_OFF_MAX)
				return errbuf_fail(-EINVAL, err, errlen, "row %zu: RBP offset %d out of range", i,
					    r->rbp_off);
			break;
		case UNWIND_RBP_SAME:
		case UNWIND_RBP_UNDEFINED:
			if (r->rbp_off != 0)
				return errbuf_fail(-EINVAL, err, errlen, "row %zu: stray RBP offset", i);
			break;
		default:
			return errbuf_fail(-EINVAL, err, errlen, "row %zu: unknown RBP rule %u", i, r->rbp_kind);
		}
		return 0;
	case UNWIND_CFA_PLT:
		if (r->cfa_off < 0 || r->cfa_off > UNWIND_PLT_OFF_MAX || r->plt_threshold < 0 ||
		    r->plt_threshold > 15 || r->rbp_kind != UNWIND_RBP_SAME)
			return errbuf_fail(-EINVAL, err, errlen, "row %zu: malformed PLT row", i);
		return 0;
	case UNWIND_CFA_NONE:
	case UNWIND_CFA_SIGNAL:
	case UNWIND_CFA_END:
	case UNWIND_CFA_UNSUPPORTED:
		/* Marks carry no operands: anything else is smuggled data. */
		if (r->cfa_off != 0 || r->rbp_off != 0 || r->rbp_kind != 0)
			return errbuf_fail(-EINVAL, err, errlen, "row %zu: mark %s with operands", i,
				    unwind_cfa_kind_name(r->cfa_kind));
		return 0;
	default:
		return errbuf_fail(-EINVAL, err, errlen, "row %zu: unknown CFA rule %u", i, r->cfa_kind);
	}
}

int unwind_table_validate(const struct unwind_table *t, char *err, size_t errlen)
{
	if (!t)
		return errbuf_fail(-EINVAL, err, errlen, "no table");
	if (t->nrows > UNWIND_TABLE_MAX_ROWS)
		return errbuf_fail(-EINVAL, err, errlen, "%zu rows, more than the limit %u", t->nrows,
			    UNWIND_TABLE_MAX_ROWS);
	if (t->nrows > 0 && !t->rows)
		return errbuf_fail(-EINVAL, err, errlen, "rows missing");
	for (size_t i = 0; i < t->nrows; i++) {
		if (i > 0 && t->rows[i].pc <= t->rows[i - 1].pc)
			return errbuf_fail(-EINVAL, err, errlen, "row %zu: pc %#llx not above the previous %#llx", i,
				    (unsigned long long)t->rows[i].pc,
				    (unsigned long long)t->rows[i - 1].pc);
		if (validate_row(&t->rows[i], i, err, errlen) < 0)
			return -EINVAL;
	}
	return 0;
}

const struct unwind_row *unwind_table_lookup(const struct unwind_table *t, uint64_t pc)
{
	size_t lo = 0, hi;

	if (!t || t->nrows == 0 || pc < t->rows[0].pc)
		return NULL;
	/* Invariant: rows[lo].pc <= pc, and every row at or past hi is above pc.
	 * The BPF mirror bounds the same loop by log2(UNWIND_TABLE_MAX_ROWS). */
	hi = t->nrows;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

/* ---- flat form ---------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Header: u32 magic, u16 version, u16 row size, u64 row count.
 * Row: u64 pc, s32 cfa_off, s16 rbp_off/plt_threshold, u8 cfa_kind, u8 rbp_kind. */
int unwind_table_serialize(const struct unwind_table *t, uint8_t **buf, size_t *len,
			   char *err, size_t errlen)
{
	uint8_t *out, *p;
	size_t size;

	*buf = NULL;
	*len = 0;
	if (unwind_table_validate(t, err, errlen) < 0)
		return -EINVAL;
	size = UNWIND_TABLE_HDR_SIZE + t->nrows * sizeof(struct unwind_row);
	out = malloc(size);
	if (!out)
		return errbuf_fail(-EINVAL, err, errlen, "out of memory for %zu bytes", size);
	put_le(out, UNWIND_TABLE_MAGIC, 4);
	put_le(out + 4, UNWIND_TABLE_VERSION, 2);
	put_le(out + 6, sizeof(struct unwind_row), 2);
	put_le(out + 8, t->nrows, 8);
	p = out + UNWIND_TABLE_HDR_SIZE;
	for (size_t i = 0; i < t->nrows; i++, p += sizeof(struct unwind_row)) {
		const struct unwind_row *r = &t->rows[i];

		put_le(p, r->pc, 8);
		put_le(p + 8, (uint32_t)r->cfa_off, 4);
		put_le(p + 12, (uint16_t)r->rbp_off, 2);
		p[14] = r->cfa_kind;
		p[15] = r->rbp_kind;
	}
	*buf = out;
	*len = size;
	return 0;
}

int unwind_table_deserialize(const uint8_t *buf, size_t len, struct unwind_table *out,
			     char *err, size_t errlen)
{
	const uint8_t *p;
	uint64_t nrows;

	memset(out, 0, sizeof(*out));
	if (!buf || len < UNWIND_TABLE_HDR_SIZE)
		return errbuf_fail(-EINVAL, err, errlen, "buffer of %zu bytes is shorter than the header", len);
	if (get_le(buf, 4) != UNWIND_TABLE_MAGIC)
		return errbuf_fail(-EINVAL, err, errlen, "bad magic");
	if (get_le(buf + 4, 2) != UNWIND_TABLE_VERSION)
		return errbuf_fail(-EINVAL, err, errlen, "unsupported version %u", (unsigned)get_le(buf + 4, 2));
	if (get_le(buf + 6, 2) != sizeof(struct unwind_row))
		return errbuf_fail(-EINVAL, err, errlen, "row size %u, expected %zu", (unsigned)get_le(buf + 6, 2),
			    sizeof(struct unwind_row));
	nrows = get_le(buf + 8, 8);
	/* Check the count against the limit before multiplying with it. */
	if (nrows > UNWIND_TABLE_MAX_ROWS)
		return errbuf_fail(-EINVAL, err, errlen, "row count %llu over the limit", (unsigned long long)nrows);
	if (len - UNWIND_TABLE_HDR_SIZE != nrows * sizeof(struct unwind_row))
		return errbuf_fail(-EINVAL, err, errlen, "%zu bytes for %llu rows", len, (unsigned long long)nrows);
	if (nrows > 0) {
		out->rows = calloc((size_t)nrows, sizeof(struct unwind_row));
		if (!out->rows)
			return errbuf_fail(-EINVAL, err, errlen, "out of memory for %llu rows", (unsigned long long)nrows);
	}
	out->nrows = (size_t)nrows;
	p = buf + UNWIND_TABLE_HDR_SIZE;
	for (size_t i = 0; i < out->nrows; i++, p += sizeof(struct unwind_row)) {
		struct unwind_row *r = &out->rows[i];

		r->pc = get_le(p, 8);
		r->cfa_off = (int32_t)(uint32_t)get_le(p + 8, 4);
		r->rbp_off = (int16_t)(uint16_t)get_le(p + 12, 2);
		r->cfa_kind = p[14];
		r->rbp_kind = p[15];
	}
	out->stats.hdr_fde_count = -1;
	if (unwind_table_validate(out, err, errlen) < 0) {
		unwind_table_free(out);
		return -EINVAL;
	}
	return 0;
}

/* ---- printing ------------------------------------------------------------ */

const char *unwind_cfa_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[UNWIND_CFA_NONE] = "none",     [UNWIND_CFA_RSP] = "rsp",
		[UNWIND_CFA_RBP] = "rbp",       [UNWIND_CFA_PLT] = "plt",
		[UNWIND_CFA_SIGNAL] = "signal", [UNWIND_CFA_END] = "end",
		[UNWIND_CFA_UNSUPPORTED] = "unsupported",
	};

	return kind <= UNWIND_CFA_KIND_MAX ? names[kind] : "?";
}

void unwind_row_format(const struct unwind_row *r, char *buf, size_t len)
{
	switch (r->cfa_kind) {
	case UNWIND_CFA_RSP:
	case UNWIND_CFA_RBP:
		if (r->rbp_kind == UNWIND_RBP_AT_CFA)
			snprintf(buf, len, "cfa=%s+%d rbp=c%d", unwind_cfa_kind_name(r->cfa_kind),
				 r->cfa_off, r->rbp_off);
		else
			snprintf(buf, len, "cfa=%s+%d rbp=%s", unwind_cfa_kind_name(r->cfa_kind),
				 r->cfa_off, r->rbp_kind == UNWIND_RBP_SAME ? "same" : "undef");
		break;
	case UNWIND_CFA_PLT:
		snprintf(buf, len, "cfa=plt(rsp+%d, rip&15>=%d ? +8) rbp=same", r->cfa_off,
			 r->plt_threshold);
		break;
	default:
		snprintf(buf, len, "%s", unwind_cfa_kind_name(r->cfa_kind));
		break;
	}
}
