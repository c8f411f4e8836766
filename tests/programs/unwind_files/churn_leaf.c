/*
 * The short-lived process of the churn test: spins argv[1] ms (default 10)
 * in a leaf four calls below main. Built -O2 -fomit-frame-pointer (and as
 * PIE, non-PIE, stripped variants): only DWARF can walk it.
 *   main -> cl_level1 -> cl_level2 -> cl_level3 -> cl_leaf
 */
#include <stdlib.h>
#include <time.h>

volatile unsigned long cl_sink;

static double cl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Many live values: RBP holds data, not a frame pointer. */
__attribute__((noinline)) unsigned long cl_leaf(unsigned long x, double until)
{
	unsigned long a = x, b = x ^ 0x9e37, c = x + 7, d = x * 3, e = x >> 3, f = ~x;

	while (cl_now() < until) {
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

__attribute__((noinline)) unsigned long cl_level3(unsigned long x, double until)
{
	volatile char pad[72];

	pad[1] = (char)x;
	return cl_leaf(x + (unsigned long)pad[1], until) * 5;
}

__attribute__((noinline)) unsigned long cl_level2(unsigned long x, double until)
{
	unsigned long r = cl_level3(x ^ 3, until);

	return r + (x << 1);
}

__attribute__((noinline)) unsigned long cl_level1(unsigned long x, double until)
{
	volatile char pad[24];

	pad[0] = (char)x;
	return cl_level2(x + (unsigned long)pad[0], until) ^ x;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 10.0;

	cl_sink = cl_level1((unsigned long)ms, cl_now() + ms / 1000.0);
	return 0;
}
