/* A call chain 5 deep with frames of different shapes, for the unwind
 * table tests: built with and without frame pointers, by gcc and clang. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile unsigned long unwtest_sink;

__attribute__((noinline)) static unsigned long leaf(unsigned long x)
{
	for (int i = 0; i < 100; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

/* A large local array: a big CFA offset. */
__attribute__((noinline)) static unsigned long level4(unsigned long x)
{
	char buf[70000];

	memset(buf, (int)x, sizeof(buf));
	unwtest_sink = (unsigned long)buf[x % sizeof(buf)];
	return leaf(x + (unsigned long)buf[17]);
}

/* Variable-length array: needs a frame register even with -fomit-frame-pointer. */
__attribute__((noinline)) static unsigned long level3(unsigned long x)
{
	size_t n = 16 + (x & 255);
	char vla[n];

	memset(vla, 1, n);
	return level4(x + (unsigned long)vla[n - 1]);
}

/* Several exits: GCC emits remember_state/restore_state around early returns. */
__attribute__((noinline)) static unsigned long level2(unsigned long x, unsigned long y,
						       unsigned long z)
{
	unsigned long a = x * 3, b = y ^ z, c = z + 11;

	if (x == 12345)
		return a;
	if (y == 777) {
		unwtest_sink = a + b;
		return level3(a) + b;
	}
	for (unsigned long i = 0; i < (z & 7); i++)
		a += level3(a + i) ^ b ^ c;
	return a + b + c;
}

__attribute__((noinline)) static unsigned long level1(unsigned long x)
{
	unsigned long r = level2(x, x >> 1, x | 1);

	unwtest_sink = r;
	return r + level2(r, 777, x);
}

/* Recursion: the same rows serve every level. */
__attribute__((noinline)) static unsigned long recurse(unsigned long depth)
{
	if (depth == 0)
		return leaf(depth);
	return recurse(depth - 1) + 1;
}

int main(int argc, char **argv)
{
	unsigned long x = argc > 1 ? strtoul(argv[1], NULL, 0) : 3;

	printf("%lu %lu\n", level1(x), recurse(x & 63));
	return 0;
}
