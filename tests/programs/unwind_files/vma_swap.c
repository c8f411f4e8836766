/*
 * Two libraries of the same size taken in turns at (mostly) the same
 * address, while a second thread maps and unmaps memory all the time: the
 * walker's cached VMAs keep going stale (a new file where the old one was,
 * the mmap lock's sequence moving between samples), and no frame may be put
 * in the wrong file. vma_swap LIB_A LIB_B MS: for MS ms, dlopen one library,
 * spin ~3 ms in it, dlclose it, the other. Prints "swaps N same-address M".
 * Built -O2 -fomit-frame-pointer.
 *   main -> swap_entry -> swap_leaf
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double vs_until_turn, vs_until;
static volatile int vs_stop;
volatile unsigned long vs_sink;

static double vs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int vs_turn_done(void)
{
	return vs_now() >= vs_until_turn;
}

/* A new mapping and an unmapping every ~50 us: the mmap lock's sequence
 * moves between almost any two samples. */
static void *vs_churn(void *arg)
{
	struct timespec d = {0, 50000};

	(void)arg;
	while (!vs_stop) {
		void *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p != MAP_FAILED) {
			((volatile char *)p)[0] = 1;
			munmap(p, 1 << 16);
		}
		nanosleep(&d, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long (*entry)(unsigned long, int (*)(void));
	void *prev = NULL;
	unsigned swaps = 0, same = 0;
	pthread_t th;
	Dl_info info;

	if (argc < 4) {
		fprintf(stderr, "usage: vma_swap LIB_A LIB_B MS\n");
		return 2;
	}
	vs_until = vs_now() + atof(argv[3]) / 1000.0;
	if (pthread_create(&th, NULL, vs_churn, NULL) != 0)
		return 1;
	while (vs_now() < vs_until) {
		void *h = dlopen(argv[1 + swaps % 2], RTLD_NOW | RTLD_LOCAL);

		if (h == NULL) {
			fprintf(stderr, "vma_swap: %s\n", dlerror());
			return 1;
		}
		*(void **)&entry = dlsym(h, "swap_entry");
		if (entry == NULL || dladdr(*(void **)&entry, &info) == 0)
			return 1;
		same += info.dli_fbase == prev;
		prev = info.dli_fbase;
		swaps++;
		vs_until_turn = vs_now() + 0.003;
		vs_sink += entry(swaps, vs_turn_done);
		/* Not a tail call: main stays on the stack below swap_entry. */
		vs_sink += swaps;
		dlclose(h);
	}
	vs_stop = 1;
	pthread_join(th, NULL);
	printf("swaps %u same-address %u\n", swaps, same);
	return 0;
}
