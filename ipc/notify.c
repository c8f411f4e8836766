#include "ipc/notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/mono_clock.h"
#include "ipc/lowprof_fds.h"

/* Until told the timeout: once a second, short enough for any. */
static unsigned notify_ping_ms = 1000;

void notify_set_liveness_timeout(unsigned seconds)
{
	uint64_t ms = (uint64_t)seconds * NOTIFY_PING_PER_MILLE;

	/* 0 is no timeout the supervisor takes: keep the default. */
	if (ms > 0)
		notify_ping_ms = ms > INT32_MAX ? INT32_MAX : (unsigned)ms;
}

unsigned notify_ping_interval_ms(void)
{
	return notify_ping_ms;
}

static void notify_send(const char *msg, size_t len)
{
	/* MSG_DONTWAIT: a stuck supervisor must not stall the component's loop. */
	if (send(LOWPROF_FD_NOTIFY, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EBADF &&
	    errno != EAGAIN && errno != ENOTSOCK)
		return;
}

void notify_ready(void)
{
	notify_send("ready", 5);
}

void notify_ping(void)
{
	static int64_t last_ms = INT64_MIN / 2;
	int64_t now = (int64_t)mono_ms();

	/* A tenth of slack: a loop woken once per interval must not skip every other ping. */
	if (now - last_ms < (int64_t)notify_ping_ms * 9 / 10)
		return;
	last_ms = now;
	notify_send("ping", 4);
}

void notify_state(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	memcpy(msg, "state ", 6);
	va_start(ap, fmt);
	n = vsnprintf(msg + 6, sizeof(msg) - 6, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(msg) - 6)
		return;
	notify_send(msg, 6 + (size_t)n);
}
