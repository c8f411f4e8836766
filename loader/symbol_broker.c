/* symbol_broker: what the unprivileged exporter may ask the loader to open (see the header). */
#define _GNU_SOURCE /* struct ucred, SCM_CREDENTIALS */
#include "loader/symbol_broker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/log.h"
#include "ipc/sym_wire.h"
#include "loader/audit_log.h"
#include "loader/mapped_file.h"

#define SB_SEC 1000000000ULL
/* Room for a few fds in a request: requests carry none, and a sender that
 * attaches some must see them closed here, not cut silently by the kernel. */
#define SB_CMSG_FDS 4

/* What one read from the socket gave. */
enum symbol_broker_recv {
	SB_RECV_NONE,      /* nothing queued */
	SB_RECV_REQUEST,   /* a request with an id (its kind still unchecked) */
	SB_RECV_MALFORMED, /* a message that is no request: no id to answer */
	SB_RECV_CLOSED,    /* every holder of the other end has closed it */
	SB_RECV_ERROR,
};

/* The pid a request names, 0 for none (kallsyms, debug_file). */
static uint32_t symbol_broker_target_pid(const Lowprof__Sym__SymRequest *req)
{
	switch (req->what_case) {
	case LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS:
		return req->maps->pid;
	case LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE:
		return req->mapped_file->pid;
	case LOWPROF__SYM__SYM_REQUEST__WHAT_PROCESS:
		return req->process->pid;
	default:
		return 0;
	}
}


/*
 * The audit record of a refusal: who (the sender's SCM_CREDENTIALS, -1 when
 * unknown), what (req may be NULL: a message that was no request), why.
 * Carries the count of refusals not audited one by one since the last record.
 */
static void symbol_broker_audit(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
				const char *what, int errnum, const char *why, uint64_t rate_not_audited)
{
	struct audit_actor who = {"exporter", b->peer_pid, b->peer_uid};
	struct audit_rec r;
	uint32_t pid;

	audit_rec_begin(&r, "request_refused", &who);
	audit_rec_str(&r, "request", what);
	audit_rec_str(&r, "reason", why);
	if (req != NULL) {
		/* "pid" is the requester's: the pid the request names is target_pid. */
		pid = symbol_broker_target_pid(req);
		if (pid != 0)
			audit_rec_u64(&r, "target_pid", pid);
		if (req->what_case == LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE) {
			audit_rec_u64(&r, "start", req->mapped_file->start);
			audit_rec_u64(&r, "end", req->mapped_file->end);
			audit_rec_u64(&r, "inode", req->mapped_file->inode);
		}
		if (req->what_case == LOWPROF__SYM__SYM_REQUEST__WHAT_DEBUG_FILE)
			audit_rec_str(&r, "build_id", req->debug_file->build_id);
	}
	if (rate_not_audited > 0)
		audit_rec_u64(&r, "rate_refusals_not_audited", rate_not_audited);
	if (b->audit_suppressed > 0)
		audit_rec_u64(&r, "refusals_not_audited", b->audit_suppressed);
	b->audit_suppressed = 0;
	audit_rec_end(&r, errnum);
}

static void symbol_broker_send(struct symbol_broker *b, const Lowprof__Sym__SymReply *rep, int fd)
{
	int rc = sym_wire_send_reply(b->fd, rep, fd);

	/* Sent or not, the exporter holds its own reference now (or none). */
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		/* EAGAIN: the exporter is not reading. It times out; we never wait. */
		if (b->st.replies_dropped++ == 0)
			log_warn("symbol broker: reply %u dropped: %s (counted from now on)", rep->id,
				 strerror(-rc));
	}
}

static void symbol_broker_reply_error(struct symbol_broker *b, uint32_t id, int errnum, const char *why)
{
	Lowprof__Sym__SymReply rep = LOWPROF__SYM__SYM_REPLY__INIT;

	rep.id = id;
	rep.error = errnum;
	rep.reason = (char *)why;
	symbol_broker_send(b, &rep, -1);
}

