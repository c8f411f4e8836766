/*
 * Workload "compress": one `xz -T1 -3` per online CPU (Debian's xz and
 * liblzma, built without frame pointers), each fed generated, moderately
 * compressible text through a pipe for argv[1] seconds. Prints the bytes
 * xz accepted in all: the throughput bench/run compares across profilers.
 * The feeding threads only copy a buffer into a pipe (a few % of a CPU).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include "common.h"

#define MAXCPU 256
#define DATA_BYTES (4 << 20)

static char *data;
static double deadline;

struct feeder {
	int fd;
	unsigned long long bytes;
};

static void make_data(void)
{
	static const char *words[] = {"profile", "sample", "stack", "frame", "kernel", "budget",
				      "unwind", "pointer", "throttle", "ring", "buffer", "perf",
				      "event", "host", "cpu", "tier", "dwarf", "table", "row", "map"};
	unsigned long long x = 88172645463325252ULL;
	size_t n = 0;

	data = malloc(DATA_BYTES);
	while (n < DATA_BYTES - 32) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if ((x & 7) == 0)
			n += (size_t)snprintf(data + n, 32, "%llu ", x % 100000);
		else
			n += (size_t)snprintf(data + n, 32, "%s ", words[x % 20]);
	}
	memset(data + n, '\n', DATA_BYTES - n);
}

static void *feed(void *arg)
{
	struct feeder *f = arg;
	size_t off = 0;

	while (wl_now() < deadline) {
		size_t len = DATA_BYTES - off < 65536 ? DATA_BYTES - off : 65536;
		ssize_t w = write(f->fd, data + off, len);

		if (w <= 0)
			break;
		f->bytes += (unsigned long long)w;
		off = (off + (size_t)w) % DATA_BYTES;
	}
	close(f->fd);
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct feeder feeders[MAXCPU];
	pthread_t threads[MAXCPU];
	pid_t pids[MAXCPU];
	unsigned long long total = 0;
	long i;

	if (ncpu < 1 || ncpu > MAXCPU)
		ncpu = 1;
	signal(SIGPIPE, SIG_IGN);
	make_data();
	deadline = wl_now() + wl_seconds(argc, argv);
	for (i = 0; i < ncpu; i++) {
		int p[2];

		if (pipe(p) != 0) {
			perror("pipe");
			return 1;
		}
		pids[i] = fork();
		if (pids[i] == 0) {
			int devnull = open("/dev/null", 1);

			dup2(p[0], 0);
			dup2(devnull, 1);
			close(p[0]);
			close(p[1]);
			execlp("xz", "xz", "-T1", "-3", "-c", (char *)NULL);
			_exit(127);
		}
		close(p[0]);
		feeders[i].fd = p[1];
		feeders[i].bytes = 0;
		pthread_create(&threads[i], NULL, feed, &feeders[i]);
	}
	for (i = 0; i < ncpu; i++) {
		pthread_join(threads[i], NULL);
		total += feeders[i].bytes;
	}
	for (i = 0; i < ncpu; i++)
		waitpid(pids[i], NULL, 0);
	printf("%llu\n", total);
	return 0;
}
