#include "common/event_fds.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

/* Blocks the signals of mask and returns a signalfd that reads them. */
static int event_signalfd_of(const sigset_t *mask)
{
	int fd;

	if (sigprocmask(SIG_BLOCK, mask, NULL) != 0)
		return -errno;
	fd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

int event_signalfd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	return event_signalfd_of(&mask);
}

int event_stop_signalfd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	return event_signalfd_of(&mask);
}

int event_timerfd(unsigned period_ms)
{
	struct itimerspec its;
	int fd, saved;

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	memset(&its, 0, sizeof(its));
	its.it_interval.tv_sec = period_ms / 1000;
	its.it_interval.tv_nsec = (long)(period_ms % 1000) * 1000000L;
	its.it_value = its.it_interval;
	if (timerfd_settime(fd, 0, &its, NULL) != 0) {
		saved = errno;
		close(fd);
		return -saved;
	}
	return fd;
}

int event_timer_at(int tfd, uint64_t deadline_ns)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	/* Zero would disarm the timer: a deadline at the epoch is "now". */
	its.it_value.tv_sec = (time_t)(deadline_ns / 1000000000ULL);
	its.it_value.tv_nsec = (long)(deadline_ns % 1000000000ULL);
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	return timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0 ? 0 : -errno;
}

bool event_signal_stop(int sfd)
{
	struct signalfd_siginfo si;

	return read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGHUP;
}

void event_timer_ack(int tfd)
{
	uint64_t expirations;

	if (read(tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_warn("timerfd read: %s", strerror(errno));
}

int event_poll(struct pollfd *pfd, unsigned nfds, int timeout_ms)
{
	int n;

	do {
		n = poll(pfd, nfds, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		n = -errno;
		log_error("poll: %s", strerror(-n));
	}
	return n;
}
