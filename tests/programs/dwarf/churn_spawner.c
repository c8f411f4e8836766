/*
 * Process churn for the unwinding tests: for SECONDS, start RATE processes a
 * second of CHILD, each told to live a random 3 to 30 ms (its argv[1], in
 * seconds), without waiting for one to end before starting the next; reap
 * them as they go. Prints how many ran.
 *   usage: churn_spawner SECONDS RATE CHILD
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double churn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long churn_reap(int flags)
{
	unsigned long n = 0;
	int status;

	while (waitpid(-1, &status, flags) > 0)
		n++;
	return n;
}

int main(int argc, char **argv)
{
	double seconds, rate, end, next;
	unsigned long started = 0, reaped = 0;
	unsigned int seed = 12345;

	if (argc != 4) {
		fprintf(stderr, "usage: churn_spawner SECONDS RATE CHILD\n");
		return 2;
	}
	seconds = atof(argv[1]);
	rate = atof(argv[2]);
	if (seconds <= 0 || rate <= 0) {
		fprintf(stderr, "churn_spawner: SECONDS and RATE must be positive\n");
		return 2;
	}
	next = churn_now();
	end = next + seconds;
	while (churn_now() < end) {
		char life[32];
		char *child_argv[] = {argv[3], life, NULL};
		struct timespec pause;
		double wait;
		pid_t pid;

		snprintf(life, sizeof(life), "%.4f", (3 + rand_r(&seed) % 28) / 1000.0);
		if (posix_spawn(&pid, argv[3], NULL, NULL, child_argv, environ) != 0) {
			perror("churn_spawner: posix_spawn");
			return 1;
		}
		started++;
		reaped += churn_reap(WNOHANG);
		next += 1.0 / rate;
		wait = next - churn_now();
		if (wait > 0) {
			pause.tv_sec = (time_t)wait;
			pause.tv_nsec = (long)((wait - (double)pause.tv_sec) * 1e9);
			nanosleep(&pause, NULL);
		}
	}
	reaped += churn_reap(0);
	printf("%lu\n", started);
	return reaped == started ? 0 : 1;
}
