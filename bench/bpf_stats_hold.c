/*
 * lowprof-bpf-stats: holds a BPF_ENABLE_STATS(BPF_STATS_RUN_TIME) fd so the
 * kernel accounts run_time_ns/run_cnt for every BPF program, only while this
 * process lives (unlike the global kernel.bpf_stats_enabled sysctl, which a
 * crashed benchmark would leave on). Prints "ready" once stats are on, then
 * waits for SIGTERM/SIGINT.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	sigset_t mask;
	int fd, sig;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0) {
		fprintf(stderr, "lowprof-bpf-stats: BPF_ENABLE_STATS: %s\n", strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	sigwait(&mask, &sig);
	close(fd);
	return 0;
}
