#define _GNU_SOURCE /* struct ucred, SO_PEERCRED */
#include "loader/control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/log.h"
#include "loader/audit_log.h"

static const char *const control_tier_names[] = {"healthy", "high", "critical"};

int control_throttle_from_wire(const Lowprof__Ctl__ThrottleState *st, struct control_throttle *out)
{
	int mode = wire_unwind_to_lowprof(st->unwind_mode);

	if (mode < 0 || st->tier < LOWPROF__CTL__TIER__TIER_HEALTHY ||
	    st->tier > LOWPROF__CTL__TIER__TIER_CRITICAL)
		return -EINVAL;
	out->tier = (unsigned)st->tier - (unsigned)LOWPROF__CTL__TIER__TIER_HEALTHY;
	out->frequency_hz = st->frequency_hz;
	out->unwind_mode = (unsigned)mode;
	out->max_depth = st->max_depth;
	out->sample_divisor = st->sample_divisor;
	out->paused = st->paused;
	return 0;
}

void control_throttle_to_wire(const struct control_throttle *t, Lowprof__Ctl__ThrottleState *out)
{
	lowprof__ctl__throttle_state__init(out);
	out->tier = (Lowprof__Ctl__Tier)(LOWPROF__CTL__TIER__TIER_HEALTHY + (int)t->tier);
	out->frequency_hz = t->frequency_hz;
	out->unwind_mode = wire_unwind_from_lowprof((int)t->unwind_mode);
	out->max_depth = t->max_depth;
	out->sample_divisor = t->sample_divisor;
	out->paused = t->paused;
}

void control_throttle_describe(const struct control_throttle *t, char *buf, size_t len)
{
	snprintf(buf, len, "%s %u Hz %s depth %u divisor %u%s",
		 t->tier < 3 ? control_tier_names[t->tier] : "?", t->frequency_hz,
		 t->unwind_mode == LOWPROF_UNWIND_DWARF ? "dwarf" : "fp", t->max_depth,
		 t->sample_divisor, t->paused ? " paused" : "");
}

static bool control_throttle_equal(const struct control_throttle *a, const struct control_throttle *b)
{
	return a->tier == b->tier && a->frequency_hz == b->frequency_hz &&
	       a->unwind_mode == b->unwind_mode && a->max_depth == b->max_depth &&
	       a->sample_divisor == b->sample_divisor && a->paused == b->paused;
}

/* Returns 0, or the negative errno of a failed send (the caller cuts the peer off). */
static int control_send_reply(struct control_server *cs, int errnum, const char *error)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__Reply reply = LOWPROF__CTL__REPLY__INIT;

	reply.ok = errnum == 0;
	reply.errnum = errnum;
	reply.error = (char *)(error != NULL ? error : "");
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY;
	env.reply = &reply;
	return wire_send(cs->fd, &env);
}

static void control_peer_actor(const struct control_server *cs, struct audit_actor *a)
{
	a->component = "controller";
	a->pid = cs->peer_pid;
	a->uid = cs->peer_uid;
}

/* The audit record of a refusal or a cut-off: who, what, why. */
static void control_audit(const struct control_server *cs, const char *event, const char *what,
			  int errnum, const char *why)
{
	struct audit_actor who;
	struct audit_rec r;

	control_peer_actor(cs, &who);
	audit_rec_begin(&r, event, &who);
	if (what != NULL)
		audit_rec_str(&r, "request", what);
	audit_rec_str(&r, "reason", why);
	if (cs->rate_audit_suppressed > 0)
		audit_rec_u64(&r, "rate_refusals_not_audited", cs->rate_audit_suppressed);
	audit_rec_end(&r, errnum);
}

static int control_refuse(struct control_server *cs, const char *what, int errnum, const char *why)
{
	cs->refused++;
	log_warn("audit: peer pid %d uid %u: %s refused: %s", (int)cs->peer_pid,
		 (unsigned)cs->peer_uid, what, why);
	control_audit(cs, "request_refused", what, errnum, why);
	return control_send_reply(cs, errnum, why);
}

