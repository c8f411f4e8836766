/* eh_frame: CIE/FDE parsing (the interpreter is in eh_frame_cfi.c); see eh_frame.h. */
#include "unwind/eh_frame_internal.h"

#include "common/hash.h"

#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eh_frame_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---- entry framing ---------------------------------------------------- */

/* Reads an entry's initial length.  On success *body is the first byte after
 * the length field, *end one past the entry, *offset_size 4 or 8. */
static int read_entry_header(struct walk *w, size_t pos, size_t *body, size_t *end,
			     unsigned *offset_size, bool *terminator)
{
	const struct eh_frame_section *sec = w->sec;
	struct dwarf_cursor c;
	uint64_t len;

	dwarf_cursor_init(&c, sec->data, pos, sec->size, sec->vaddr);
	len = dwarf_u32(&c);
	*offset_size = 4;
	*terminator = false;
	if (len == 0xffffffffu) {
		/* 64-bit DWARF: legal, though no toolchain emits it for x86_64. */
		len = dwarf_u64(&c);
		*offset_size = 8;
	} else if (len >= 0xfffffff0u) {
		return eh_frame_fail(w->err, w->errlen, "entry at %#zx: reserved length %#llx", pos,
			    (unsigned long long)len);
	}
	if (!dwarf_cursor_ok(&c))
		return eh_frame_fail(w->err, w->errlen, "entry at %#zx: truncated length", pos);
	if (len == 0) {
		*terminator = true;
		*body = c.pos;
		*end = c.pos;
		return 0;
	}
	if (len > dwarf_cursor_left(&c))
		return eh_frame_fail(w->err, w->errlen, "entry at %#zx: length %#llx runs past the section end",
			    pos, (unsigned long long)len);
	*body = c.pos;
	*end = c.pos + (size_t)len;
	return 0;
}

/* The CIE id (in a CIE) or CIE pointer (in an FDE) field. */
static uint64_t read_id(struct dwarf_cursor *c, const struct eh_frame_section *sec,
			unsigned offset_size)
{
	/* .eh_frame's id field stays 4 bytes even in 64-bit entries (LSB 4.1);
	 * .debug_frame's follows the DWARF offset size. */
	if (sec->is_debug_frame && offset_size == 8)
		return dwarf_u64(c);
	return dwarf_u32(c);
}

static bool is_cie_id(const struct eh_frame_section *sec, uint64_t id, unsigned offset_size)
{
	if (!sec->is_debug_frame)
		return id == 0;
	return offset_size == 8 ? id == UINT64_MAX : id == 0xffffffffu;
}

