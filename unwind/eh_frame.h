/* eh_frame: CIE/FDE parsing and the DWARF CFI interpreter for x86_64.
 *
 * Walks every entry of a .eh_frame or .debug_frame section, runs each FDE's
 * CIE initial instructions and its own program, and hands the resulting rows
 * (already in struct unwind_row form, see unwind_table.h) to a callback.
 *
 * Error policy: anything wrong with the section's structure (lengths, CIE
 * pointers, versions, augmentations, pointer encodings) rejects the whole
 * section, because once framing is in doubt nothing after it can be trusted.
 * A CFI program that cannot be interpreted (unknown opcode, truncated
 * operand, state-stack overflow) only costs its own FDE: it is reported with
 * bad_cfi set and a single UNSUPPORTED row.
 *
 * Rows are capped as they are made: once the rows handed to the callback so
 * far, plus the current FDE's, plus sec->prior_rows would pass
 * UNWIND_TABLE_MAX_ROWS (no table may hold more), the walk stops and rejects
 * the section (".eh_frame FDE at 0x...: more than 4194304 rows, ..."),
 * before the row buffer grows past that many (64 MiB).  A CFI program can
 * describe one row per byte (DW_CFA_advance_loc), so without this a 256 MiB
 * section made 4 GiB of rows for one FDE before any caller could count them.
 * Rows an FDE made before turning out bad_cfi count too. */
#ifndef LOWPROF_UNWIND_EH_FRAME_H
#define LOWPROF_UNWIND_EH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/dwarf_reader.h"
#include "unwind/unwind_table.h"

/* Nesting of DW_CFA_remember_state; GCC never goes past 2 or 3. */
#define EH_FRAME_MAX_STATE_STACK 16
/* A CIE's augmentation string is a handful of letters ("zPLRS", "zRSB"). */
#define EH_FRAME_MAX_AUG_LEN 16

struct eh_frame_section {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr;              /* sh_addr: the pcrel base of data[0] */
	bool is_debug_frame;         /* .debug_frame rules: CIE id ~0, absolute CIE offsets */
	struct dwarf_ptr_bases bases; /* textrel / datarel bases */
	size_t prior_rows;           /* rows the caller already holds (other sections):
				      * counted against UNWIND_TABLE_MAX_ROWS */
};

struct eh_frame_fde {
	size_t offset;       /* of the FDE's length field in its section */
	uint64_t pc_begin;
	uint64_t pc_end;     /* exclusive; > pc_begin */
	bool signal_frame;   /* its CIE has augmentation 'S' */
	bool bad_cfi;        /* the program could not be interpreted */
};

/* rows: nrows >= 1 rows, rows[0].pc == pc_begin, strictly increasing pcs,
 * all < pc_end.  Return 0 to go on, non-zero to stop the walk with an error
 * (the callback writes its own message into err). */
typedef int (*eh_frame_fde_fn)(void *arg, const struct eh_frame_fde *fde,
			       const struct unwind_row *rows, size_t nrows,
			       char *err, size_t errlen);

struct eh_frame_counts {
	uint32_t n_cie_parsed;
	uint32_t n_fde;
	uint32_t n_bad_cfi;
};

int eh_frame_parse(const struct eh_frame_section *sec, eh_frame_fde_fn fn, void *arg,
		   struct eh_frame_counts *counts, char *err, size_t errlen);

/* .eh_frame_hdr: version 1, the encoded .eh_frame pointer and FDE count. */
int eh_frame_hdr_parse(const uint8_t *data, size_t size, uint64_t vaddr,
		       uint64_t *eh_frame_ptr, uint64_t *fde_count, char *err, size_t errlen);

#endif
