#include "common/event_fds.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int event_signalfd(void)
{
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0)
		return -errno;
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
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