/* The loader itself changes the settings: used by the fail-safe. */
static int control_apply(struct control_server *cs, const struct control_throttle *t,
			 const char *who, char *err, size_t errlen)
{
	char before[96], after[96];
	int rc;

	control_throttle_describe(&cs->applied, before, sizeof(before));
	control_throttle_describe(t, after, sizeof(after));
	/* The loader's apply audits each BPF action under this actor's name. */
	cs->actor = strcmp(who, "controller") == 0 ? "controller" : "loader";
	rc = cs->ops.apply(cs->ops.arg, t, err, errlen);
	if (rc == 0)
		cs->applied = *t;
	log_info("audit: %s: set_throttle %s -> %s: %s%s", who, before, after,
		 rc == 0 ? "applied" : "failed: ", rc == 0 ? "" : err);
	return rc;
}

static int control_handle_hello(struct control_server *cs, const Lowprof__Ctl__Envelope *env)
{
	const Lowprof__Ctl__Hello *h = env->hello;
	char why[96];
	int rc;

	if (h->version != WIRE_PROTOCOL_VERSION || h->component != LOWPROF__CTL__COMPONENT__COMPONENT_CONTROLLER) {
		snprintf(why, sizeof(why), "hello version %u component %d, expected version %u controller",
			 h->version, (int)h->component, WIRE_PROTOCOL_VERSION);
		control_refuse(cs, "hello", EPROTO, why);
		/* Not one of ours: nothing else it says can be trusted. */
		return -EPROTO;
	}
	rc = control_send_reply(cs, 0, NULL);
	if (rc != 0)
		return rc;
	if (cs->failsafe)
		log_info("controller said hello: fail-safe lifted, the controller decides again");
	cs->hello = true;
	cs->failsafe = false;
	/* The next Stats covers the time since this hello. */
	cs->have_base = cs->ops.counters(cs->ops.arg, &cs->base) == 0;
	return 0;
}

static int control_handle_stats_request(struct control_server *cs, const Lowprof__Ctl__Envelope *env)
{
	Lowprof__Ctl__Envelope out = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__Stats st = LOWPROF__CTL__STATS__INIT;
	Lowprof__Ctl__ThrottleState applied;
	struct control_counters now;
	const struct control_counters *b = &cs->base;
	int rc;

	(void)env;
	rc = cs->ops.counters(cs->ops.arg, &now);
	if (rc != 0)
		return control_send_reply(cs, -rc, "reading the BPF counters failed");
	if (!cs->have_base) {
		/* No baseline: an empty interval rather than counters since boot. */
		cs->base = now;
		cs->have_base = true;
	}
	/* Counters are monotonic; a smaller value (never expected) reads as 0. */
#define CONTROL_DELTA(f) (now.f >= b->f ? now.f - b->f : 0)
	st.monotonic_ns = now.monotonic_ns;
	st.interval_ns = CONTROL_DELTA(monotonic_ns);
	st.samples_submitted = CONTROL_DELTA(submitted);
	st.reserve_failures = CONTROL_DELTA(reserve_failures);
	st.bpf_run_time_ns = CONTROL_DELTA(bpf_run_time_ns);
	st.bpf_run_count = CONTROL_DELTA(bpf_run_count);
	st.agent_cpu_ns = CONTROL_DELTA(agent_cpu_ns);
#undef CONTROL_DELTA
	st.ringbuf_used_bytes = now.ringbuf_used_bytes;
	st.ringbuf_size_bytes = now.ringbuf_size_bytes;
	st.online_cpus = now.online_cpus;
	control_throttle_to_wire(&cs->applied, &applied);
	st.applied = &applied;
	cs->base = now;
	out.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS;
	out.stats = &st;
	return wire_send(cs->fd, &out);
}

