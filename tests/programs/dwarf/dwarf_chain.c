/*
 * DWARF unwinding workload: a hot leaf five calls below main, built with
 * -O2 -fomit-frame-pointer so that RBP is an ordinary register and frame
 * pointers cannot walk it (tests/integration/test_unwind_dwarf.sh).
 *   main -> dw_level1 -> dw_level2 -> dw_level3 -> dw_level4 -> dw_leaf
 * Runs for argv[1] seconds (default 10).
 */
#include <stdlib.h>
#include <time.h>

volatile unsigned long dw_sink;

static double dw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Many live values: the compiler uses RBP (and every callee-saved register) for data. */
__attribute__((noinline)) unsigned long dw_leaf(unsigned long x)
{
	unsigned long a = x, b = x ^ 0x9e37, c = x + 7, d = x * 3, e = x >> 3, f = ~x, g = x | 1;

	for (int i = 0; i < 200000; i++) {
		a = a * 6364136223846793005UL + b;
		b ^= a >> 7;
		c += b * d;
		d = (d << 1) ^ c;
		e += d ^ f;
		f = f * 31 + e;
		g ^= f + a;
	}
	return a ^ b ^ c ^ d ^ e ^ f ^ g;
}

/* Each level keeps a value across its call and uses a different frame size. */
__attribute__((noinline)) unsigned long dw_level4(unsigned long x)
{
	volatile char pad[40];

	pad[0] = (char)x;
	return dw_leaf(x + (unsigned long)pad[0]) + x;
}

__attribute__((noinline)) unsigned long dw_level3(unsigned long x)
{
	volatile char pad[200];

	pad[3] = (char)x;
	return dw_level4(x ^ (unsigned long)pad[3]) * 3;
}

__attribute__((noinline)) unsigned long dw_level2(unsigned long x)
{
	unsigned long r = dw_level3(x + 1);

	return r ^ (x << 2);
}

__attribute__((noinline)) unsigned long dw_level1(unsigned long x)
{
	volatile char pad[1000];

	pad[999] = (char)x;
	return dw_level2(x + (unsigned long)pad[999]) + 5;
}

int main(int argc, char **argv)
{
	double duration = argc > 1 ? atof(argv[1]) : 10.0;
	double end = dw_now() + duration;
	unsigned long x = 1;

	while (dw_now() < end)
		x += dw_level1(x);
	dw_sink = x;
	return 0;
}
