/*
 * The shared library of dl_host: a chain of three calls, built -O2
 * -fomit-frame-pointer, so that only DWARF walks it.
 *   dl_entry -> dl_level2 -> dl_leaf
 */
#include <stdint.h>
#include <time.h>

static uint64_t dl_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline unsigned long dl_rotl(unsigned long v, int k)
{
	return v << k | v >> (64 - k);
}

/* xoshiro256** rounds and two accumulators: RBP holds data, not a frame pointer. */
__attribute__((noinline)) unsigned long dl_leaf(unsigned long seed, uint64_t until)
{
	unsigned long s0 = seed | 1, s1 = seed * 0x9e3779b97f4a7c15UL, s2 = ~seed;
	unsigned long s3 = seed ^ 0xdeadbeefUL, acc = 0, mix = seed >> 11;

	do {
		for (unsigned n = 0; n < 4096; n++) {
			unsigned long out = dl_rotl(s1 * 5, 7) * 9, t = s1 << 17;

			s2 ^= s0;
			s3 ^= s1;
			s1 ^= s2;
			s0 ^= s3;
			s2 ^= t;
			s3 = dl_rotl(s3, 45);
			acc += out ^ mix;
			mix = dl_rotl(mix + acc, 13);
		}
	} while (dl_ns() < until);
	return acc ^ mix ^ s0;
}

__attribute__((noinline)) unsigned long dl_level2(unsigned long x, uint64_t until)
{
	volatile char pad[40];

	pad[3] = (char)x;
	return dl_leaf(x + (unsigned long)pad[3], until) * 3;
}

/* Spins ms milliseconds three calls deep. */
unsigned long dl_entry(unsigned long x, unsigned ms)
{
	unsigned long r = dl_level2(x ^ 5, dl_ns() + (uint64_t)ms * 1000000u);

	return r + (x << 2);
}