static int control_handle_set_throttle(struct control_server *cs, const Lowprof__Ctl__Envelope *env)
{
	struct control_throttle t;
	char why[256], err[200];
	int rc;

	/* Checked against the loader's own limits, never against what the peer claims. */
	if (wire_validate_set_throttle(env->set_throttle, &cs->cfg.limits, why, sizeof(why)) != 0)
		return control_refuse(cs, "set_throttle", EINVAL, why);
	if (control_throttle_from_wire(env->set_throttle->state, &t) != 0)
		return control_refuse(cs, "set_throttle", EINVAL, "tier or unwind mode unknown");
	/* The user's --max-depth is a ceiling like -F: deeper requests are cut to it. */
	if (t.max_depth > cs->cfg.max_depth)
		t.max_depth = cs->cfg.max_depth;
	if (control_throttle_equal(&t, &cs->applied))
		return control_send_reply(cs, 0, NULL);
	if (cs->cfg.fixed)
		return control_refuse(cs, "set_throttle", EPERM, "--no-throttle: settings are fixed");
	rc = control_apply(cs, &t, "controller", err, sizeof(err));
	if (rc != 0) {
		snprintf(why, sizeof(why), "applying failed: %s", err);
		return control_send_reply(cs, -rc, why);
	}
	return control_send_reply(cs, 0, NULL);
}

static int control_handle_get_state(struct control_server *cs, const Lowprof__Ctl__Envelope *env)
{
	Lowprof__Ctl__Envelope out = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__ThrottleState st;

	(void)env;
	control_throttle_to_wire(&cs->applied, &st);
	out.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE;
	out.state = &st;
	return wire_send(cs->fd, &out);
}

/* The whole of what a controller may ask. */
#define CONTROL_ANY_STATE (CONTROL_PEER_AWAIT_HELLO | CONTROL_PEER_ACTIVE)

/* The whole of what a controller may ask, and in which states. A Hello is
 * taken in any state: a restarted controller reuses the socket and greets
 * again. (--no-throttle refuses SetThrottle in its handler.) */
static const struct control_request {
	Lowprof__Ctl__Envelope__PayloadCase type;
	unsigned states; /* enum control_peer_state bits */
	int (*handle)(struct control_server *cs, const Lowprof__Ctl__Envelope *env);
} control_requests[] = {
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO, CONTROL_ANY_STATE, control_handle_hello},
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST, CONTROL_PEER_ACTIVE, control_handle_stats_request},
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE, CONTROL_PEER_ACTIVE, control_handle_set_throttle},
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_GET_STATE, CONTROL_PEER_ACTIVE, control_handle_get_state},
};

/* Past the bucket: refused with EBUSY; audited at most once a second (with a
 * count of the others), so that a flood cannot fill the disk through us. */
static int control_refuse_rate(struct control_server *cs, const char *name, uint64_t now_ns)
{
	cs->refused++;
	cs->rate_limited++;
	if (cs->rate_last_audit_ns == 0 || now_ns - cs->rate_last_audit_ns >= 1000000000ULL) {
		log_warn("audit: peer pid %d uid %u: %s refused: rate limit (%u/s)", (int)cs->peer_pid,
			 (unsigned)cs->peer_uid, name, cs->cfg.rate_per_s);
		control_audit(cs, "request_refused", name, EBUSY, "rate limit exceeded");
		cs->rate_audit_suppressed = 0;
		cs->rate_last_audit_ns = now_ns;
	} else {
		cs->rate_audit_suppressed++;
	}
	return control_send_reply(cs, EBUSY, "rate limit exceeded");
}

/* One envelope: 0, or a negative errno meaning the peer must be cut off. */
static int control_dispatch(struct control_server *cs, const Lowprof__Ctl__Envelope *env,
			    uint64_t now_ns)
{
	const char *name = wire_payload_name(env->payload_case);
	unsigned state = cs->hello ? CONTROL_PEER_ACTIVE : CONTROL_PEER_AWAIT_HELLO;
	char why[96];
	size_t i;

	if (!token_bucket_take(&cs->rate, now_ns))
		return control_refuse_rate(cs, name, now_ns);
	for (i = 0; i < sizeof(control_requests) / sizeof(control_requests[0]); i++) {
		if (control_requests[i].type != env->payload_case)
			continue;
		if (!(control_requests[i].states & state))
			return control_refuse(cs, name, EPERM, "say hello first");
		return control_requests[i].handle(cs, env);
	}
	snprintf(why, sizeof(why), "%s is not a request the loader answers", name);
	return control_refuse(cs, name, EOPNOTSUPP, why);
}

