/*
 * The shared library of dl_host: a chain of three calls, built -O2
 * -fomit-frame-pointer, so that only DWARF walks it.
 *   dl_entry -> dl_level2 -> dl_leaf
 */
#include <time.h>

static double dl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Many live values: RBP holds data, not a frame pointer. */
__attribute__((noinline)) unsigned long dl_leaf(unsigned long x, double until)
{
	unsigned long a = x, b = x ^ 0x9e37, c = x + 7, d = x * 3, e = x >> 3, f = ~x;

	while (dl_now() < until) {
		for (int i = 0; i < 2000; i++) {
			a = a * 6364136223846793005UL + b;
			b ^= a >> 7;
			c += b * d;
			d = (d << 1) ^ c;
			e += d ^ f;
			f = f * 31 + e;
		}
	}
	return a ^ b ^ c ^ d ^ e ^ f;
}

__attribute__((noinline)) unsigned long dl_level2(unsigned long x, double until)
{
	volatile char pad[40];

	pad[3] = (char)x;
	return dl_leaf(x + (unsigned long)pad[3], until) * 3;
}

/* Spins ms milliseconds three calls deep. */
unsigned long dl_entry(unsigned long x, unsigned ms)
{
	unsigned long r = dl_level2(x ^ 5, dl_now() + ms / 1000.0);

	return r + (x << 2);
}
