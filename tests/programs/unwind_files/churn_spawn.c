/*
 * churn_spawn: start PROGRAM about RATE times a second for SECONDS, each
 * child living a random 3 to 30 ms (its argument, in ms), at most 64 alive.
 *   churn_spawn RATE SECONDS PROGRAM
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double rate, end, next;
	unsigned long started = 0;
	int alive = 0;

	if (argc != 4)
		return 2;
	rate = atof(argv[1]);
	end = now_s() + atof(argv[2]);
	next = now_s();
	srand((unsigned)getpid());
	while (now_s() < end) {
		char ms[16];
		pid_t pid;

		while (waitpid(-1, NULL, WNOHANG) > 0)
			alive--;
		if (now_s() < next || alive >= 64) {
			usleep(200);
			continue;
		}
		next += 1.0 / rate;
		snprintf(ms, sizeof(ms), "%d", 3 + rand() % 28);
		pid = fork();
		if (pid == 0) {
			execl(argv[3], argv[3], ms, (char *)NULL);
			_exit(127);
		}
		if (pid > 0) {
			alive++;
			started++;
		}
	}
	while (wait(NULL) > 0)
		;
	printf("%lu\n", started);
	return 0;
}