static void control_enter_failsafe(struct control_server *cs, const char *why)
{
	char err[200];

	cs->hello = false;
	if (cs->cfg.fixed) {
		log_warn("%s; --no-throttle: the settings stay as they are", why);
		return;
	}
	if (cs->failsafe)
		return;
	log_warn("%s: applying the critical tier until a controller says hello", why);
	if (control_apply(cs, &cs->cfg.failsafe, "loader fail-safe", err, sizeof(err)) == 0)
		cs->failsafe = true;
}

static void control_cut_off(struct control_server *cs, const char *why)
{
	/* A peer that closed is not cut off for anything it did. */
	if (cs->fd >= 0 && strstr(why, "closed the control socket") == NULL)
		control_audit(cs, "peer_cut_off", NULL, EPROTO, why);
	if (cs->fd >= 0) {
		close(cs->fd);
		cs->fd = -1;
	}
	control_enter_failsafe(cs, why);
}

void control_server_init(struct control_server *cs, int fd, const struct control_server_config *cfg,
			 const struct control_ops *ops, const struct control_throttle *initial,
			 uint64_t now_ns)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int flags;

	memset(cs, 0, sizeof(*cs));
	cs->fd = fd;
	cs->cfg = *cfg;
	cs->ops = *ops;
	cs->applied = *initial;
	cs->last_heard_ns = now_ns;
	cs->peer_pid = -1;
	cs->peer_uid = (uid_t)-1;
	wire_reader_init(&cs->rd);
	if (fd < 0)
		return;
	cs->served = true;
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	/* For a socketpair this names whoever created it (the supervisor): only a
	 * placeholder until the first message carries its sender's credentials. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		cs->peer_pid = cred.pid;
		cs->peer_uid = cred.uid;
	}
	token_bucket_init(&cs->rate, cfg->rate_per_s,
			  cfg->rate_burst > 0 ? cfg->rate_burst : CONTROL_RATE_BURST, now_ns);
	if (cfg->check_peer) {
		int one = 1;

		/* Every read then carries the sender's pid and uid, checked by the kernel. */
		if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0)
			log_warn("SO_PASSCRED: %s: the controller's credentials cannot be checked",
				 strerror(errno));
	}
}

/* The parent of pid from /proc/PID/stat ("pid (comm) state ppid ..."); -1 if unknown. */
static pid_t control_parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	long ppid;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: the last ')' ends it. */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %*c %ld", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/* Is the sender of what was just read the controller we expect? 0, or -EACCES with why. */
static int control_check_sender(struct control_server *cs, bool have_cred, char *why, size_t len)
{
	pid_t parent;

	if (!cs->cfg.check_peer)
		return 0;
	if (!have_cred) {
		snprintf(why, len, "no sender credentials on the control socket");
		return -EACCES;
	}
	if (cs->peer_uid != cs->cfg.expected_uid) {
		snprintf(why, len, "sender uid %u is not the controller's uid %u", (unsigned)cs->peer_uid,
			 (unsigned)cs->cfg.expected_uid);
		return -EACCES;
	}
	if (cs->cfg.expected_ppid > 0) {
		parent = control_parent_of(cs->peer_pid);
		if (parent != cs->cfg.expected_ppid) {
			snprintf(why, len, "sender pid %d is not a child of the supervisor (pid %d) but of %d",
				 (int)cs->peer_pid, (int)cs->cfg.expected_ppid, (int)parent);
			return -EACCES;
		}
	}
	return 0;
}

/*
 * Read once from the socket into the wire reader, taking the sender's
 * credentials from SCM_CREDENTIALS (the kernel never merges bytes of two
 * senders into one read). Returns > 0 bytes read, 0 at EOF, -EAGAIN, or -errno.
 */
static ssize_t control_read(struct control_server *cs, bool *have_cred)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	uint8_t data[WIRE_MAX_FRAME];
	struct msghdr msg;
	struct iovec iov;
	struct cmsghdr *c;
	struct ucred cred;
	size_t room = sizeof(cs->rd.buf) - cs->rd.len;
	ssize_t n;
	int rc;

	*have_cred = false;
	iov.iov_base = data;
	iov.iov_len = room < sizeof(data) ? room : sizeof(data);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	do {
		n = recvmsg(cs->fd, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(cred))) {
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			cs->peer_pid = cred.pid;
			cs->peer_uid = cred.uid;
			*have_cred = true;
		}
	}
	if (n == 0) {
		wire_reader_set_eof(&cs->rd);
		return 0;
	}
	rc = wire_reader_feed(&cs->rd, data, (size_t)n);
	return rc != 0 ? rc : n;
}

