/* fd_pass: one SOCK_SEQPACKET message with at most one fd (see the header). */
#define _GNU_SOURCE
#include "ipc/fd_pass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/errbuf.h"

/* Room for a few fds, so that a peer sending two is seen (and both closed)
 * rather than silently cut by the kernel. */
#define FDPASS_CMSG_FDS 4

int fdpass_send(int sock, const void *buf, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg;
	struct cmsghdr *c;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EMSGSIZE;
	return 0;
}

ssize_t fdpass_recv_msg(int sock, void *buf, size_t len, unsigned take, struct fdpass_msg *m,
			char *err, size_t errlen)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(FDPASS_CMSG_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr msg;
	struct cmsghdr *c;
	struct ucred cred;
	int fds[FDPASS_CMSG_FDS * 2];
	size_t nfds = 0, i, k;
	ssize_t n;
	const char *bad = NULL;

	m->fd = -1;
	m->have_cred = false;
	m->pid = -1;
	m->uid = (uid_t)-1;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | ((take & FDPASS_DONTWAIT) ? MSG_DONTWAIT : 0));
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;

		return errbuf_fail(-e, err, errlen, "recvmsg: %s", strerror(e));
	}
	/* Collect every fd first, so that each one is closed whatever is wrong. */
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		size_t payload;

		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    (take & FDPASS_TAKE_CRED)) {
			if (c->cmsg_len != CMSG_LEN(sizeof(cred))) {
				bad = "bad SCM_CREDENTIALS length";
				continue;
			}
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			if (cred.pid > 0) {
				m->pid = cred.pid;
				m->uid = cred.uid;
				m->have_cred = true;
			}
			continue;
		}
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = (take & FDPASS_TAKE_CRED) ? "control message other than SCM_RIGHTS or SCM_CREDENTIALS"
							: "control message other than SCM_RIGHTS";
			continue;
		}
		if (c->cmsg_len < CMSG_LEN(0)) {
			bad = "short control message";
			continue;
		}
		payload = c->cmsg_len - CMSG_LEN(0);
		if (payload % sizeof(int) != 0)
			bad = "SCM_RIGHTS length not a multiple of an fd";
		for (k = 0; k + sizeof(int) <= payload && nfds < sizeof(fds) / sizeof(fds[0]); k += sizeof(int))
			memcpy(&fds[nfds++], CMSG_DATA(c) + k, sizeof(int));
	}
	if (msg.msg_flags & MSG_CTRUNC)
		bad = "control data truncated (MSG_CTRUNC)";
	else if (msg.msg_flags & MSG_TRUNC)
		bad = "message longer than expected (MSG_TRUNC)";
	else if (nfds > 0 && !(take & FDPASS_TAKE_FD))
		bad = "a message carrying a file descriptor";
	else if (nfds > 1)
		bad = "more than one fd in a message";
	if (bad != NULL) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return errbuf_fail(-EPROTO, err, errlen, "%s", bad);
	}
	if (nfds == 1)
		m->fd = fds[0];
	return n;
}

ssize_t fdpass_recv(int sock, void *buf, size_t len, int *fd, char *err, size_t errlen)
{
	struct fdpass_msg m;
	ssize_t n = fdpass_recv_msg(sock, buf, len, FDPASS_TAKE_FD, &m, err, errlen);

	*fd = m.fd;
	return n;
}
