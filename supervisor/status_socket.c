#define _GNU_SOURCE /* struct ucred */
#include "supervisor/status_socket.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "settings/defaults.h"

void status_socket_default_dir(char *out, size_t outlen)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		snprintf(out, outlen, "%s", SETTINGS_RUN_DIR);
	else if (xdg != NULL && xdg[0] == '/')
		snprintf(out, outlen, "%s/lowprof", xdg);
	else
		snprintf(out, outlen, "/tmp/lowprof-%u", (unsigned)geteuid());
}

static int status_socket_address(const char *dir, struct sockaddr_un *sa, char *err, size_t errlen)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", dir, STATUS_SOCKET_NAME) >=
	    sizeof(sa->sun_path)) {
		snprintf(err, errlen, "run directory path too long: %s", dir);
		return -ENAMETOOLONG;
	}
	return 0;
}

/*
 * The run directory must be ours alone: a directory (not a symlink), owned by
 * our euid, writable by nobody else. One made in advance by another user
 * could hold a socket of theirs that `lowprof status` would talk to, or let
 * them replace ours.
 */
static int status_socket_check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(dir, &st) != 0)
		return errbuf_fail(-errno, err, errlen, "run directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return errbuf_fail(-ENOTDIR, err, errlen, "run directory %s is not a directory", dir);
	if (st.st_uid != geteuid())
		return errbuf_fail(-EPERM, err, errlen, "run directory %s is owned by uid %u, not %u",
				   dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return errbuf_fail(-EPERM, err, errlen,
				   "run directory %s is writable by others (mode %04o)", dir,
				   (unsigned)(st.st_mode & 07777));
	return 0;
}

int status_socket_listen(const char *dir, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	int fd, probe, rc;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "cannot create run directory %s: %s", dir, strerror(errno));
		return rc;
	}
	rc = status_socket_check_dir(dir, err, errlen);
	if (rc != 0)
		return rc;
	rc = status_socket_address(dir, &sa, err, errlen);
	if (rc != 0)
		return rc;
	/* A socket that still answers belongs to a live instance: leave it alone. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		rc = connect(probe, (struct sockaddr *)&sa, sizeof(sa));
		close(probe);
		if (rc == 0) {
			snprintf(err, errlen, "another lowprof is running with run directory %s", dir);
			return -EADDRINUSE;
		}
	}
	unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return rc;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(sa.sun_path, 0600) != 0 ||
	    listen(fd, 8) != 0) {
		rc = -errno;
		snprintf(err, errlen, "status socket %s: %s", sa.sun_path, strerror(errno));
		close(fd);
		return rc;
	}
	return fd;
}

int status_socket_read_request(int fd, int timeout_ms, char *req, size_t reqlen, uid_t *peer_uid)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	ssize_t n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0)
		return -1;
	*peer_uid = cred.uid;
	/* A client that connects and says nothing must not stall the supervisor. */
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -1;
	n = recv(fd, req, reqlen - 1, MSG_DONTWAIT);
	if (n <= 0)
		return -1;
	req[n] = '\0';
	req[strcspn(req, "\r\n")] = '\0';
	return 0;
}

int status_socket_query(const char *dir, const char *req, char *out, size_t outlen,
			char *err, size_t errlen)
{
	struct sockaddr_un sa;
	size_t used = 0;
	ssize_t got;
	int fd, rc;

	rc = status_socket_address(dir, &sa, err, errlen);
	if (rc != 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		snprintf(err, errlen, "no lowprof running with run directory %s (%s)", dir, strerror(errno));
		goto out;
	}
	char line[STATUS_REQUEST_MAX + 2];
	int n;

	/* One send: the server answers as soon as it has read a request. */
	n = snprintf(line, sizeof(line), "%s\n", req);
	if (n < 0 || (size_t)n >= sizeof(line) || send(fd, line, (size_t)n, MSG_NOSIGNAL) < 0) {
		rc = -errno;
		snprintf(err, errlen, "sending the request: %s", strerror(errno));
		goto out;
	}
	for (;;) {
		if (used + 1 >= outlen) {
			rc = -EMSGSIZE;
			snprintf(err, errlen, "reply longer than %zu bytes", outlen);
			goto out;
		}
		got = recv(fd, out + used, outlen - 1 - used, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			snprintf(err, errlen, "reading the reply: %s", strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		used += (size_t)got;
	}
	out[used] = '\0';
	rc = 0;
out:
	close(fd);
	return rc;
}