/* Refused for what the request is (not for the rate): audited within the budget, answered. */
static void symbol_broker_refuse(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
				 int errnum, const char *why, uint64_t now_ns)
{
	const char *what = sym_wire_request_name(req->what_case);

	b->st.refused++;
	if (token_bucket_take(&b->audit_budget, now_ns)) {
		log_warn("audit: exporter pid %d uid %d: %s refused: %s", (int)b->peer_pid,
			 b->peer_uid == (uid_t)-1 ? -1 : (int)b->peer_uid, what, why);
		symbol_broker_audit(b, req, what, errnum, why, 0);
	} else {
		b->audit_suppressed++;
		b->st.audit_suppressed++;
	}
	symbol_broker_reply_error(b, req->id, errnum, why);
}

/* A message that was no request: nothing to answer, audited within the budget. */
static void symbol_broker_malformed(struct symbol_broker *b, const char *why, uint64_t now_ns)
{
	b->st.malformed++;
	if (token_bucket_take(&b->audit_budget, now_ns)) {
		log_warn("audit: exporter pid %d: malformed message: %s", (int)b->peer_pid, why);
		symbol_broker_audit(b, NULL, "malformed", EBADMSG, why, 0);
	} else {
		b->audit_suppressed++;
		b->st.audit_suppressed++;
	}
}

/* Past the bucket: EBUSY, audited at most once a second with a count of the
 * others (the control server's scheme), so that a flood cannot fill the disk. */
static void symbol_broker_refuse_rate(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
				      uint64_t now_ns)
{
	static const char why[] = "rate limit exceeded";
	const char *what = req != NULL ? sym_wire_request_name(req->what_case) : "malformed";

	b->st.refused++;
	b->st.rate_limited++;
	if (b->rate_last_audit_ns == 0 || now_ns - b->rate_last_audit_ns >= SB_SEC) {
		log_warn("audit: exporter pid %d: %s refused: rate limit (%u/s)", (int)b->peer_pid, what,
			 b->cfg.rate_per_s);
		symbol_broker_audit(b, req, what, EBUSY, why, b->rate_audit_suppressed);
		b->rate_audit_suppressed = 0;
		b->rate_last_audit_ns = now_ns;
	} else {
		b->rate_audit_suppressed++;
	}
	if (req != NULL)
		symbol_broker_reply_error(b, req->id, EBUSY, why);
}

/* The outcome of an open: fd >= 0 is served, -errno is answered as an error
 * (a pid that exited, a missing debug file: the exporter's races, not refusals). */
static void symbol_broker_answer_fd(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
				    int fd_or_err, const char *what)
{
	Lowprof__Sym__SymReply rep = LOWPROF__SYM__SYM_REPLY__INIT;
	char why[256];

	if (fd_or_err >= 0) {
		b->st.served++;
		rep.id = req->id;
		symbol_broker_send(b, &rep, fd_or_err);
		return;
	}
	b->st.errors++;
	snprintf(why, sizeof(why), "%s: %s", what, strerror(-fd_or_err));
	symbol_broker_reply_error(b, req->id, -fd_or_err, why);
}

static int symbol_broker_open(const char *path, int flags)
{
	int fd = open(path, flags);

	return fd >= 0 ? fd : -errno;
}

static void symbol_broker_serve_maps(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
				     uint64_t now_ns)
{
	char path[SYMBOL_BROKER_ROOT_MAX + 32];

	(void)now_ns;
	/* The kernel checks ptrace access at open time: the fd reads in the exporter. */
	snprintf(path, sizeof(path), "%s/%u/maps", b->proc_root, req->maps->pid);
	symbol_broker_answer_fd(b, req, symbol_broker_open(path, O_RDONLY | O_CLOEXEC), "maps");
}

/*
 * Find the line of PID's maps at exactly [start, end). Returns 1 (found, in
 * *m), 0 (not there), or -errno (the maps unreadable; -ESRCH when they are
 * empty: the process exited while being read, or is a kernel thread).
 */
static int symbol_broker_find_mapping(const struct symbol_broker *b, uint32_t pid, uint64_t start,
				      uint64_t end, struct mapped_file *m)
{
	char path[SYMBOL_BROKER_ROOT_MAX + 32], *line = NULL;
	size_t cap = 0, lines = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/maps", b->proc_root, pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		lines++;
		if (mapped_file_parse_line(line, m) && m->start == start && m->end == end) {
			found = 1;
			break;
		}
	}
	free(line);
	fclose(f);
	if (!found && lines == 0)
		return -ESRCH;
	return found;
}