static int parse_cie(struct walk *w, size_t pos)
{
	const struct eh_frame_section *sec = w->sec;
	struct cie *cie = &w->cie;
	struct dwarf_cursor c;
	size_t body, end;
	unsigned offset_size;
	bool terminator;
	const char *aug;
	uint64_t id;

	if (cie->offset == pos)
		return 0;
	cie->offset = SIZE_MAX;
	if (read_entry_header(w, pos, &body, &end, &offset_size, &terminator) < 0)
		return -1;
	if (terminator)
		return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: zero length", pos);
	dwarf_cursor_init(&c, sec->data, body, end, sec->vaddr);
	id = read_id(&c, sec, offset_size);
	if (!is_cie_id(sec, id, offset_size))
		return eh_frame_fail(w->err, w->errlen, "entry at %#zx is referenced as a CIE but is not one", pos);

	memset(cie, 0, sizeof(*cie));
	cie->offset = SIZE_MAX;
	cie->addr_size = 8;
	cie->fde_enc = DW_EH_PE_absptr;
	cie->version = dwarf_u8(&c);
	if (cie->version != 1 && cie->version != 3 &&
	    !(sec->is_debug_frame && cie->version == 4))
		return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: unsupported version %u", pos, cie->version);
	aug = dwarf_cstr(&c, EH_FRAME_MAX_AUG_LEN);
	if (!aug)
		return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: bad augmentation string", pos);
	if (cie->version == 4) {
		uint8_t addr_size = dwarf_u8(&c);
		uint8_t seg_size = dwarf_u8(&c);

		if (dwarf_cursor_ok(&c) && (addr_size != 8 || seg_size != 0))
			return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: address size %u, segment size %u",
				    pos, addr_size, seg_size);
	}
	cie->code_align = dwarf_uleb(&c);
	cie->data_align = dwarf_sleb(&c);
	cie->ra_col = cie->version == 1 ? dwarf_u8(&c) : dwarf_uleb(&c);
	if (!dwarf_cursor_ok(&c))
		return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: truncated header", pos);
	/* Factors far from x86_64's 1 and -8 only serve to overflow offsets. */
	if (cie->code_align == 0 || cie->code_align > 256 || cie->data_align == 0 ||
	    cie->data_align > 256 || cie->data_align < -256)
		return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: alignment factors %llu/%lld out of range",
			    pos, (unsigned long long)cie->code_align, (long long)cie->data_align);

	if (aug[0] == 'z') {
		uint64_t aug_len = dwarf_uleb(&c);
		size_t aug_end;

		if (!dwarf_cursor_ok(&c) || aug_len > dwarf_cursor_left(&c))
			return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: augmentation data past the entry", pos);
		aug_end = c.pos + (size_t)aug_len;
		cie->has_z = true;
		for (const char *p = aug + 1; *p; p++) {
			if (*p == 'R') {
				cie->fde_enc = dwarf_u8(&c);
				if (!dwarf_ptr_enc_valid(cie->fde_enc) ||
				    (cie->fde_enc & DW_EH_PE_indirect))
					return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: FDE pointer encoding %#x",
						    pos, cie->fde_enc);
			} else if (*p == 'P') {
				uint8_t penc = dwarf_u8(&c);

				/* The personality routine is irrelevant to unwinding; read it
				 * only to step over it (never dereferenced). */
				dwarf_encoded_ptr(&c, penc, 8, &sec->bases);
			} else if (*p == 'L') {
				dwarf_u8(&c);
			} else if (*p == 'S') {
				cie->signal_frame = true;
			} else if (*p == 'B' || *p == 'G') {
				/* AArch64 BTI / MTE markers: no data. */
			} else {
				/* Unknown letter: its data layout is unknown, but 'z' tells
				 * us where the augmentation ends, so skip the rest. */
				break;
			}
			if (!dwarf_cursor_ok(&c) || c.pos > aug_end)
				return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: bad augmentation data", pos);
		}
		c.pos = aug_end;
	} else if (aug[0] != '\0') {
		/* Pre-'z' GCC augmentations ("eh") have no length to skip by. */
		return eh_frame_fail(w->err, w->errlen, "CIE at %#zx: unsupported augmentation \"%s\"", pos, aug);
	}
	cie->insn_start = c.pos;
	cie->insn_end = end;
	cie->offset = pos;
	return 0;
}

/* ---- The CIE cache --------------------------------------------------------- */

static size_t cie_slot(const struct walk *w, size_t pos)
{
	size_t i = (size_t)hash_fnv1a64_update(HASH_FNV1A64_SEED, &pos, sizeof(pos)) & (w->cies_cap - 1);

	while (w->cies[i].cie.offset != SIZE_MAX && w->cies[i].cie.offset != pos)
		i = (i + 1) & (w->cies_cap - 1);
	return i;
}

/* Keep the table at most half full: double it (rehashing) when it would not be. */
static int cie_cache_reserve(struct walk *w)
{
	struct cie_cached *old = w->cies, *n;
	size_t oldcap = w->cies_cap, cap = oldcap ? oldcap * 2 : 16, i;

	if ((w->ncies + 1) * 2 <= oldcap)
		return 0;
	n = malloc(cap * sizeof(*n));
	if (n == NULL)
		return eh_frame_fail(w->err, w->errlen, "out of memory for %zu CIEs", w->ncies + 1);
	for (i = 0; i < cap; i++)
		n[i].cie.offset = SIZE_MAX;
	w->cies = n;
	w->cies_cap = cap;
	for (i = 0; i < oldcap; i++)
		if (old[i].cie.offset != SIZE_MAX)
			n[cie_slot(w, old[i].cie.offset)] = old[i];
	free(old);
	return 0;
}

