#include "loader/cpu_uevents.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CPU_DEVPATH "/devices/system/cpu/cpu"
/* The kernel's own uevents, not udev's rebroadcast (group 2). */
#define UEVENT_GROUP_KERNEL 1
/* A uevent is at most UEVENT_BUFFER_SIZE (2048) bytes and its header. */
#define UEVENT_MSG_MAX 8192
#define FILTER_MAX 64
/*
 * Asked for as the socket's buffer (the kernel doubles it): some 70 messages
 * wait while the loader is busy, a whole SMT switch of a large host does
 * not. Past it the kernel says ENOBUFS and the loader opens every online
 * CPU's event again: always right, only more work.
 */
#define UEVENT_RCVBUF (32 * 1024)

/* "cpu3" after CPU_DEVPATH: decimal, no leading zero, under CPU_LIST_MAX. */
static bool parse_cpu_number(const char *s, int *cpu)
{
	long v = 0;

	if (*s == '\0' || (s[0] == '0' && s[1] != '\0'))
		return false;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
		if (v >= CPU_LIST_MAX)
			return false;
	}
	*cpu = (int)v;
	return true;
}

bool cpu_uevent_parse(const char *msg, size_t len, int *cpu, bool *online)
{
	const char *at, *action = NULL, *devpath = NULL, *subsystem = NULL, *p, *end = msg + len;
	size_t action_len;
	bool is_online;
	int n;

	if (len == 0 || msg[len - 1] != '\0')
		return false;
	at = strchr(msg, '@');
	if (at == NULL)
		return false;
	action_len = (size_t)(at - msg);
	if (action_len == 6 && memcmp(msg, "online", 6) == 0)
		is_online = true;
	else if (action_len == 7 && memcmp(msg, "offline", 7) == 0)
		is_online = false;
	else
		return false;
	if (strncmp(at + 1, CPU_DEVPATH, strlen(CPU_DEVPATH)) != 0 ||
	    !parse_cpu_number(at + 1 + strlen(CPU_DEVPATH), &n))
		return false;
	/* The keys must say the same as the header, each once. */
	for (p = msg + strlen(msg) + 1; p < end; p += strlen(p) + 1) {
		const char **slot = NULL, *value;

		if (strncmp(p, "ACTION=", 7) == 0)
			slot = &action, value = p + 7;
		else if (strncmp(p, "DEVPATH=", 8) == 0)
			slot = &devpath, value = p + 8;
		else if (strncmp(p, "SUBSYSTEM=", 10) == 0)
			slot = &subsystem, value = p + 10;
		else
			continue;
		if (*slot != NULL)
			return false;
		*slot = value;
	}
	if (action == NULL || devpath == NULL || subsystem == NULL)
		return false;
	if (strlen(action) != action_len || memcmp(action, msg, action_len) != 0 ||
	    strcmp(devpath, at + 1) != 0 || strcmp(subsystem, "cpu") != 0)
		return false;
	*cpu = n;
	*online = is_online;
	return true;
}

/* Instructions that compare the message's first len bytes with s. */
static size_t prefix_insns(size_t len)
{
	return 2 * (len / 4 + (len % 4 >= 2) + (len % 2));
}

/* Append them at f[*n]: each mismatch jumps to instruction fail. */
static void emit_prefix(struct sock_filter *f, size_t *n, const char *s, size_t fail)
{
	size_t len = strlen(s), off = 0;

	while (off < len) {
		size_t w = len - off >= 4 ? 4 : len - off >= 2 ? 2 : 1;
		uint32_t k = 0;
		size_t i;

		/* Loads are big-endian: the first byte is the most significant. */
		for (i = 0; i < w; i++)
			k = k << 8 | (uint8_t)s[off + i];
		f[*n] = (struct sock_filter)BPF_STMT(BPF_LD | (w == 4 ? BPF_W : w == 2 ? BPF_H : BPF_B) |
							     BPF_ABS, (uint32_t)off);
		(*n)++;
		f[*n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0,
						     (uint8_t)(fail - (*n + 1)));
		(*n)++;
		off += w;
	}
}

int cpu_uevents_filter(int fd)
{
	static const char *const prefixes[] = {"online@" CPU_DEVPATH, "offline@" CPU_DEVPATH};
	struct sock_filter f[FILTER_MAX];
	struct sock_fprog prog;
	size_t n = 0, i, next = 0;

	/* Each prefix's compares and an accept; a mismatch goes to the next
	 * prefix, the last one's to the final drop. A load past the message's
	 * end drops it too. */
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		next += prefix_insns(strlen(prefixes[i])) + 1;
		emit_prefix(f, &n, prefixes[i], next);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffffu);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0)
		return -errno;
	return 0;
}

int cpu_uevents_open(void)
{
	struct sockaddr_nl addr;
	int fd, rc;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
	if (fd < 0)
		return -errno;
	/* Filtered before bound: no other device's message is ever queued. */
	rc = cpu_uevents_filter(fd);
	if (rc == 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &(int){UEVENT_RCVBUF}, sizeof(int)) != 0)
		rc = -errno;
	if (rc == 0) {
		memset(&addr, 0, sizeof(addr));
		addr.nl_family = AF_NETLINK;
		addr.nl_groups = UEVENT_GROUP_KERNEL;
		if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
			rc = -errno;
	}
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

static void note(struct cpu_uevent_changes *out, int cpu, bool online)
{
	uint8_t *s = &out->state[cpu];

	if (*s == CPU_UEVENT_NONE)
		out->count++;
	if (!online)
		*s = CPU_UEVENT_OFFLINE;
	else if (*s == CPU_UEVENT_OFFLINE || *s == CPU_UEVENT_CYCLED)
		*s = CPU_UEVENT_CYCLED;
	else
		*s = CPU_UEVENT_ONLINE;
}

int cpu_uevents_read(int fd, struct cpu_uevent_changes *out)
{
	static char buf[UEVENT_MSG_MAX];

	memset(out, 0, sizeof(*out));
	for (;;) {
		struct sockaddr_nl from;
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof(from),
				    .msg_iov = &iov, .msg_iovlen = 1};
		ssize_t got = recvmsg(fd, &mh, 0);
		bool online;
		int cpu;

		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == ENOBUFS) {
				out->overflow = true;
				continue;
			}
			return -errno;
		}
		/* Only the kernel speaks for a CPU: a process with CAP_NET_ADMIN
		 * can send to our port, never as port 0. */
		if (mh.msg_namelen != sizeof(from) || from.nl_family != AF_NETLINK ||
		    from.nl_pid != 0 || (mh.msg_flags & MSG_TRUNC) ||
		    !cpu_uevent_parse(buf, (size_t)got, &cpu, &online)) {
			out->ignored++;
			continue;
		}
		note(out, cpu, online);
	}
}
