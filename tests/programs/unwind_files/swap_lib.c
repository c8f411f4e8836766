/*
 * A library of vma_swap, built from this file twice: libswap_a.so and
 * libswap_b.so (-DSWAP_PAD_FIRST). The same code lies at other file offsets
 * in each, as swap_pad (4 KiB, never run) comes before it in one and after
 * it in the other; both files have the same size, so that one is mapped
 * where the other was. A frame put in the wrong file lands in swap_pad or
 * outside any function. Built -O2 -fomit-frame-pointer: only DWARF walks it.
 *   swap_entry -> swap_leaf
 */
#include <stdint.h>

#define SWAP_PAD                                                                            \
	__attribute__((noinline, used)) void swap_pad(void)                                 \
	{                                                                                   \
		__asm__ volatile(".rept 4096\n\tnop\n\t.endr");                             \
	}

#ifdef SWAP_PAD_FIRST
SWAP_PAD
#endif

static inline unsigned long swap_rotl(unsigned long v, int k)
{
	return v << k | v >> (64 - k);
}

/* Spins until done() says so: a call through a pointer into the program,
 * no PLT stub of this library (which no symbol covers) on the stack. */
__attribute__((noinline)) unsigned long swap_leaf(unsigned long seed, int (*done)(void))
{
	unsigned long s0 = seed | 1, s1 = seed * 0x9e3779b97f4a7c15UL, acc = 0;

	do {
		for (unsigned n = 0; n < 2048; n++) {
			s1 ^= s0;
			s0 = swap_rotl(s0, 24) ^ s1 ^ (s1 << 16);
			acc += swap_rotl(s0 * 5, 7) * 9;
		}
	} while (!done());
	return acc ^ s1;
}

__attribute__((noinline)) unsigned long swap_entry(unsigned long seed, int (*done)(void))
{
	volatile char pad[24];

	pad[1] = (char)seed;
	return swap_leaf(seed + (unsigned long)pad[1], done) * 3;
}

#ifndef SWAP_PAD_FIRST
SWAP_PAD
#endif
