/* eh_frame_cfi: the DWARF CFI interpreter for x86_64, and the conversion of
 * its register rules into unwind rows (the rules are in unwind_table.h). */
#include "unwind/eh_frame_internal.h"

#include "common/array_grow.h"

#include <stdlib.h>
#include <string.h>

/* ---- the CFI interpreter ---------------------------------------------- */

/* Recognise the expression GNU ld emits for lazy .plt entries:
 *   DW_OP_breg7 (rsp) N; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
 *   DW_OP_litK; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. CFA = RSP + N + ((RIP & 15) >= K ? 8 : 0).  (K is 11 for the
 * classic 16-byte entry, smaller for the IBT/BND variants.) */
static bool match_plt_expr(const uint8_t *e, size_t len, int64_t *off, uint8_t *threshold)
{
	static const uint8_t tail[] = { 0x2a /* ge */, 0x33 /* lit3 */, 0x24 /* shl */,
					0x22 /* plus */ };

	if (len != 11 || e[0] != 0x77 || (e[1] & 0x80) || e[2] != 0x80 || e[3] != 0x00 ||
	    e[4] != 0x3f || e[5] != 0x1a || e[6] < 0x30 || e[6] > 0x3f ||
	    memcmp(e + 7, tail, sizeof(tail)) != 0)
		return false;
	/* One-byte SLEB128: bit 6 is the sign. */
	*off = (e[1] & 0x40) ? (int64_t)e[1] - 0x80 : e[1];
	*threshold = (uint8_t)(e[6] - 0x30);
	return true;
}

static struct cfi_reg *reg_slot(struct cfi_state *st, const struct cie *cie, uint64_t reg,
				struct cfi_reg **second)
{
	*second = NULL;
	if (reg == X86_64_DW_RBP) {
		if (reg == cie->ra_col)
			*second = &st->ra;
		return &st->rbp;
	}
	if (reg == cie->ra_col)
		return &st->ra;
	return NULL;
}

static void set_rule(struct cfi_state *st, const struct cie *cie, uint64_t reg,
		     uint8_t rule, int64_t off)
{
	struct cfi_reg *second;
	struct cfi_reg *r = reg_slot(st, cie, reg, &second);

	if (r) {
		r->rule = rule;
		r->off = off;
	}
	if (second) {
		second->rule = rule;
		second->off = off;
	}
}

static void restore_rule(struct cfi_state *st, const struct cfi_state *init,
			 const struct cie *cie, uint64_t reg)
{
	if (reg == X86_64_DW_RBP)
		st->rbp = init->rbp;
	if (reg == cie->ra_col)
		st->ra = init->ra;
}

/* Offsets are uleb/sleb times data_align; keep them in a range where the
 * arithmetic cannot overflow (anything beyond it is unusable anyway). */
static bool scaled(int64_t v, int64_t factor, int64_t *out)
{
	if (v > (INT64_C(1) << 40) || v < -(INT64_C(1) << 40))
		return false;
	*out = v * factor;
	return true;
}

static bool uleb_off(struct dwarf_cursor *c, uint64_t *v)
{
	*v = dwarf_uleb(c);
	return dwarf_cursor_ok(c) && *v <= (UINT64_C(1) << 40);
}

/* Convert the interpreter's state into a row (x86_64 rules, unwind_table.h). */
static struct unwind_row state_to_row(const struct cfi_state *st, const struct cie *cie,
				      uint64_t pc)
{
	struct unwind_row r;

	memset(&r, 0, sizeof(r));
	r.pc = pc;
	if (cie->signal_frame) {
		r.cfa_kind = UNWIND_CFA_SIGNAL;
		return r;
	}
	if (cie->ra_col != X86_64_DW_RIP) {
		r.cfa_kind = UNWIND_CFA_UNSUPPORTED;
		return r;
	}
	if (st->ra.rule == RULE_UNDEF) {
		r.cfa_kind = UNWIND_CFA_END;
		return r;
	}
	if (st->ra.rule != RULE_OFFSET || st->ra.off != -8) {
		r.cfa_kind = UNWIND_CFA_UNSUPPORTED;
		return r;
	}
	if (st->cfa_rule == CFA_PLT) {
		if (st->cfa_off < 0 || st->cfa_off > UNWIND_PLT_OFF_MAX) {
			r.cfa_kind = UNWIND_CFA_UNSUPPORTED;
			return r;
		}
		r.cfa_kind = UNWIND_CFA_PLT;
		r.cfa_off = (int32_t)st->cfa_off;
		r.plt_threshold = st->plt_threshold;
		return r;
	}
	if (st->cfa_rule != CFA_REG ||
	    (st->cfa_reg != X86_64_DW_RSP && st->cfa_reg != X86_64_DW_RBP) ||
	    st->cfa_off < UNWIND_CFA_OFF_MIN || st->cfa_off > UNWIND_CFA_OFF_MAX) {
		r.cfa_kind = UNWIND_CFA_UNSUPPORTED;
		return r;
	}
	r.cfa_kind = st->cfa_reg == X86_64_DW_RSP ? UNWIND_CFA_RSP : UNWIND_CFA_RBP;
	r.cfa_off = (int32_t)st->cfa_off;
	if (st->rbp.rule == RULE_UNSPEC || st->rbp.rule == RULE_SAME) {
		r.rbp_kind = UNWIND_RBP_SAME;
	} else if (st->rbp.rule == RULE_OFFSET && st->rbp.off >= UNWIND_RBP_OFF_MIN &&
		   st->rbp.off <= UNWIND_RBP_OFF_MAX) {
		r.rbp_kind = UNWIND_RBP_AT_CFA;
		r.rbp_off = (int16_t)st->rbp.off;
	} else {
		r.rbp_kind = UNWIND_RBP_UNDEFINED;
	}
	return r;
}

