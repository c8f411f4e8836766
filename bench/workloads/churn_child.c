/*
 * The short-lived process of the "churn" workload: about 1 ms of CPU in a
 * function two calls below main, then exit.
 */
#include "common.h"

__attribute__((noinline)) static unsigned long long child_burn(double until)
{
	unsigned long long x = 88172645463325252ULL;

	while (wl_now() < until) {
		x = wl_xorshift(x, 1000);
	}
	return x;
}

__attribute__((noinline)) static int child_work(void)
{
	return (int)(child_burn(wl_now() + 0.001) & 1);
}

int main(void)
{
	return child_work();
}
