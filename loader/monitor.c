/* monitor: what the loader's servers of less trusted peers share (see the header). */
#define _GNU_SOURCE /* POLLRDHUP */
#include "loader/monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/log.h"
#include "common/proc_stat.h"
#include "ipc/fd_pass.h"

void monitor_init(struct monitor *m, int fd, const struct monitor_config *cfg, uint64_t now_ns)
{
	int one = 1, flags;

	memset(m, 0, sizeof(*m));
	m->fd = fd;
	m->cfg = *cfg;
	m->peer_pid = -1;
	m->peer_uid = (uid_t)-1;
	m->checked_pidfd = -1;
	token_bucket_init(&m->rate, cfg->rate_per_s, cfg->rate_burst, now_ns);
	token_bucket_init(&m->audit_budget, cfg->audit_per_s, cfg->audit_burst, now_ns);
	if (fd < 0)
		return;
	/* Never block the loader on a peer; never leak into a child. */
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	/* Every message then carries its sender's pid and uid, filled in by the
	 * kernel: the peer check, and who a refusal is audited under. */
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0 && cfg->check_peer)
		log_warn("SO_PASSCRED on the %s socket: %s: every message will be refused",
			 cfg->socket_name, strerror(errno));
}

/* recvmsg said 0: an empty message, or the end? Every holder of the other end
 * gone (or a shutdown) shows as a hang-up, which an empty message does not. */
static bool monitor_peer_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0;
}

enum monitor_recv monitor_recv(struct monitor *m, void *buf, size_t len, size_t *got, char *why,
			       size_t whylen)
{
	struct fdpass_msg msg;
	ssize_t n;

	*got = 0;
	n = fdpass_recv_msg(m->fd, buf, len, FDPASS_TAKE_CRED | FDPASS_DONTWAIT, &msg, why, whylen);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return MONITOR_RECV_NONE;
	m->peer_pid = msg.pid;
	m->peer_uid = msg.uid;
	m->have_cred = msg.have_cred;
	if (n == -EPROTO)
		return MONITOR_RECV_REFUSED;
	if (n < 0)
		return MONITOR_RECV_ERROR;
	if (n == 0) {
		if (monitor_peer_gone(m->fd))
			return MONITOR_RECV_CLOSED;
		errbuf_set(why, whylen, "empty message");
		return MONITOR_RECV_REFUSED;
	}
	*got = (size_t)n;
	return MONITOR_RECV_MESSAGE;
}

/* The parent of pid (/proc/PID/stat); -1 if unknown. */
/* The parent of pid, -1 if unknown, or -ESRCH when pid has exited (and was reaped). */
static pid_t monitor_parent_of(pid_t pid)
{
	unsigned long long ppid;
	int rc = proc_stat_field(pid, PROC_STAT_PPID, &ppid);

	if (rc == -ENOENT || rc == -ESRCH)
		return -ESRCH;
	return rc == 0 ? (pid_t)ppid : -1;
}

/* Does pidfd's process still run (not exited, whether reaped or not)? */
static bool monitor_pidfd_alive(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	return poll(&p, 1, 0) == 0;
}

static void monitor_forget_sender(struct monitor *m)
{
	if (m->checked_pidfd >= 0)
		close(m->checked_pidfd);
	m->checked_pidfd = -1;
	m->checked_pid = 0;
}

/* The parent and program checks, read from /proc. */
static int monitor_read_sender(const struct monitor *m, char *why, size_t whylen)
{
	char exe[256];
	pid_t parent;

	if (m->cfg.expected_ppid > 0) {
		parent = monitor_parent_of(m->peer_pid);
		/* Gone (and reaped) since it sent: nothing vouches for the message, but
		 * nothing is left to cut off either. The caller drops the message;
		 * the channel stays for the component's next instance. */
		if (parent == -ESRCH)
			return errbuf_fail(-ESRCH, why, whylen,
					   "sender pid %d has exited: its message is dropped",
					   (int)m->peer_pid);
		if (parent != m->cfg.expected_ppid)
			return errbuf_fail(-EACCES, why, whylen,
					   "sender pid %d is not a child of the supervisor (pid %d) but of %d",
					   (int)m->peer_pid, (int)m->cfg.expected_ppid, (int)parent);
	}
	if (m->cfg.expected_exe != NULL && !proc_exe_is(m->peer_pid, m->cfg.expected_exe, exe, sizeof(exe)))
		return errbuf_fail(-EACCES, why, whylen, "sender pid %d runs %.160s, not %s",
				   (int)m->peer_pid, exe, m->cfg.expected_exe);
	return 0;
}

