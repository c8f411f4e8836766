/*
 * Does the code before an address end with an x86-64 call instruction, as
 * the code before a return address does? The DWARF walker asks it of a
 * frame-pointer step it cannot check against a table (bpf/unwind_dwarf.bpf.h,
 * dwarf_fp_step before a table); kept apart, free of libc, so that a unit test
 * decodes the same bytes (tests/unit/test_call_insn.c).
 */
#ifndef LOWPROF_BPF_CALL_INSN_H
#define LOWPROF_BPF_CALL_INSN_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space; the BPF side has vmlinux.h */
#endif

/* The bytes before the address that are looked at. */
#define LOWPROF_CALL_WINDOW 8

/*
 * The length of an indirect call (FF /2: ModRM's reg field 2) from its
 * ModRM byte and the SIB byte after it (when ModRM says there is one), or
 * 0 if modrm is not a call's: FF /4 (jmp), /6 (push) and the others are
 * not.
 */
static inline __u32 lowprof_call_ff_len(__u8 modrm, __u8 sib)
{
	__u32 mod = modrm >> 6, rm = modrm & 7, len = 2;

	if (((modrm >> 3) & 7) != 2)
		return 0;
	if (mod == 3)
		return len; /* call *%reg */
	if (rm == 4) {
		len++; /* SIB */
		if (mod == 0 && (sib & 7) == 5)
			len += 4; /* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		len += 4; /* RIP-relative: call *x(%rip), a PLT-less call */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

/*
 * code: the LOWPROF_CALL_WINDOW bytes before the address, little-endian
 * (byte k is the one at address - 8 + k). 1 if they end with a direct call
 * (E8 rel32) or an indirect one (FF /2, 2 to 7 bytes, after any prefix),
 * else 0. A guess from the bytes alone (data can look like a call); the
 * walker asks only of a step that is already plausible.
 */
static inline int lowprof_code_ends_in_call(__u64 code)
{
	__u32 k;

	if (((code >> 24) & 0xff) == 0xe8)
		return 1;
	for (k = 1; k <= 6; k++) {
		__u8 op = (__u8)(code >> (8 * k)), modrm = (__u8)(code >> (8 * (k + 1)));
		__u8 sib = k <= 5 ? (__u8)(code >> (8 * (k + 2))) : 0;

		if (op == 0xff && lowprof_call_ff_len(modrm, sib) == LOWPROF_CALL_WINDOW - k)
			return 1;
	}
	return 0;
}

#endif
