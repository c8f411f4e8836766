/* A program with a signal handler that does real work, so its FDE has a
 * full prologue; raises the signal once. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t hits;
static volatile double acc;

__attribute__((noinline)) static void handler_work(int sig)
{
	double a[64];

	for (int i = 0; i < 64; i++)
		a[i] = (double)(i * sig);
	for (int i = 1; i < 64; i++)
		a[i] += a[i - 1] * 0.5;
	acc = a[63];
}

static void on_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)si;
	(void)uctx;
	handler_work(sig);
	hits++;
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0)
		return 1;
	raise(SIGUSR1);
	printf("%d %f\n", (int)hits, acc);
	return hits == 1 ? 0 : 1;
}