int monitor_check_sender(struct monitor *m, char *why, size_t whylen)
{
	int pidfd, rc;

	if (!m->cfg.check_peer)
		return 0;
	if (!m->have_cred)
		return errbuf_fail(-EACCES, why, whylen, "no sender credentials on the %s socket",
				   m->cfg.socket_name);
	if (m->peer_uid != m->cfg.expected_uid)
		return errbuf_fail(-EACCES, why, whylen, "sender uid %u is not the %s's uid %u",
				   (unsigned)m->peer_uid, m->cfg.component, (unsigned)m->cfg.expected_uid);
	if (m->cfg.expected_ppid <= 0 && m->cfg.expected_exe == NULL)
		return 0;
	/* The process checked last, still running: the same process. */
	if (m->checked_pidfd >= 0 && m->peer_pid == m->checked_pid &&
	    monitor_pidfd_alive(m->checked_pidfd))
		return 0;
	monitor_forget_sender(m);
	m->st.sender_reads++;
	/* The pidfd first, its process still running after the reads: the
	 * reads were of that process, not of one that took its pid since. */
	pidfd = (int)syscall(SYS_pidfd_open, m->peer_pid, 0);
	rc = monitor_read_sender(m, why, whylen);
	if (rc == 0 && pidfd >= 0 && monitor_pidfd_alive(pidfd)) {
		m->checked_pidfd = pidfd;
		m->checked_pid = m->peer_pid; /* a pidfd is close-on-exec */
	} else if (pidfd >= 0) {
		close(pidfd);
	}
	return rc;
}

static const struct monitor_request *monitor_find(const struct monitor_protocol *p, int kind)
{
	size_t i;

	for (i = 0; i < p->nrequests; i++)
		if (p->requests[i].kind == kind)
			return &p->requests[i];
	return NULL;
}

static const char *monitor_what(const struct monitor_protocol *p, const void *msg)
{
	return msg != NULL ? p->kind_name(p->kind_of(msg)) : "malformed";
}

/* A signed uid for logs: -1 when unknown. */
static long monitor_log_uid(const struct monitor *m)
{
	return m->peer_uid == (uid_t)-1 ? -1 : (long)m->peer_uid;
}

/*
 * One record about the current peer: who (its SCM_CREDENTIALS, -1 when
 * unknown), what, why, the request's own fields, and the counts of the
 * refusals not audited one by one since the last record (rate: only those
 * passed, the caller's to reset).
 */
static void monitor_record(struct monitor *m, const struct monitor_protocol *p, const void *msg,
			   const char *event, const char *what, int errnum, const char *why,
			   uint64_t rate_not_audited)
{
	struct audit_actor who = {m->cfg.component, m->peer_pid, m->peer_uid};
	const struct monitor_request *e;
	struct audit_rec r;

	audit_rec_begin(&r, event, &who);
	if (what != NULL)
		audit_rec_str(&r, "request", what);
	audit_rec_str(&r, "reason", why);
	if (p != NULL && msg != NULL) {
		e = monitor_find(p, p->kind_of(msg));
		if (e != NULL && e->audit != NULL)
			e->audit(&r, msg);
	}
	if (rate_not_audited > 0)
		audit_rec_u64(&r, "rate_refusals_not_audited", rate_not_audited);
	if (m->audit_suppressed > 0)
		audit_rec_u64(&r, "refusals_not_audited", m->audit_suppressed);
	m->audit_suppressed = 0;
	audit_rec_end(&r, errnum);
}

void monitor_audit_refusal(struct monitor *m, const struct monitor_protocol *p, const void *msg,
			   const char *what, int errnum, const char *why, uint64_t now_ns)
{
	if (!token_bucket_take(&m->audit_budget, now_ns)) {
		m->audit_suppressed++;
		m->st.audit_suppressed++;
		return;
	}
	log_warn("audit: %s pid %d uid %ld: %s refused: %s", m->cfg.component, (int)m->peer_pid,
		 monitor_log_uid(m), what, why);
	monitor_record(m, p, msg, "request_refused", what, errnum, why, 0);
}

