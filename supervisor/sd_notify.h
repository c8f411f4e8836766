/*
 * systemd's notification protocol, spoken directly (no libsystemd): datagrams
 * of "KEY=VALUE" lines to $NOTIFY_SOCKET. Without NOTIFY_SOCKET every call is a no-op.
 */
#ifndef LOWPROF_SUPERVISOR_SD_NOTIFY_H
#define LOWPROF_SUPERVISOR_SD_NOTIFY_H

#include <stdint.h>

struct sd_notify {
	int fd;               /* -1 when not under systemd */
	int64_t watchdog_ms;  /* send WATCHDOG=1 this often (half of WATCHDOG_USEC); 0 = off */
};

/* Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID. 0, or -1 when NOTIFY_SOCKET is unusable. */
int sd_notify_open(struct sd_notify *n);
/* Send one datagram, e.g. "READY=1\nSTATUS=profiling". 0 or -errno. */
int sd_notify_send(const struct sd_notify *n, const char *text);
void sd_notify_close(struct sd_notify *n);

#endif