int eh_frame_emit_row(struct walk *w, const struct cfi_state *st, uint64_t pc)
{
	struct unwind_row r = state_to_row(st, &w->cie, pc);

	/* Several rules may change at one pc (advance_loc 0, or CIE + FDE
	 * instructions at pc_begin): the last state there wins. */
	if (w->nrows > 0 && w->rows[w->nrows - 1].pc == pc) {
		w->rows[w->nrows - 1] = r;
		return 0;
	}
	/* Checked before the buffer grows: it never holds more than max_rows
	 * (array_grow doubles from 64, so at most UNWIND_TABLE_MAX_ROWS). */
	if (w->nrows >= w->max_rows - w->rows_done)
		return eh_frame_fail(w->err, w->errlen,
				     "%s FDE at %#zx: more than %u rows, the table's limit "
				     "(%zu rows before this FDE)",
				     w->sec->is_debug_frame ? ".debug_frame" : ".eh_frame",
				     w->fde_offset, UNWIND_TABLE_MAX_ROWS,
				     w->rows_done + w->sec->prior_rows);
	if (array_grow((void **)&w->rows, &w->cap, w->nrows + 1, sizeof(*w->rows)) < 0)
		return eh_frame_fail(w->err, w->errlen, "out of memory");
	w->rows[w->nrows++] = r;
	return 0;
}

/* Run instructions [start, end) over *st.  init is the state after the CIE's
 * initial instructions (NULL while running those: restore and advance are
 * then meaningless and make the CFI unusable).  Rows are emitted as the
 * location advances when emitting (FDE programs). */
