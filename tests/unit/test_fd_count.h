/*
 * Open file descriptors of the test process: proves a refused message's fd
 * was closed. And a sender of fds a peer should not send.
 */
#ifndef LOWPROF_TESTS_TEST_FD_COUNT_H
#define LOWPROF_TESTS_TEST_FD_COUNT_H

#include <dirent.h>
#include <string.h>
#include <sys/socket.h>

/* Entries of /proc/self/fd, the directory's own fd not counted; -1 if unreadable. */
static inline int test_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

/*
 * One message of len bytes with copies of fd in one SCM_RIGHTS (at most 64):
 * more than a receiver has room for makes its control data truncated
 * (MSG_CTRUNC). Returns what sendmsg returns.
 */
static inline ssize_t test_send_fds(int sock, const void *buf, size_t len, int fd, int copies)
{
	union {
		char buf[CMSG_SPACE(64 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg;
	struct cmsghdr *c;
	int i;

	memset(&ctl, 0, sizeof(ctl));
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = CMSG_SPACE((size_t)copies * sizeof(int));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)copies * sizeof(int));
	for (i = 0; i < copies; i++)
		memcpy(CMSG_DATA(c) + (size_t)i * sizeof(int), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL);
}

#endif