/* The file mapped executable at [start, end): the loader reads the maps itself,
 * so that the exporter can name only what the process really maps. */
static void symbol_broker_serve_mapped_file(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
					    uint64_t now_ns)
{
	const Lowprof__Sym__MappedFileRequest *q = req->mapped_file;
	struct mapped_file m;
	struct stat st;
	char why[256];
	int rc;

	rc = symbol_broker_find_mapping(b, q->pid, q->start, q->end, &m);
	if (rc < 0) {
		symbol_broker_answer_fd(b, req, rc, "maps");
		return;
	}
	if (rc == 0)
		snprintf(why, sizeof(why), "pid %u has no mapping at exactly [0x%llx, 0x%llx)", q->pid,
			 (unsigned long long)q->start, (unsigned long long)q->end);
	else if (m.perms[2] != 'x')
		snprintf(why, sizeof(why), "the mapping is not executable (%s)", m.perms);
	else if (m.ino == 0 || m.path[0] != '/')
		snprintf(why, sizeof(why), "the mapping is not of a file");
	else if (m.ino != q->inode)
		snprintf(why, sizeof(why), "inode %llu is not the mapping's (%llu)",
			 (unsigned long long)q->inode, (unsigned long long)m.ino);
	else
		why[0] = '\0';
	if (why[0] != '\0') {
		symbol_broker_refuse(b, req, EACCES, why, now_ns);
		return;
	}
	symbol_broker_answer_fd(b, req, mapped_file_open(b->proc_root, (pid_t)q->pid, &m, &st),
				"opening the mapped file");
}

static void symbol_broker_serve_debug_file(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
					   uint64_t now_ns)
{
	/* Checked by sym_wire_check_request: lowercase hex only, so no '/' or "..". */
	const char *id = req->debug_file->build_id;
	char path[SYMBOL_BROKER_ROOT_MAX + SYM_WIRE_MAX_BUILD_ID + 32];
	struct stat st;
	int fd;

	(void)now_ns;
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", b->debug_root, id, id + 2);
	fd = symbol_broker_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -EINVAL;
	}
	symbol_broker_answer_fd(b, req, fd, "debug file");
}

static void symbol_broker_serve_kallsyms(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
					 uint64_t now_ns)
{
	char path[SYMBOL_BROKER_ROOT_MAX + 16];

	(void)now_ns;
	/* kallsyms decides at open time, by the opener's CAP_SYSLOG, whether its
	 * addresses are real: the loader opens, the exporter reads. */
	snprintf(path, sizeof(path), "%s/kallsyms", b->proc_root);
	symbol_broker_answer_fd(b, req, symbol_broker_open(path, O_RDONLY | O_CLOEXEC), "kallsyms");
}

/* Up to SYM_WIRE_MAX_CGROUP bytes of PID's cgroup file, longer cut at its
 * last whole line. Returns the length or -errno. */
