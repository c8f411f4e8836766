/*
 * The off-CPU test's workload: one thread spins 10 ms then sleeps 10 ms in
 * offcpu_sleep_here(), for the given seconds: about half the time off CPU
 * under that function, half on CPU in offcpu_spin_here(). The libc calls go
 * through a function of their own: a frame-pointer walk from a libc leaf
 * (no frame) loses its caller, and that caller must not be the named one.
 *   usage: offcpu_sleeper SECONDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void offcpu_spin_here(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	volatile uint64_t x = 0;

	while (now_ns() < end)
		x++;
}

__attribute__((noinline)) static void offcpu_nanosleep(uint64_t ns)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ns};

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays */
}

__attribute__((noinline)) static void offcpu_sleep_here(uint64_t ns)
{
	offcpu_nanosleep(ns);
	__asm__ volatile("" ::: "memory");
}

static void *offcpu_worker(void *arg)
{
	uint64_t end = now_ns() + *(uint64_t *)arg;

	while (now_ns() < end) {
		offcpu_spin_here(10000000u);
		offcpu_sleep_here(10000000u);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t ns = (uint64_t)(argc > 1 ? atof(argv[1]) : 6.0) * 1000000000u;
	pthread_t t;

	if (pthread_create(&t, NULL, offcpu_worker, &ns) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}
