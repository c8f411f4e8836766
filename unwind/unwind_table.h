/* unwind_table: compact, sorted x86_64 unwind rows built from a binary's
 * .eh_frame / .debug_frame, the form in which the BPF walker consumes them.
 *
 * A row says how to find the caller's frame for every pc from row.pc up to
 * the next row's pc (the last row covers everything above it):
 *
 *   cfa_kind RSP / RBP:  CFA = RSP (or RBP) + cfa_off;
 *                        return address at CFA - 8 (always: rows where the
 *                        CFI says otherwise are UNSUPPORTED);
 *                        caller's RSP = CFA;
 *                        rbp_kind SAME: caller's RBP = RBP;
 *                        rbp_kind AT_CFA: caller's RBP = *(CFA + rbp_off);
 *                        rbp_kind UNDEFINED: caller's RBP is not recoverable.
 *   cfa_kind PLT:        a lazy-binding PLT stub; CFA = RSP + cfa_off +
 *                        ((RIP & 15) >= plt_threshold ? 8 : 0), RBP unchanged.
 *   cfa_kind SIGNAL:     a signal trampoline (CIE augmentation 'S'); the
 *                        interrupted registers are in the kernel's sigframe.
 *   cfa_kind END:        outermost frame (return address undefined): stop.
 *   cfa_kind UNSUPPORTED: CFI the rows cannot express; fall back to FP.
 *   cfa_kind NONE:       no unwind information covers this pc.
 *
 * docs/UNWINDING.md has the full rules. */
#ifndef LOWPROF_UNWIND_UNWIND_TABLE_H
#define LOWPROF_UNWIND_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

enum unwind_cfa_kind {
	UNWIND_CFA_NONE = 0,
	UNWIND_CFA_RSP = 1,
	UNWIND_CFA_RBP = 2,
	UNWIND_CFA_PLT = 3,
	UNWIND_CFA_SIGNAL = 4,
	UNWIND_CFA_END = 5,
	UNWIND_CFA_UNSUPPORTED = 6,
	UNWIND_CFA_KIND_MAX = UNWIND_CFA_UNSUPPORTED,
};

enum unwind_rbp_kind {
	UNWIND_RBP_SAME = 0,
	UNWIND_RBP_AT_CFA = 1,
	UNWIND_RBP_UNDEFINED = 2,
	UNWIND_RBP_KIND_MAX = UNWIND_RBP_UNDEFINED,
};

/* Ranges the builder produces and the validator enforces.  A rule outside
 * them becomes UNSUPPORTED (CFA) or UNDEFINED (RBP) rather than an error. */
#define UNWIND_CFA_OFF_MIN 0
#define UNWIND_CFA_OFF_MAX (16 * 1024 * 1024) /* 16 MiB stack frame */
#define UNWIND_RBP_OFF_MIN (-4096)
#define UNWIND_RBP_OFF_MAX (-8)
#define UNWIND_PLT_OFF_MAX 64
#define UNWIND_TABLE_MAX_ROWS (4u * 1024 * 1024)

/* 16 bytes, naturally aligned, the same layout in BPF. */
struct unwind_row {
	uint64_t pc;      /* first ELF virtual address the row covers */
	int32_t cfa_off;  /* RSP/RBP/PLT: offset added to the base register */
	union {
		int16_t rbp_off;       /* rbp_kind AT_CFA: saved RBP at CFA + rbp_off */
		int16_t plt_threshold; /* cfa_kind PLT: (RIP & 15) >= this adds 8 */
	};
	uint8_t cfa_kind; /* enum unwind_cfa_kind */
	uint8_t rbp_kind; /* enum unwind_rbp_kind */
};

_Static_assert(sizeof(struct unwind_row) == 16, "unwind_row is shared with BPF");

/* What the builder saw; not part of the serialised table. */
struct unwind_table_stats {
	uint32_t n_cie;            /* CIEs referenced by at least one FDE (cached parses) */
	uint32_t n_fde;            /* FDEs parsed in .eh_frame */
	uint32_t n_debug_fde;      /* FDEs parsed in .debug_frame */
	uint32_t n_fde_used;       /* FDEs that contributed rows */
	uint32_t n_fde_bad_cfi;    /* FDEs whose CFI program was unusable (rows UNSUPPORTED) */
	int64_t hdr_fde_count;     /* .eh_frame_hdr's fde_count, -1 if absent */
	uint32_t n_plt, n_signal, n_end, n_unsupported, n_gap; /* rows by mark */
};

struct unwind_table {
	struct unwind_row *rows; /* sorted by pc, strictly increasing, merged */
	size_t nrows;
	struct unwind_table_stats stats;
};

/* Build from an open ELF file (the fd is not closed; its offset is unused).
 * Returns 0, or -EINVAL (-ENOMEM) with a message in err.  On failure *out is empty. */
int unwind_table_build_fd(int fd, struct unwind_table *out, char *err, size_t errlen);
/* The same from an ELF image in memory (not modified, not retained). */
int unwind_table_build_mem(const void *image, size_t size, struct unwind_table *out,
			   char *err, size_t errlen);

void unwind_table_free(struct unwind_table *t);

/* Check what an untrusted builder produced: row count, strictly increasing
 * pcs, known kinds, offsets in range, unused fields zero.  0 or -EINVAL + err. */
int unwind_table_validate(const struct unwind_table *t, char *err, size_t errlen);

/* The row covering pc (the last row with row.pc <= pc), or NULL if pc is
 * below the first row.  Requires a validated table. */
const struct unwind_row *unwind_table_lookup(const struct unwind_table *t, uint64_t pc);

/* Flat little-endian form: 16-byte header ("LPUW", version, row size,
 * row count) followed by the rows.  serialize returns a malloc'd buffer. */
#define UNWIND_TABLE_MAGIC 0x5755504cu /* "LPUW" read as a little-endian u32 */
#define UNWIND_TABLE_VERSION 1
#define UNWIND_TABLE_HDR_SIZE 16
int unwind_table_serialize(const struct unwind_table *t, uint8_t **buf, size_t *len,
			   char *err, size_t errlen);
/* Decodes and validates; refuses any buffer that is not exactly one table. */
int unwind_table_deserialize(const uint8_t *buf, size_t len, struct unwind_table *out,
			     char *err, size_t errlen);

/* "rsp+8", "rbp+16", "plt(rsp+8,11)", "signal", "end", ... for logs and dumps. */
const char *unwind_cfa_kind_name(unsigned kind);
void unwind_row_format(const struct unwind_row *r, char *buf, size_t len);

#endif
