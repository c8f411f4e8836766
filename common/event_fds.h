/*
 * The file descriptors a program's poll loop is built from: a signalfd for the
 * signals that stop or reload it, and a periodic timerfd. Both close-on-exec
 * and non-blocking. -errno on failure.
 */
#ifndef LOWPROF_COMMON_EVENT_FDS_H
#define LOWPROF_COMMON_EVENT_FDS_H

/* Blocks SIGTERM, SIGINT and SIGHUP and returns a signalfd that reads them. */
int event_signalfd(void);
/* A timerfd that fires every period_ms (first expiry after one period). */
int event_timerfd(unsigned period_ms);

#endif