static ssize_t symbol_broker_read_cgroup(const struct symbol_broker *b, uint32_t pid, uint8_t *buf)
{
	char path[SYMBOL_BROKER_ROOT_MAX + 32];
	size_t len = 0;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%u/cgroup", b->proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* One byte past the bound tells a file that does not fit. */
	while (len < SYM_WIRE_MAX_CGROUP + 1) {
		n = read(fd, buf + len, SYM_WIRE_MAX_CGROUP + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len > SYM_WIRE_MAX_CGROUP) {
		uint8_t *nl = memrchr(buf, '\n', SYM_WIRE_MAX_CGROUP);

		len = nl != NULL ? (size_t)(nl - buf) + 1 : 0;
	}
	return (ssize_t)len;
}

static void symbol_broker_serve_process(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
					uint64_t now_ns)
{
	Lowprof__Sym__SymReply rep = LOWPROF__SYM__SYM_REPLY__INIT;
	char path[SYMBOL_BROKER_ROOT_MAX + 32], exe[SYM_WIRE_MAX_EXE_PATH + 1], why[128];
	uint8_t cgroup[SYM_WIRE_MAX_CGROUP + 1];
	uint32_t pid = req->process->pid;
	ssize_t n, cg;
	int exe_err = 0;

	(void)now_ns;
	snprintf(path, sizeof(path), "%s/%u/exe", b->proc_root, pid);
	n = readlink(path, exe, sizeof(exe));
	if (n < 0)
		exe_err = errno;
	/* A path that fills the buffer may be cut: unknown rather than wrong. */
	if (n < 0 || (size_t)n > SYM_WIRE_MAX_EXE_PATH)
		n = 0;
	exe[n] = '\0';
	cg = symbol_broker_read_cgroup(b, pid, cgroup);
	if (cg < 0 && exe_err != 0) {
		/* Nothing known. Both ENOENT: the pid does not exist. */
		int e = cg == -ENOENT && exe_err == ENOENT ? ESRCH : (int)-cg;

		b->st.errors++;
		snprintf(why, sizeof(why), "process %u: %s", pid, strerror(e));
		symbol_broker_reply_error(b, req->id, e, why);
		return;
	}
	/* A kernel thread has no exe; a cgroup unreadable leaves it empty. */
	b->st.served++;
	rep.id = req->id;
	rep.exe_path = exe;
	rep.cgroup.data = cgroup;
	rep.cgroup.len = cg > 0 ? (size_t)cg : 0;
	symbol_broker_send(b, &rep, -1);
}

/* The whole of what the exporter may ask. */
static const struct symbol_broker_request {
	Lowprof__Sym__SymRequest__WhatCase kind;
	void (*serve)(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req, uint64_t now_ns);
} symbol_broker_requests[] = {
	{LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS, symbol_broker_serve_maps},
	{LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE, symbol_broker_serve_mapped_file},
	{LOWPROF__SYM__SYM_REQUEST__WHAT_DEBUG_FILE, symbol_broker_serve_debug_file},
	{LOWPROF__SYM__SYM_REQUEST__WHAT_KALLSYMS, symbol_broker_serve_kallsyms},
	{LOWPROF__SYM__SYM_REQUEST__WHAT_PROCESS, symbol_broker_serve_process},
};

/* A request with an id: check its fields, then serve it. */
static void symbol_broker_dispatch(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
				   uint64_t now_ns)
{
	char why[200];
	size_t i;

	/* Also refuses a kind this build does not know (unpacked as "not set"). */
	if (sym_wire_check_request(req, why, sizeof(why)) != 0) {
		symbol_broker_refuse(b, req, EINVAL, why, now_ns);
		return;
	}
	for (i = 0; i < sizeof(symbol_broker_requests) / sizeof(symbol_broker_requests[0]); i++) {
		if (symbol_broker_requests[i].kind == req->what_case) {
			symbol_broker_requests[i].serve(b, req, now_ns);
			return;
		}
	}
	symbol_broker_refuse(b, req, EOPNOTSUPP, "not a request the loader answers", now_ns);
}

/* recvmsg said 0: an empty message, or the end? Every holder of the other end
 * gone (or a shutdown) shows as a hang-up, which an empty message does not. */
static bool symbol_broker_peer_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0;
}

/*
 * Read one message with the strictness of ipc/fd_pass.c (MSG_TRUNC,
 * MSG_CTRUNC, cmsg types and lengths, every fd closed: requests carry none)
 * and, unlike it, take the sender's SCM_CREDENTIALS. Sets b->peer_pid/uid
 * (-1 when the message carried none) and *have_cred.
 */
