/* dwarf_reader: bounds-checked reads of the primitive DWARF encodings used by
 * .eh_frame and .debug_frame (fixed-size integers, LEB128, DW_EH_PE pointers).
 *
 * Every read goes through a cursor whose error flag is sticky: after the first
 * out-of-bounds or malformed read the cursor stops moving and every later read
 * returns 0.  Callers check dwarf_cursor_ok() at the points where a bad value
 * would matter, which keeps the parsing code straight-line while making it
 * impossible to read past the end of the buffer. */
#ifndef LOWPROF_UNWIND_DWARF_READER_H
#define LOWPROF_UNWIND_DWARF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DW_EH_PE_* pointer encodings (LSB, "Exception Frames"). */
enum {
	DW_EH_PE_absptr = 0x00,
	DW_EH_PE_uleb128 = 0x01,
	DW_EH_PE_udata2 = 0x02,
	DW_EH_PE_udata4 = 0x03,
	DW_EH_PE_udata8 = 0x04,
	DW_EH_PE_sleb128 = 0x09,
	DW_EH_PE_sdata2 = 0x0a,
	DW_EH_PE_sdata4 = 0x0b,
	DW_EH_PE_sdata8 = 0x0c,
	DW_EH_PE_pcrel = 0x10,
	DW_EH_PE_textrel = 0x20,
	DW_EH_PE_datarel = 0x30,
	DW_EH_PE_funcrel = 0x40,
	DW_EH_PE_aligned = 0x50,
	DW_EH_PE_indirect = 0x80,
	DW_EH_PE_omit = 0xff,
};

struct dwarf_cursor {
	const uint8_t *buf; /* start of the whole section: offsets are relative to it */
	size_t pos;         /* next byte to read */
	size_t end;         /* one past the last readable byte (<= section size) */
	uint64_t vaddr;     /* ELF virtual address of buf[0], the base of pcrel */
	bool err;           /* sticky: set by the first bad read */
};

/* Bases for the pointer applications other than pcrel. */
struct dwarf_ptr_bases {
	uint64_t text; /* DW_EH_PE_textrel: address of .text */
	uint64_t data; /* DW_EH_PE_datarel: .got for .eh_frame, the header for .eh_frame_hdr */
	uint64_t func; /* DW_EH_PE_funcrel: start of the current function */
};

void dwarf_cursor_init(struct dwarf_cursor *c, const uint8_t *buf, size_t pos,
		       size_t end, uint64_t vaddr);

static inline bool dwarf_cursor_ok(const struct dwarf_cursor *c)
{
	return !c->err;
}

static inline size_t dwarf_cursor_left(const struct dwarf_cursor *c)
{
	return c->err || c->pos >= c->end ? 0 : c->end - c->pos;
}

uint8_t dwarf_u8(struct dwarf_cursor *c);
uint16_t dwarf_u16(struct dwarf_cursor *c);
uint32_t dwarf_u32(struct dwarf_cursor *c);
uint64_t dwarf_u64(struct dwarf_cursor *c);
/* LEB128 values longer than 10 bytes, or whose bits do not fit 64, are errors. */
uint64_t dwarf_uleb(struct dwarf_cursor *c);
int64_t dwarf_sleb(struct dwarf_cursor *c);
/* Advance by n bytes; an error if fewer than n remain. */
void dwarf_skip(struct dwarf_cursor *c, uint64_t n);
/* A NUL-terminated string of at most maxlen bytes (without the NUL); returns
 * NULL (and sets the error) if it is longer or not terminated in bounds. */
const char *dwarf_cstr(struct dwarf_cursor *c, size_t maxlen);

/* Read a pointer encoded with `enc`.  addr_size is the size of
 * DW_EH_PE_absptr (8 on x86_64).  DW_EH_PE_indirect is decoded but not
 * followed (we never read process memory; callers that need the final value
 * reject it).  An unknown encoding or DW_EH_PE_omit is an error. */
uint64_t dwarf_encoded_ptr(struct dwarf_cursor *c, uint8_t enc, unsigned addr_size,
			   const struct dwarf_ptr_bases *bases);

/* True if `enc` is an encoding dwarf_encoded_ptr understands. */
bool dwarf_ptr_enc_valid(uint8_t enc);

#endif
