#define _GNU_SOURCE /* struct ucred, SO_PEERCRED */
#include "loader/control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"

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

static int control_refuse(struct control_server *cs, const char *what, int errnum, const char *why)
{
	cs->refused++;
	/* The audit line: who asked, what, and why it was refused. */
	log_warn("audit: peer pid %d uid %u: %s refused: %s", (int)cs->peer_pid,
		 (unsigned)cs->peer_uid, what, why);
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
static const struct control_request {
	Lowprof__Ctl__Envelope__PayloadCase type;
	bool before_hello; /* allowed before a valid Hello */
	int (*handle)(struct control_server *cs, const Lowprof__Ctl__Envelope *env);
} control_requests[] = {
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO, true, control_handle_hello},
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST, false, control_handle_stats_request},
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE, false, control_handle_set_throttle},
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_GET_STATE, false, control_handle_get_state},
};

/* One envelope: 0, or a negative errno meaning the peer must be cut off. */
static int control_dispatch(struct control_server *cs, const Lowprof__Ctl__Envelope *env)
{
	const char *name = wire_payload_name(env->payload_case);
	char why[96];
	size_t i;

	for (i = 0; i < sizeof(control_requests) / sizeof(control_requests[0]); i++) {
		if (control_requests[i].type != env->payload_case)
			continue;
		if (!cs->hello && !control_requests[i].before_hello)
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
	/* For a socketpair this names whoever created it (the supervisor). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		cs->peer_pid = cred.pid;
		cs->peer_uid = cred.uid;
	}
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
		rc = wire_recv(cs->fd, &cs->rd, &env, err, sizeof(err));
		if (rc == WIRE_AGAIN)
			return 0;
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
		rc = control_dispatch(cs, env);
		wire_free(env);
		if (rc != 0) {
			snprintf(why, sizeof(why), "controller cut off: %s", strerror(-rc));
			control_cut_off(cs, why);
			return rc;
		}
	}
	return 0;
}

bool control_server_tick(struct control_server *cs, uint64_t now_ns)
{
	char why[128];

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
	if (cs->fd >= 0)
		close(cs->fd);
	cs->fd = -1;
}
