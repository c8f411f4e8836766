/*
 * The off-CPU test's detached-period workload: sleeps LONG seconds in
 * stale_long_sleep(), spins SPIN seconds in stale_spin(), then sleeps AFTER
 * seconds in stale_after_sleep(). The test parks the switch program while
 * the first sleep ends and the spin runs, and lets it back before the last
 * sleep ends: the switch-in it then sees belongs to a switch-out it did not
 * see, and the one it stashed (the first sleep's) is stale. Charged, it
 * would put LONG + SPIN + AFTER seconds under stale_long_sleep.
 *   usage: offcpu_stale LONG SPIN AFTER
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void stale_nanosleep(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays */
}

__attribute__((noinline)) static void stale_long_sleep(double s)
{
	stale_nanosleep(s);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void stale_after_sleep(double s)
{
	stale_nanosleep(s);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void stale_spin(double s)
{
	uint64_t end = now_ns() + (uint64_t)(s * 1e9);
	volatile uint64_t x = 0;

	while (now_ns() < end)
		x++;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	stale_long_sleep(atof(argv[1]));
	stale_spin(atof(argv[2]));
	stale_after_sleep(atof(argv[3]));
	return 0;
}
