/*
 * The switch storm: two threads bounce a byte over two pipes as fast as they
 * can, blocking in read() in storm_ping_wait() and storm_pong_wait(): two
 * context switches per bounce, over 100,000 a second.
 * read() goes through storm_read(): a frame-pointer walk from the libc leaf
 * loses its caller, which must not be the named one.
 *   usage: switch_storm SECONDS
 * Prints the bounces done (bench/offcpu reads it as the work done).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static volatile int stop;

__attribute__((noinline)) static ssize_t storm_read(int fd, char *c)
{
	ssize_t n = read(fd, c, 1);

	__asm__ volatile("" ::: "memory");
	return n;
}

__attribute__((noinline)) static void storm_pong_wait(char *c)
{
	if (storm_read(ping[0], c) != 1)
		stop = 1;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void storm_ping_wait(char *c)
{
	if (storm_read(pong[0], c) != 1)
		stop = 1;
	__asm__ volatile("" ::: "memory");
}

static void *storm_ponger(void *arg)
{
	char c;

	(void)arg;
	while (!stop) {
		storm_pong_wait(&c);
		if (write(pong[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double s = argc > 1 ? atof(argv[1]) : 10.0;
	struct timespec t0, t;
	pthread_t th;
	char c = 'x';
	unsigned long n = 0;

	if (pipe(ping) != 0 || pipe(pong) != 0 || pthread_create(&th, NULL, storm_ponger, NULL) != 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (write(ping[1], &c, 1) != 1)
			return 1;
		storm_ping_wait(&c);
		if (++n % 1024 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= s)
				break;
		}
	}
	stop = 1;
	/* The ponger is blocked in read(): one more byte lets it see stop. */
	(void)!write(ping[1], &c, 1);
	pthread_join(th, NULL);
	printf("%lu\n", n);
	return 0;
}