/*
 * Make the CIE at pos the current one (w->cie, w->cie_init, w->cie_rr):
 * parsed and its initial instructions run the first time only.
 */
static int cie_lookup(struct walk *w, size_t pos, struct eh_frame_counts *counts)
{
	struct cie_cached *e;

	if (w->cies_cap > 0) {
		e = &w->cies[cie_slot(w, pos)];
		if (e->cie.offset == pos) {
			w->cie = e->cie;
			w->cie_init = e->init;
			w->cie_rr = e->rr;
			return 0;
		}
	}
	counts->n_cie_parsed++;
	if (parse_cie(w, pos) < 0)
		return -1;
	memset(&w->cie_init, 0, sizeof(w->cie_init));
	w->nrows = 0;
	/* No locations in a CIE (an advance makes it RUN_BAD_CFI before any row):
	 * the outcome does not depend on the FDE's range. */
	w->cie_rr = eh_frame_run_cfi(w, w->cie.insn_start, w->cie.insn_end, &w->cie_init, NULL, 0,
				     UINT64_MAX, w->cie.fde_enc);
	if (w->cie_rr == RUN_ERROR || cie_cache_reserve(w) < 0)
		return -1;
	e = &w->cies[cie_slot(w, pos)];
	e->cie = w->cie;
	e->init = w->cie_init;
	e->rr = w->cie_rr;
	w->ncies++;
	return 0;
}

/* ---- FDEs --------------------------------------------------------------- */

static int parse_fde(struct walk *w, size_t pos, size_t id_pos, uint64_t id, unsigned id_size,
		     size_t end, eh_frame_fde_fn fn, void *arg, struct eh_frame_counts *counts)
{
	const struct eh_frame_section *sec = w->sec;
	struct eh_frame_fde fde;
	struct cfi_state init, st;
	struct dwarf_cursor c;
	uint64_t cie_pos, range;
	enum run_result rr;

	if (sec->is_debug_frame) {
		cie_pos = id;
	} else {
		/* .eh_frame: the pointer counts back from its own field. */
		if (id > id_pos)
			return eh_frame_fail(w->err, w->errlen, "FDE at %#zx: CIE pointer %#llx before the section",
				    pos, (unsigned long long)id);
		cie_pos = id_pos - id;
	}
	if (cie_pos == pos)
		return eh_frame_fail(w->err, w->errlen, "FDE at %#zx: CIE pointer points at the FDE itself",
				     pos);
	if (cie_pos >= sec->size)
		return eh_frame_fail(w->err, w->errlen, "FDE at %#zx: CIE pointer %#llx outside the section",
			    pos, (unsigned long long)cie_pos);
	if (w->cie.offset != cie_pos && cie_lookup(w, (size_t)cie_pos, counts) < 0)
		return -1;

	dwarf_cursor_init(&c, sec->data, id_pos, end, sec->vaddr);
	dwarf_skip(&c, id_size);
	memset(&fde, 0, sizeof(fde));
	fde.offset = pos;
	fde.signal_frame = w->cie.signal_frame;
	fde.pc_begin = dwarf_encoded_ptr(&c, w->cie.fde_enc, w->cie.addr_size, &sec->bases);
	/* The range uses only the format part of the encoding. */
	range = dwarf_encoded_ptr(&c, w->cie.fde_enc & 0x0f, w->cie.addr_size, NULL);
	if (w->cie.has_z) {
		uint64_t aug_len = dwarf_uleb(&c);

		dwarf_skip(&c, aug_len);
	}
	if (!dwarf_cursor_ok(&c))
		return eh_frame_fail(w->err, w->errlen, "FDE at %#zx: truncated header", pos);
	counts->n_fde++;
	/* Zero-length FDEs (discarded sections, pc 0 in relocatable leftovers)
	 * describe nothing; ranges that wrap describe nonsense. */
	if (range == 0 || fde.pc_begin == 0 || range > UINT64_MAX - fde.pc_begin)
		return 0;
	fde.pc_end = fde.pc_begin + range;

	init = w->cie_init;
	w->nrows = 0;
	w->fde_offset = pos;
	rr = w->cie_rr;
	if (rr == RUN_OK) {
		st = init;
		rr = eh_frame_run_cfi(w, c.pos, end, &st, &init, fde.pc_begin, fde.pc_end, w->cie.fde_enc);
	}
	if (rr == RUN_ERROR)
		return -1;
	if (rr == RUN_BAD_CFI) {
		/* One row for the whole FDE: it is covered, but not unwindable. */
		counts->n_bad_cfi++;
		fde.bad_cfi = true;
		w->nrows = 0;
		if (eh_frame_emit_row(w, &init, fde.pc_begin) < 0)
			return -1;
		memset(&w->rows[0], 0, sizeof(w->rows[0]));
		w->rows[0].pc = fde.pc_begin;
		w->rows[0].cfa_kind = UNWIND_CFA_UNSUPPORTED;
	}
	w->rows_done += w->nrows;
	return fn(arg, &fde, w->rows, w->nrows, w->err, w->errlen);
}