static enum symbol_broker_recv symbol_broker_recv(struct symbol_broker *b, Lowprof__Sym__SymRequest **out,
						  bool *have_cred, char *why, size_t whylen)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(SB_CMSG_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	uint8_t data[SYM_WIRE_MAX_REQUEST + 1]; /* one byte more: a message that fills it is too long */
	struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
	Lowprof__Sym__SymRequest *req;
	const char *bad = NULL;
	struct msghdr msg;
	struct cmsghdr *c;
	struct ucred cred;
	bool fds = false;
	ssize_t n;

	*out = NULL;
	*have_cred = false;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	do {
		n = recvmsg(b->fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return SB_RECV_NONE;
		snprintf(why, whylen, "recvmsg: %s", strerror(errno));
		return SB_RECV_ERROR;
	}
	b->peer_pid = -1;
	b->peer_uid = (uid_t)-1;
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			if (c->cmsg_len != CMSG_LEN(sizeof(cred))) {
				bad = "bad SCM_CREDENTIALS length";
				continue;
			}
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			/* pid 0: queued before SO_PASSCRED, the kernel attached nobody. */
			if (cred.pid > 0) {
				b->peer_pid = cred.pid;
				b->peer_uid = cred.uid;
				*have_cred = true;
			}
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k, payload = c->cmsg_len >= CMSG_LEN(0) ? c->cmsg_len - CMSG_LEN(0) : 0;
			int fd;

			for (k = 0; k + sizeof(int) <= payload; k += sizeof(int)) {
				memcpy(&fd, CMSG_DATA(c) + k, sizeof(int));
				close(fd);
			}
			fds = true;
		} else {
			bad = "control message other than SCM_RIGHTS or SCM_CREDENTIALS";
		}
	}
	if (msg.msg_flags & MSG_CTRUNC)
		bad = "control data truncated (MSG_CTRUNC)";
	else if ((msg.msg_flags & MSG_TRUNC) || (size_t)n > SYM_WIRE_MAX_REQUEST)
		bad = "request longer than the protocol's largest";
	else if (fds)
		bad = "a request carrying a file descriptor";
	if (bad == NULL && n == 0) {
		if (symbol_broker_peer_gone(b->fd))
			return SB_RECV_CLOSED;
		bad = "empty message";
	}
	if (bad != NULL) {
		snprintf(why, whylen, "%s", bad);
		return SB_RECV_MALFORMED;
	}
	req = lowprof__sym__sym_request__unpack(NULL, (size_t)n, data);
	if (req == NULL) {
		snprintf(why, whylen, "request of %zd bytes does not unpack", n);
		return SB_RECV_MALFORMED;
	}
	if (req->id == 0) {
		/* Nothing to answer it with: the exporter matches replies by id. */
		snprintf(why, whylen, "%s request with id 0", sym_wire_request_name(req->what_case));
		lowprof__sym__sym_request__free_unpacked(req, NULL);
		return SB_RECV_MALFORMED;
	}
	*out = req;
	return SB_RECV_REQUEST;
}

int symbol_broker_init(struct symbol_broker *b, int sock, const struct symbol_broker_config *cfg,
		       uint64_t now_ns)
{
	int one = 1, flags;

	memset(b, 0, sizeof(*b));
	b->fd = -1;
	b->peer_pid = -1;
	b->peer_uid = (uid_t)-1;
	if (sock < 0 || strlen(cfg->proc_root) >= sizeof(b->proc_root) ||
	    strlen(cfg->debug_root) >= sizeof(b->debug_root))
		return -EINVAL;
	snprintf(b->proc_root, sizeof(b->proc_root), "%s", cfg->proc_root);
	snprintf(b->debug_root, sizeof(b->debug_root), "%s", cfg->debug_root);
	b->cfg = *cfg;
	b->cfg.proc_root = b->proc_root;
	b->cfg.debug_root = b->debug_root;
	if (b->cfg.burst == 0)
		b->cfg.burst = SYMBOL_BROKER_RATE_BURST;
	b->fd = sock;
	/* Never block the loader on the exporter; never leak into a child. */
	flags = fcntl(sock, F_GETFL);
	if (flags >= 0)
		fcntl(sock, F_SETFL, flags | O_NONBLOCK);
	fcntl(sock, F_SETFD, FD_CLOEXEC);
	/* Every message then carries its sender's pid and uid, filled in by the
	 * kernel: the peer check, and who a refusal is audited under. */
	if (setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0 && cfg->check_peer)
		log_warn("SO_PASSCRED: %s: every symbol request will be refused", strerror(errno));
	token_bucket_init(&b->rate, b->cfg.rate_per_s, b->cfg.burst, now_ns);
	token_bucket_init(&b->audit_budget, SYMBOL_BROKER_AUDIT_PER_S, SYMBOL_BROKER_AUDIT_BURST, now_ns);
	return 0;
}