int monitor_refuse(struct monitor *m, const struct monitor_protocol *p, void *server,
		   const void *msg, int errnum, const char *why, uint64_t now_ns)
{
	m->st.refused++;
	monitor_audit_refusal(m, p, msg, monitor_what(p, msg), errnum, why, now_ns);
	return msg != NULL && p->answer != NULL ? p->answer(server, msg, errnum, why) : 0;
}

int monitor_admit(struct monitor *m, const struct monitor_protocol *p, void *server,
		  const void *msg, uint64_t now_ns)
{
	const char *what = monitor_what(p, msg);

	if (token_bucket_take(&m->rate, now_ns))
		return 1;
	m->st.refused++;
	m->st.rate_limited++;
	/* Audited at most once a second, with a count of the others, so that a
	 * flood cannot fill the disk through us. */
	if (m->rate_last_audit_ns == 0 || now_ns - m->rate_last_audit_ns >= MONITOR_RATE_AUDIT_NS) {
		log_warn("audit: %s pid %d uid %ld: %s refused: rate limit (%u/s)", m->cfg.component,
			 (int)m->peer_pid, monitor_log_uid(m), what, m->cfg.rate_per_s);
		monitor_record(m, p, msg, "request_refused", what, EBUSY, MONITOR_RATE_WHY,
			       m->rate_audit_suppressed);
		m->rate_audit_suppressed = 0;
		m->rate_last_audit_ns = now_ns;
	} else {
		m->rate_audit_suppressed++;
	}
	if (msg == NULL || p->answer == NULL)
		return 0;
	return p->answer(server, msg, EBUSY, MONITOR_RATE_WHY);
}

int monitor_dispatch(struct monitor *m, const struct monitor_protocol *p, void *server,
		     const void *msg, unsigned state, uint64_t now_ns)
{
	const struct monitor_request *e;
	char why[256];
	int rc;

	if (p->check != NULL && (rc = p->check(server, msg, why, sizeof(why))) != 0)
		return monitor_refuse(m, p, server, msg, -rc, why, now_ns);
	e = monitor_find(p, p->kind_of(msg));
	if (e == NULL) {
		snprintf(why, sizeof(why), "%s is not a request the loader answers", monitor_what(p, msg));
		return monitor_refuse(m, p, server, msg, EOPNOTSUPP, why, now_ns);
	}
	if (e->states != 0 && !(e->states & state))
		return monitor_refuse(m, p, server, msg, EPERM, p->state_refusal, now_ns);
	if (e->validate != NULL && (rc = e->validate(server, msg, why, sizeof(why))) != 0)
		return monitor_refuse(m, p, server, msg, -rc, why, now_ns);
	return e->handle(server, msg, now_ns);
}

void monitor_audit_cut_off(struct monitor *m, const char *why)
{
	log_warn("audit: %s pid %d uid %ld: cut off: %s", m->cfg.component, (int)m->peer_pid,
		 monitor_log_uid(m), why);
	monitor_record(m, NULL, NULL, "peer_cut_off", NULL, EPROTO, why, 0);
}

void monitor_tick(struct monitor *m, uint64_t now_ns)
{
	/* Refusals counted but not yet on the record: a flood that stopped leaves
	 * no later refusal to carry them, so they get a record of their own, once
	 * the second since the last rate record is over (or at close). */
	if (m->rate_audit_suppressed > 0 &&
	    (now_ns == UINT64_MAX || now_ns - m->rate_last_audit_ns >= MONITOR_RATE_AUDIT_NS)) {
		monitor_record(m, NULL, NULL, "request_refused", "summary", EBUSY, MONITOR_RATE_WHY,
			       m->rate_audit_suppressed);
		m->rate_audit_suppressed = 0;
		if (now_ns != UINT64_MAX)
			m->rate_last_audit_ns = now_ns;
	}
	if (m->audit_suppressed > 0 &&
	    (now_ns == UINT64_MAX || token_bucket_take(&m->audit_budget, now_ns)))
		monitor_record(m, NULL, NULL, "request_refused", "summary", EINVAL,
			       "refusals over the audit budget", 0);
}

void monitor_close(struct monitor *m)
{
	monitor_tick(m, UINT64_MAX);
	monitor_forget_sender(m);
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}