int control_server_handle(struct control_server *cs, uint64_t now_ns)
{
	Lowprof__Ctl__Envelope *env;
	char err[200], why[256];
	int n, rc;

	if (cs->fd < 0)
		return -EBADF;
	for (n = 0; n < CONTROL_MAX_FRAMES_PER_WAKE; n++) {
		env = NULL;
		rc = wire_reader_next(&cs->rd, &env, err, sizeof(err));
		if (rc == WIRE_AGAIN) {
			bool have_cred;
			ssize_t got = control_read(cs, &have_cred);

			if (got == -EAGAIN || got == -EWOULDBLOCK)
				return 0;
			if (got < 0 && cs->rd.error == 0) {
				snprintf(err, sizeof(err), "recv: %s", strerror((int)-got));
				rc = (int)got;
			} else if (got > 0 && control_check_sender(cs, have_cred, why, sizeof(why)) != 0) {
				log_warn("audit: peer pid %d uid %u: %s", (int)cs->peer_pid,
					 (unsigned)cs->peer_uid, why);
				control_cut_off(cs, why);
				return -EACCES;
			} else {
				rc = wire_reader_next(&cs->rd, &env, err, sizeof(err));
			}
			if (rc == WIRE_AGAIN)
				continue;
		}
		if (rc == WIRE_CLOSED) {
			control_cut_off(cs, "the controller closed the control socket");
			return -EPIPE;
		}
		if (rc < 0) {
			snprintf(why, sizeof(why), "controller cut off: %s", err);
			log_warn("audit: peer pid %d uid %u: protocol violation: %s", (int)cs->peer_pid,
				 (unsigned)cs->peer_uid, err);
			control_cut_off(cs, why);
			return rc;
		}
		cs->last_heard_ns = now_ns;
		rc = control_dispatch(cs, env, now_ns);
		wire_free(env);
		if (rc != 0) {
			snprintf(why, sizeof(why), "controller cut off: %s", strerror(-rc));
			control_cut_off(cs, why);
			return rc;
		}
	}
	return 0;
}

/* Rate refusals counted since the last record: their own record once the
 * second is over (a flood that stopped leaves no later refusal to carry them). */
static void control_flush_rate_audit(struct control_server *cs, uint64_t now_ns)
{
	if (cs->rate_audit_suppressed == 0 ||
	    (now_ns != UINT64_MAX && now_ns - cs->rate_last_audit_ns < 1000000000ULL))
		return;
	control_audit(cs, "request_refused", "summary", EBUSY, "rate limit exceeded");
	cs->rate_audit_suppressed = 0;
	if (now_ns != UINT64_MAX)
		cs->rate_last_audit_ns = now_ns;
}

bool control_server_tick(struct control_server *cs, uint64_t now_ns)
{
	char why[128];

	control_flush_rate_audit(cs, now_ns);
	/* Without a control socket there is nothing to fall silent. */
	if (!cs->served || cs->failsafe || cs->fd < 0 || cs->cfg.interval_ns == 0)
		return false;
	if (now_ns - cs->last_heard_ns < CONTROL_SILENCE_INTERVALS * cs->cfg.interval_ns)
		return false;
	if (cs->cfg.fixed) {
		if (cs->hello)
			log_warn("the controller has been silent for %.1f s; --no-throttle: settings stay",
				 (double)(now_ns - cs->last_heard_ns) / 1e9);
		cs->hello = false;
		return false;
	}
	snprintf(why, sizeof(why), "the controller has been silent for %.1f s",
		 (double)(now_ns - cs->last_heard_ns) / 1e9);
	/* Whatever half-frame a dead peer left behind must not be parsed later:
	 * a new controller on this socket starts from a clean reader and a Hello. */
	wire_reader_init(&cs->rd);
	control_enter_failsafe(cs, why);
	return cs->failsafe;
}

void control_server_close(struct control_server *cs)
{
	control_flush_rate_audit(cs, UINT64_MAX);
	if (cs->fd >= 0)
		close(cs->fd);
	cs->fd = -1;
}