/* Is the sender of what was just read the exporter? 0, or -EPERM with why. */
static int symbol_broker_check_sender(const struct symbol_broker *b, bool have_cred, char *why,
				      size_t whylen)
{
	if (!b->cfg.check_peer)
		return 0;
	if (!have_cred) {
		snprintf(why, whylen, "no sender credentials on the symbol socket");
		return -EPERM;
	}
	if (b->peer_uid != b->cfg.exporter_uid) {
		snprintf(why, whylen, "sender uid %u is not the exporter's uid %u", (unsigned)b->peer_uid,
			 (unsigned)b->cfg.exporter_uid);
		return -EPERM;
	}
	return 0;
}

int symbol_broker_handle(struct symbol_broker *b, uint64_t now_ns)
{
	Lowprof__Sym__SymRequest *req;
	enum symbol_broker_recv rc;
	char why[200];
	bool have_cred;
	int n;

	if (b->fd < 0)
		return -EPIPE;
	for (n = 0; n < SYMBOL_BROKER_MAX_PER_WAKE; n++) {
		rc = symbol_broker_recv(b, &req, &have_cred, why, sizeof(why));
		if (rc == SB_RECV_NONE)
			return 0;
		if (rc == SB_RECV_CLOSED) {
			log_warn("symbol broker: the exporter's end of the symbol socket is closed");
			close(b->fd);
			b->fd = -1;
			return -EPIPE;
		}
		if (rc == SB_RECV_ERROR) {
			log_warn("symbol broker: %s", why);
			return 0;
		}
		/* Every message, request or garbage, takes a token: the bucket bounds
		 * the work (and the audit lines) a flood can cause. */
		if (!token_bucket_take(&b->rate, now_ns)) {
			symbol_broker_refuse_rate(b, req, now_ns);
		} else if (symbol_broker_check_sender(b, have_cred, why, sizeof(why)) != 0) {
			if (req != NULL)
				symbol_broker_refuse(b, req, EPERM, why, now_ns);
			else
				symbol_broker_malformed(b, why, now_ns);
		} else if (rc == SB_RECV_MALFORMED) {
			symbol_broker_malformed(b, why, now_ns);
		} else {
			symbol_broker_dispatch(b, req, now_ns);
		}
		sym_wire_free_request(req);
	}
	return 0;
}

void symbol_broker_tick(struct symbol_broker *b, uint64_t now_ns)
{
	/* Refusals counted but not yet on the record: a flood that stopped leaves
	 * no later refusal to carry them, so they get a record of their own, once
	 * the second since the last rate record is over (or at close). */
	if (b->rate_audit_suppressed > 0 &&
	    (now_ns == UINT64_MAX || now_ns - b->rate_last_audit_ns >= SB_SEC)) {
		symbol_broker_audit(b, NULL, "summary", EBUSY, "rate limit exceeded",
				    b->rate_audit_suppressed);
		b->rate_audit_suppressed = 0;
		b->rate_last_audit_ns = now_ns == UINT64_MAX ? b->rate_last_audit_ns : now_ns;
	}
	if (b->audit_suppressed > 0 &&
	    (now_ns == UINT64_MAX || token_bucket_take(&b->audit_budget, now_ns)))
		symbol_broker_audit(b, NULL, "summary", EINVAL, "refusals over the audit budget", 0);
}

void symbol_broker_close(struct symbol_broker *b)
{
	const struct symbol_broker_stats *s = &b->st;

	symbol_broker_tick(b, UINT64_MAX);

	if (s->served + s->errors + s->refused + s->malformed > 0)
		log_info("symbol broker: %llu served, %llu errors, %llu refused (%llu rate-limited), "
			 "%llu malformed, %llu replies dropped",
			 (unsigned long long)s->served, (unsigned long long)s->errors,
			 (unsigned long long)s->refused, (unsigned long long)s->rate_limited,
			 (unsigned long long)s->malformed, (unsigned long long)s->replies_dropped);
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
}
