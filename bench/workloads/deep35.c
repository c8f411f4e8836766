/*
 * Workload "deep35": one thread per online CPU whose work runs at the bottom
 * of a 35-frame user stack of distinct functions (32 chained functions, the
 * leaf, the thread function, libc's start_thread and clone3), over and over,
 * for argv[1] seconds. Built with frame pointers, so that both unwinders can
 * walk it. Unlike "deep" (a recursion, where a DWARF walker can reuse the
 * previous frame's row), every frame here needs its own row lookup. Prints
 * the number of leaf calls.
 */
#include <stdio.h>
#include "common.h"

static double deadline;

/* Function N calls function N-1; each a distinct body, so a distinct row. */
#define D35_FN(n, prev)                                                              \
	__attribute__((noinline)) static unsigned long long d35_f##n(unsigned long long x) \
	{                                                                                  \
		unsigned long long r = prev(x + n);                                        \
		__asm__ volatile("" : "+r"(r));                                            \
		return r ^ n;                                                              \
	}
D35_FN(1, wl_xorshift_work)
D35_FN(2, d35_f1)
D35_FN(3, d35_f2)
D35_FN(4, d35_f3)
D35_FN(5, d35_f4)
D35_FN(6, d35_f5)
D35_FN(7, d35_f6)
D35_FN(8, d35_f7)
D35_FN(9, d35_f8)
D35_FN(10, d35_f9)
D35_FN(11, d35_f10)
D35_FN(12, d35_f11)
D35_FN(13, d35_f12)
D35_FN(14, d35_f13)
D35_FN(15, d35_f14)
D35_FN(16, d35_f15)
D35_FN(17, d35_f16)
D35_FN(18, d35_f17)
D35_FN(19, d35_f18)
D35_FN(20, d35_f19)
D35_FN(21, d35_f20)
D35_FN(22, d35_f21)
D35_FN(23, d35_f22)
D35_FN(24, d35_f23)
D35_FN(25, d35_f24)
D35_FN(26, d35_f25)
D35_FN(27, d35_f26)
D35_FN(28, d35_f27)
D35_FN(29, d35_f28)
D35_FN(30, d35_f29)
D35_FN(31, d35_f30)
D35_FN(32, d35_f31)

static void *deep35_thread(void *arg)
{
	unsigned long long *count = arg, x = 88172645463325252ULL, n = 0;

	while (wl_now() < deadline) {
		for (int i = 0; i < 20; i++)
			x = d35_f32(x);
		n += 20;
	}
	*count = n + (x & 1);
	return NULL;
}

int main(int argc, char **argv)
{
	deadline = wl_now() + wl_seconds(argc, argv);
	printf("%llu\n", wl_run_per_cpu(deep35_thread));
	return 0;
}
