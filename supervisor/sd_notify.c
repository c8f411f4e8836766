#include "supervisor/sd_notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/number_parse.h"

static int sd_notify_address(const char *path, struct sockaddr_un *sa, socklen_t *len)
{
	size_t plen = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (plen == 0 || plen >= sizeof(sa->sun_path))
		return -1;
	if (path[0] != '/' && path[0] != '@')
		return -1;
	memcpy(sa->sun_path, path, plen);
	/* "@name" is Linux's abstract namespace: a leading NUL byte, no terminator. */
	if (path[0] == '@')
		sa->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	return 0;
}

int sd_notify_open(struct sd_notify *n)
{
	const char *path = getenv("NOTIFY_SOCKET");
	const char *usec = getenv("WATCHDOG_USEC");
	const char *wpid = getenv("WATCHDOG_PID");
	struct sockaddr_un sa;
	socklen_t salen;
	unsigned v;

	n->fd = -1;
	n->watchdog_ms = 0;
	if (path == NULL)
		return 0;
	if (sd_notify_address(path, &sa, &salen) != 0)
		return -1;
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->fd < 0)
		return -1;
	if (connect(n->fd, (struct sockaddr *)&sa, salen) != 0) {
		close(n->fd);
		n->fd = -1;
		return -1;
	}
	/* The watchdog is ours only if WATCHDOG_PID is unset or names us. */
	if (usec != NULL && number_parse_uint(usec, 1, 0xffffffffu, &v) == 0 &&
	    (wpid == NULL || atoi(wpid) == (int)getpid()))
		n->watchdog_ms = (int64_t)v / 2000;
	if (n->watchdog_ms == 0 && usec != NULL)
		n->watchdog_ms = 0;
	return 0;
}

int sd_notify_send(const struct sd_notify *n, const char *text)
{
	if (n->fd < 0)
		return 0;
	if (send(n->fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return -errno;
	return 0;
}

void sd_notify_close(struct sd_notify *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}
