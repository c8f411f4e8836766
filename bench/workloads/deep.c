/*
 * Workload "deep": one thread per online CPU recursing 200 calls deep
 * (bench_recurse) and doing its work at the bottom, over and over, for
 * argv[1] seconds. Built with frame pointers, so that both unwinders can
 * walk it and the figure shows depth (lowprof records at most 64 user
 * frames; perf's kernel.perf_event_max_stack and its 8 KiB dwarf copy cap
 * it). Prints the number of leaf calls.
 */
#include <stdio.h>
#include "common.h"

#define DEPTH 200
static double deadline;

__attribute__((noinline)) static unsigned long long bench_recurse(int depth, unsigned long long x)
{
	unsigned long long r;

	if (depth == 0)
		return wl_xorshift_work(x);
	r = bench_recurse(depth - 1, x + 1);
	__asm__ volatile("" : "+r"(r));
	return r ^ (unsigned long long)depth;
}

static void *deep_thread(void *arg)
{
	unsigned long long *count = arg, x = 88172645463325252ULL, n = 0;

	while (wl_now() < deadline) {
		for (int i = 0; i < 20; i++)
			x = bench_recurse(DEPTH - 2, x);
		n += 20;
	}
	*count = n + (x & 1);
	return NULL;
}

int main(int argc, char **argv)
{
	deadline = wl_now() + wl_seconds(argc, argv);
	printf("%llu\n", wl_run_per_cpu(deep_thread));
	return 0;
}
