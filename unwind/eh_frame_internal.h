/* eh_frame_internal: what the entry parser (eh_frame.c) and the CFI
 * interpreter (eh_frame_cfi.c) share.  Not for use outside unwind/. */
#ifndef LOWPROF_UNWIND_EH_FRAME_INTERNAL_H
#define LOWPROF_UNWIND_EH_FRAME_INTERNAL_H

#include "unwind/eh_frame.h"

/* DWARF register numbers on x86_64 (System V psABI, figure 3.36). */
#define X86_64_DW_RBP 6
#define X86_64_DW_RSP 7
#define X86_64_DW_RIP 16

/* Rules we track for a register.  Only RBP and the return-address column
 * matter to the rows; every other register's operands are read and dropped. */
enum cfi_rule {
	RULE_UNSPEC = 0, /* no rule given: DWARF's "same value" by convention */
	RULE_UNDEF,
	RULE_SAME,
	RULE_OFFSET,     /* saved at CFA + off */
	RULE_OTHER,      /* val_offset, register, expression, val_expression */
};

enum cfa_rule {
	CFA_REG = 0,     /* CFA = reg + off */
	CFA_PLT,         /* the binutils .plt expression */
	CFA_OTHER,       /* any other expression, or nonsense like def_cfa_offset after one */
};

struct cfi_reg {
	uint8_t rule;
	int64_t off;
};

struct cfi_state {
	uint8_t cfa_rule;
	uint8_t plt_threshold;
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct cfi_reg rbp;
	struct cfi_reg ra;
};

struct cie {
	size_t offset;          /* of the CIE's length field; SIZE_MAX when none cached */
	uint8_t version;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_col;
	uint8_t fde_enc;        /* pointer encoding of the FDE's pc_begin */
	unsigned addr_size;
	bool has_z;             /* FDEs carry an augmentation data length */
	bool signal_frame;
	size_t insn_start, insn_end; /* initial instructions, offsets in the section */
};

/* Per-walk state: the CIE cache and the row buffer reused by every FDE. */
enum run_result { RUN_OK = 0, RUN_BAD_CFI = 1, RUN_ERROR = -1 };

/* A CIE parsed once, with the state its initial instructions leave: both
 * depend on the CIE alone (initial instructions never emit rows), so every
 * FDE reuses them and a parse stays linear in the section's size however many
 * FDEs point at one big CIE. */
struct cie_cached {
	struct cie cie;        /* cie.offset SIZE_MAX: an empty slot */
	struct cfi_state init;
	enum run_result rr;
};

struct walk {
	const struct eh_frame_section *sec;
	struct cie cie;
	struct cfi_state cie_init; /* the state after cie's initial instructions */
	enum run_result cie_rr;    /* and how they ran */
	struct cie_cached *cies;   /* open addressing by offset; a power of two long */
	size_t ncies, cies_cap;
	struct unwind_row *rows;   /* the current FDE's */
	size_t nrows, cap;
	size_t max_rows;           /* rows this walk may make in all (UNWIND_TABLE_MAX_ROWS
				    * less the section's prior_rows) */
	size_t rows_done;          /* rows handed to the callback so far */
	size_t fde_offset;         /* the FDE being run, for messages */
	char *err;
	size_t errlen;
};

int eh_frame_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int eh_frame_emit_row(struct walk *w, const struct cfi_state *st, uint64_t pc);
enum run_result eh_frame_run_cfi(struct walk *w, size_t start, size_t end,
				 struct cfi_state *st, const struct cfi_state *init,
				 uint64_t pc_begin, uint64_t pc_end, uint8_t fde_enc);

#endif