enum run_result eh_frame_run_cfi(struct walk *w, size_t start, size_t end, struct cfi_state *st,
					 const struct cfi_state *init, uint64_t pc_begin,
					 uint64_t pc_end, uint8_t fde_enc)
{
	const struct eh_frame_section *sec = w->sec;
	const struct cie *cie = &w->cie;
	struct cfi_state stack[EH_FRAME_MAX_STATE_STACK];
	unsigned depth = 0;
	uint64_t loc = pc_begin;
	struct dwarf_cursor c;

	dwarf_cursor_init(&c, sec->data, start, end, sec->vaddr);
	while (dwarf_cursor_left(&c) > 0) {
		uint8_t op = dwarf_u8(&c);
		uint64_t reg = 0, u = 0, delta = 0;
		int64_t s = 0, off = 0;
		bool advance = false;

		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			delta = op & 0x3f;
			advance = true;
			break;
		case 2: /* DW_CFA_offset */
			if (!uleb_off(&c, &u) || !scaled((int64_t)u, cie->data_align, &off))
				return RUN_BAD_CFI;
			set_rule(st, cie, op & 0x3f, RULE_OFFSET, off);
			continue;
		case 3: /* DW_CFA_restore */
			if (!init)
				return RUN_BAD_CFI;
			restore_rule(st, init, cie, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x40 ... 0x7f: /* DW_CFA_advance_loc, decoded above */
			break;
		case 0x00: /* nop */
			break;
		case 0x01: { /* set_loc */
			struct dwarf_ptr_bases b = sec->bases;
			uint64_t to = dwarf_encoded_ptr(&c, fde_enc, cie->addr_size, &b);

			if (!dwarf_cursor_ok(&c) || to < loc)
				return RUN_BAD_CFI;
			delta = to - loc;
			advance = true;
			break;
		}
		case 0x02: /* advance_loc1 */
			delta = dwarf_u8(&c);
			advance = true;
			break;
		case 0x03: /* advance_loc2 */
			delta = dwarf_u16(&c);
			advance = true;
			break;
		case 0x04: /* advance_loc4 */
			delta = dwarf_u32(&c);
			advance = true;
			break;
		case 0x05: /* offset_extended */
			reg = dwarf_uleb(&c);
			if (!uleb_off(&c, &u) || !scaled((int64_t)u, cie->data_align, &off))
				return RUN_BAD_CFI;
			set_rule(st, cie, reg, RULE_OFFSET, off);
			break;
		case 0x06: /* restore_extended */
			reg = dwarf_uleb(&c);
			if (!init)
				return RUN_BAD_CFI;
			restore_rule(st, init, cie, reg);
			break;
		case 0x07: /* undefined */
			set_rule(st, cie, dwarf_uleb(&c), RULE_UNDEF, 0);
			break;
		case 0x08: /* same_value */
			set_rule(st, cie, dwarf_uleb(&c), RULE_SAME, 0);
			break;
		case 0x09: /* register */
			reg = dwarf_uleb(&c);
			dwarf_uleb(&c);
			set_rule(st, cie, reg, RULE_OTHER, 0);
			break;
		case 0x0a: /* remember_state */
			if (depth == EH_FRAME_MAX_STATE_STACK)
				return RUN_BAD_CFI;
			stack[depth++] = *st;
			break;
		case 0x0b: /* restore_state: the CFA rule is part of the state too */
			if (depth == 0)
				return RUN_BAD_CFI;
			*st = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			st->cfa_reg = dwarf_uleb(&c);
			if (!uleb_off(&c, &u))
				return RUN_BAD_CFI;
			st->cfa_rule = CFA_REG;
			st->cfa_off = (int64_t)u;
			break;
		case 0x0d: /* def_cfa_register: keeps the offset; after an expression it is ill-formed */
			st->cfa_reg = dwarf_uleb(&c);
			if (st->cfa_rule != CFA_REG)
				st->cfa_rule = CFA_OTHER;
			break;
		case 0x0e: /* def_cfa_offset */
			if (!uleb_off(&c, &u))
				return RUN_BAD_CFI;
			st->cfa_off = (int64_t)u;
			if (st->cfa_rule != CFA_REG)
				st->cfa_rule = CFA_OTHER;
			break;
		case 0x0f: { /* def_cfa_expression */
			uint64_t len = dwarf_uleb(&c);
			const uint8_t *expr = c.buf + c.pos;

			dwarf_skip(&c, len);
			if (!dwarf_cursor_ok(&c))
				return RUN_BAD_CFI;
			if (match_plt_expr(expr, (size_t)len, &off, &st->plt_threshold)) {
				st->cfa_rule = CFA_PLT;
				st->cfa_off = off;
			} else {
				st->cfa_rule = CFA_OTHER;
			}
			break;
		}
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = dwarf_uleb(&c);
			dwarf_skip(&c, dwarf_uleb(&c));
			set_rule(st, cie, reg, RULE_OTHER, 0);
			break;
		case 0x11: /* offset_extended_sf */
			reg = dwarf_uleb(&c);
			s = dwarf_sleb(&c);
			if (!scaled(s, cie->data_align, &off))
				return RUN_BAD_CFI;
			set_rule(st, cie, reg, RULE_OFFSET, off);
			break;
		case 0x12: /* def_cfa_sf */
			st->cfa_reg = dwarf_uleb(&c);
			s = dwarf_sleb(&c);
			if (!scaled(s, cie->data_align, &off))
				return RUN_BAD_CFI;
			st->cfa_rule = CFA_REG;
			st->cfa_off = off;
			break;
		case 0x13: /* def_cfa_offset_sf */
			s = dwarf_sleb(&c);
			if (!scaled(s, cie->data_align, &off))
				return RUN_BAD_CFI;
			st->cfa_off = off;
			if (st->cfa_rule != CFA_REG)
				st->cfa_rule = CFA_OTHER;
			break;
		case 0x14: /* val_offset */
			reg = dwarf_uleb(&c);
			dwarf_uleb(&c);
			set_rule(st, cie, reg, RULE_OTHER, 0);
			break;
		case 0x15: /* val_offset_sf */
			reg = dwarf_uleb(&c);
			dwarf_sleb(&c);
			set_rule(st, cie, reg, RULE_OTHER, 0);
			break;
		case 0x2e: /* GNU_args_size: only matters to landing pads */
			dwarf_uleb(&c);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = dwarf_uleb(&c);
			if (!uleb_off(&c, &u) || !scaled(-(int64_t)u, cie->data_align, &off))
				return RUN_BAD_CFI;
			set_rule(st, cie, reg, RULE_OFFSET, off);
			break;
		default:
			return RUN_BAD_CFI;
		}
		if (!dwarf_cursor_ok(&c))
			return RUN_BAD_CFI;
		if (!advance)
			continue;
		if (!init)
			return RUN_BAD_CFI; /* no locations in a CIE */
		if (delta > UINT64_MAX / cie->code_align)
			return RUN_BAD_CFI;
		delta *= cie->code_align;
		/* The row for [loc, loc + delta) is complete. */
		if (eh_frame_emit_row(w, st, loc) < 0)
			return RUN_ERROR;
		if (delta >= pc_end - loc)
			return RUN_OK; /* later rows would lie past the FDE */
		loc += delta;
	}
	if (init && eh_frame_emit_row(w, st, loc) < 0)
		return RUN_ERROR;
	return RUN_OK;
}

