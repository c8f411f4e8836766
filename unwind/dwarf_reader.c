/* dwarf_reader: bounds-checked primitive reads; see dwarf_reader.h. */
#include "unwind/dwarf_reader.h"

#include <string.h>

void dwarf_cursor_init(struct dwarf_cursor *c, const uint8_t *buf, size_t pos,
		       size_t end, uint64_t vaddr)
{
	c->buf = buf;
	c->pos = pos;
	c->end = end;
	c->vaddr = vaddr;
	c->err = pos > end;
}

/* Copy n bytes out if they are all in bounds; otherwise set the sticky error. */
static bool take(struct dwarf_cursor *c, void *out, size_t n)
{
	if (c->err || c->pos > c->end || c->end - c->pos < n) {
		c->err = true;
		memset(out, 0, n);
		return false;
	}
	memcpy(out, c->buf + c->pos, n);
	c->pos += n;
	return true;
}

/* x86_64 only: the files we parse are little-endian like the host, which
 * the table builder checks (EM_X86_64, ELFDATA2LSB) before calling us. */
/* A fixed-size value: on a short read the cursor is in error and the value 0. */
#define DWARF_FIXED_READER(name, type)              \
	type name(struct dwarf_cursor *c)            \
	{                                            \
		type v;                              \
                                                     \
		take(c, &v, sizeof(v));              \
		return v;                            \
	}

DWARF_FIXED_READER(dwarf_u8, uint8_t)
DWARF_FIXED_READER(dwarf_u16, uint16_t)
DWARF_FIXED_READER(dwarf_u32, uint32_t)
DWARF_FIXED_READER(dwarf_u64, uint64_t)

/*
 * A LEB128 number of at most 10 bytes (64 bits). The 10th byte may only carry
 * what fits: the top bit of an unsigned value, or the sign extension of a
 * signed one. Sign-extended from the last byte's bit 6 when is_signed.
 */
static uint64_t dwarf_leb(struct dwarf_cursor *c, bool is_signed)
{
	uint64_t result = 0;
	unsigned shift = 0;

	for (int i = 0; i < 10; i++) {
		uint8_t b = dwarf_u8(c);

		if (c->err)
			return 0;
		if (shift == 63 && (is_signed ? (b != 0 && b != 0x7f) : (b & 0x7e) != 0)) {
			c->err = true;
			return 0;
		}
		result |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (is_signed && shift < 64 && (b & 0x40))
				result |= ~(uint64_t)0 << shift;
			return result;
		}
	}
	c->err = true;
	return 0;
}

uint64_t dwarf_uleb(struct dwarf_cursor *c)
{
	return dwarf_leb(c, false);
}

int64_t dwarf_sleb(struct dwarf_cursor *c)
{
	return (int64_t)dwarf_leb(c, true);
}

void dwarf_skip(struct dwarf_cursor *c, uint64_t n)
{
	if (c->err || c->pos > c->end || c->end - c->pos < n) {
		c->err = true;
		return;
	}
	c->pos += (size_t)n;
}

const char *dwarf_cstr(struct dwarf_cursor *c, size_t maxlen)
{
	size_t left = dwarf_cursor_left(c);
	const char *s;
	const void *nul;

	if (c->err)
		return NULL;
	s = (const char *)c->buf + c->pos;
	nul = memchr(s, '\0', left < maxlen + 1 ? left : maxlen + 1);
	if (!nul) {
		c->err = true;
		return NULL;
	}
	c->pos += (size_t)((const char *)nul - s) + 1;
	return s;
}

bool dwarf_ptr_enc_valid(uint8_t enc)
{
	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_uleb128:
	case DW_EH_PE_udata2:
	case DW_EH_PE_udata4:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sleb128:
	case DW_EH_PE_sdata2:
	case DW_EH_PE_sdata4:
	case DW_EH_PE_sdata8:
		break;
	default:
		return false;
	}
	/* 0x70 (application 7) is not defined; 0x80 (indirect) may combine. */
	return (enc & 0x70) <= DW_EH_PE_aligned;
}

uint64_t dwarf_encoded_ptr(struct dwarf_cursor *c, uint8_t enc, unsigned addr_size,
			   const struct dwarf_ptr_bases *bases)
{
	uint64_t field_addr = c->vaddr + c->pos;
	uint64_t base = 0;
	uint64_t v = 0;

	if (!dwarf_ptr_enc_valid(enc) || (addr_size != 4 && addr_size != 8)) {
		c->err = true;
		return 0;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		base = field_addr;
		break;
	case DW_EH_PE_textrel:
		base = bases ? bases->text : 0;
		break;
	case DW_EH_PE_datarel:
		base = bases ? bases->data : 0;
		break;
	case DW_EH_PE_funcrel:
		base = bases ? bases->func : 0;
		break;
	case DW_EH_PE_aligned: {
		/* The value sits at the next address_size-aligned address. */
		uint64_t misalign = field_addr % addr_size;

		if (misalign)
			dwarf_skip(c, addr_size - misalign);
		break;
	}
	}
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		v = addr_size == 8 ? dwarf_u64(c) : dwarf_u32(c);
		break;
	case DW_EH_PE_uleb128:
		v = dwarf_uleb(c);
		break;
	case DW_EH_PE_udata2:
		v = dwarf_u16(c);
		break;
	case DW_EH_PE_udata4:
		v = dwarf_u32(c);
		break;
	case DW_EH_PE_udata8:
		v = dwarf_u64(c);
		break;
	case DW_EH_PE_sleb128:
		v = (uint64_t)dwarf_sleb(c);
		break;
	case DW_EH_PE_sdata2:
		v = (uint64_t)(int64_t)(int16_t)dwarf_u16(c);
		break;
	case DW_EH_PE_sdata4:
		v = (uint64_t)(int64_t)(int32_t)dwarf_u32(c);
		break;
	case DW_EH_PE_sdata8:
		v = dwarf_u64(c);
		break;
	}
	if (c->err)
		return 0;
	/* Addresses wrap modulo 2^64 as in the linker's arithmetic. */
	return base + v;
}
