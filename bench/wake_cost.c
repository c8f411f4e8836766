/*
 * lowprof-wake-cost: what this machine charges a process for the things
 * lowprof's processes do most, so that figures taken on two machines can be
 * compared (docs/BENCHMARKS.md, "What a wake costs on this machine").
 *
 * lowprof's own processes sleep most of the time and wake briefly (at rest
 * once per quiet interval, 12 s; on a busy host about once a second), and
 * bench/run and bench/idle charge them the on-CPU time schedstat counts.
 * On a virtual machine that counts work the process did not do: on the
 * development VM (PVM, shadow page tables) a do-nothing process woken after
 * a few seconds' sleep is charged hundreds of microseconds, where bare metal
 * charges a few. This tool measures, in this process:
 *   - a system call (getppid), ns;
 *   - a first touch of an anonymous page (a minor fault), ns;
 *   - the CPU (schedstat field 1, the figure bench/idle reads) charged per
 *     wake of a loop that sleeps S seconds and then does nothing, for each S
 *     of the list (the median of ROUNDS wakes).
 *   usage: lowprof-wake-cost [ROUNDS [S ...]]   (defaults 5, and 0.1 1 3 12)
 * The longest sleep sets the run's length: ROUNDS x the sum of the sleeps.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WAKE_MAX_ROUNDS 64
#define WAKE_MAX_SLEEPS 16
#define SYSCALL_LOOPS 200000
#define FAULT_BYTES (64u << 20)

static uint64_t mono_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* This thread's on-CPU time as schedstat counts it (ns). Opened once and
 * reread with pread: the measure itself should not allocate or fault. */
static int schedstat_fd = -1;

static uint64_t schedstat_run_ns(void)
{
	char buf[128];
	ssize_t n = pread(schedstat_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

static int open_schedstat(void)
{
	return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double syscall_ns(void)
{
	uint64_t t0 = mono_now_ns();

	for (int i = 0; i < SYSCALL_LOOPS; i++)
		syscall(SYS_getppid);
	return (double)(mono_now_ns() - t0) / SYSCALL_LOOPS;
}

static double fault_ns(void)
{
	char *m = mmap(NULL, FAULT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t t0;
	double ns;

	if (m == MAP_FAILED)
		return -1;
	t0 = mono_now_ns();
	for (size_t off = 0; off < FAULT_BYTES; off += 4096)
		m[off] = 1;
	ns = (double)(mono_now_ns() - t0) / (FAULT_BYTES / 4096);
	munmap(m, FAULT_BYTES);
	return ns;
}

/* The median CPU charged per wake after sleeping seconds, over rounds wakes. */
static double wake_us(double seconds, int rounds)
{
	uint64_t cost[WAKE_MAX_ROUNDS];
	struct timespec ts = {.tv_sec = (time_t)seconds,
			      .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};

	for (int i = 0; i < rounds; i++) {
		uint64_t before = schedstat_run_ns();

		nanosleep(&ts, NULL);
		/* Charged from the last read before the sleep to the first after
		 * it: the wake, and the two reads around it. */
		cost[i] = schedstat_run_ns() - before;
	}
	qsort(cost, (size_t)rounds, sizeof(cost[0]), cmp_u64);
	return (double)cost[rounds / 2] / 1000.0;
}

int main(int argc, char **argv)
{
	double sleeps[WAKE_MAX_SLEEPS] = {0.1, 1, 3, 12};
	int nsleeps = 4, rounds = 5;

	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("usage: lowprof-wake-cost [ROUNDS [SECONDS ...]] (defaults 5, 0.1 1 3 12)\n");
		return 0;
	}
	if (argc > 1) {
		rounds = atoi(argv[1]);
		if (rounds < 1 || rounds > WAKE_MAX_ROUNDS) {
			fprintf(stderr, "lowprof-wake-cost: ROUNDS must be 1-%d\n", WAKE_MAX_ROUNDS);
			return 2;
		}
	}
	if (argc > 2) {
		nsleeps = 0;
		for (int i = 2; i < argc && nsleeps < WAKE_MAX_SLEEPS; i++) {
			char *end;
			double s = strtod(argv[i], &end);

			if (*end != '\0' || !(s > 0 && s <= 3600)) {
				fprintf(stderr, "lowprof-wake-cost: bad sleep '%s' (seconds, 0-3600)\n",
					argv[i]);
				return 2;
			}
			sleeps[nsleeps++] = s;
		}
	}
	schedstat_fd = open_schedstat();
	if (schedstat_fd < 0) {
		perror("lowprof-wake-cost: /proc/thread-self/schedstat");
		return 1;
	}
	printf("system call (getppid): %.0f ns\n", syscall_ns());
	printf("first touch of a page: %.0f ns\n", fault_ns());
	for (int i = 0; i < nsleeps; i++)
		printf("CPU per wake after %g s asleep: %.1f us (median of %d)\n", sleeps[i],
		       wake_us(sleeps[i], rounds), rounds);
	return 0;
}