int eh_frame_parse(const struct eh_frame_section *sec, eh_frame_fde_fn fn, void *arg,
		   struct eh_frame_counts *counts, char *err, size_t errlen)
{
	struct eh_frame_counts dummy;
	struct walk w;
	size_t pos = 0;
	int rc = -1;

	if (!counts)
		counts = &dummy;
	memset(counts, 0, sizeof(*counts));
	memset(&w, 0, sizeof(w));
	w.sec = sec;
	w.cie.offset = SIZE_MAX;
	w.err = err;
	w.errlen = errlen;
	w.max_rows = sec->prior_rows < UNWIND_TABLE_MAX_ROWS ?
		     UNWIND_TABLE_MAX_ROWS - sec->prior_rows : 0;

	/* Each iteration moves pos forward by at least 4 bytes, so the walk
	 * ends; CIEs are only looked up, never chained, so no entry loops. */
	while (pos < sec->size) {
		size_t body, end;
		unsigned offset_size;
		bool terminator;
		struct dwarf_cursor c;
		uint64_t id;

		if (read_entry_header(&w, pos, &body, &end, &offset_size, &terminator) < 0)
			goto out;
		if (terminator) {
			/* .eh_frame ends at its zero terminator (what the runtime
			 * unwinder does); .debug_frame may pad with zeros. */
			if (!sec->is_debug_frame)
				break;
			pos = end;
			continue;
		}
		dwarf_cursor_init(&c, sec->data, body, end, sec->vaddr);
		id = read_id(&c, sec, offset_size);
		if (!dwarf_cursor_ok(&c)) {
			eh_frame_fail(err, errlen, "entry at %#zx: truncated id", pos);
			goto out;
		}
		if (!is_cie_id(sec, id, offset_size) &&
		    parse_fde(&w, pos, body, id, (unsigned)(c.pos - body), end, fn, arg, counts) < 0)
			goto out;
		pos = end;
	}
	rc = 0;
out:
	free(w.rows);
	free(w.cies);
	return rc;
}

int eh_frame_hdr_parse(const uint8_t *data, size_t size, uint64_t vaddr,
		       uint64_t *eh_frame_ptr, uint64_t *fde_count, char *err, size_t errlen)
{
	struct dwarf_ptr_bases bases = { .data = vaddr };
	struct dwarf_cursor c;
	uint8_t version, ptr_enc, count_enc;

	dwarf_cursor_init(&c, data, 0, size, vaddr);
	version = dwarf_u8(&c);
	ptr_enc = dwarf_u8(&c);
	count_enc = dwarf_u8(&c);
	dwarf_u8(&c); /* table_enc: the search table is not used */
	if (!dwarf_cursor_ok(&c))
		return eh_frame_fail(err, errlen, ".eh_frame_hdr: truncated");
	if (version != 1)
		return eh_frame_fail(err, errlen, ".eh_frame_hdr: version %u", version);
	*eh_frame_ptr = dwarf_encoded_ptr(&c, ptr_enc, 8, &bases);
	*fde_count = count_enc == DW_EH_PE_omit ? 0 : dwarf_encoded_ptr(&c, count_enc, 8, &bases);
	if (!dwarf_cursor_ok(&c))
		return eh_frame_fail(err, errlen, ".eh_frame_hdr: bad pointer encoding");
	return 0;
}
