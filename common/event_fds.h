/*
 * The file descriptors a program's poll loop is built from: a signalfd for the
 * signals that stop or reload it, and a periodic timerfd. Both close-on-exec
 * and non-blocking. -errno on failure.
 */
#ifndef LOWPROF_COMMON_EVENT_FDS_H
#define LOWPROF_COMMON_EVENT_FDS_H

#include <stdbool.h>
#include <stdint.h>

/* Blocks SIGTERM, SIGINT and SIGHUP and returns a signalfd that reads them. */
int event_signalfd(void);
/* Blocks SIGTERM and SIGINT and returns a signalfd of them alone, to poll
 * (readable while a stop is pending), not to read: a wait that must end when
 * the program is asked to stop, which its event_signalfd then reads. */
int event_stop_signalfd(void);
/* A timerfd that fires every period_ms (first expiry after one period). */
int event_timerfd(unsigned period_ms);
struct pollfd;
/* poll, again after EINTR: the number of fds ready, or -errno (logged). */
int event_poll(struct pollfd *pfd, unsigned nfds, int timeout_ms);
/* The signalfd polled readable: read one signal; true when it asks to stop
 * (SIGTERM, SIGINT), false for SIGHUP (ignored) or nothing read. */
bool event_signal_stop(int sfd);
/* Re-arm tfd (CLOCK_MONOTONIC) to fire once at deadline_ns (mono_ns()); 0 or -errno. */
int event_timer_at(int tfd, uint64_t deadline_ns);
/* The timerfd polled readable: consume its expirations (a failed read is logged). */
void event_timer_ack(int tfd);

#endif
