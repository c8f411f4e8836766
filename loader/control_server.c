#include "loader/control_server.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>

#include "common/errbuf.h"
#include "common/log.h"

static const struct monitor_protocol control_protocol;
static void control_cut_off(struct control_server *cs, const char *why, bool audit);

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
	return wire_send(cs->mon.fd, &env);
}

static int control_answer(void *server, const void *msg, int errnum, const char *why)
{
	(void)msg;
	return control_send_reply(server, errnum, why);
}

static int control_refuse(struct control_server *cs, const Lowprof__Ctl__Envelope *env, int errnum,
			  const char *why, uint64_t now_ns)
{
	return monitor_refuse(&cs->mon, &control_protocol, cs, env, errnum, why, now_ns);
}

/* The loader itself changes the settings: used by the fail-safe. */
static int control_apply(struct control_server *cs, const struct throttle *t,
			 const char *who, char *err, size_t errlen)
{
	char before[96], after[96];
	int rc;

	throttle_describe(&cs->applied, before, sizeof(before));
	throttle_describe(t, after, sizeof(after));
	/* The loader's apply audits each BPF action under this actor's name. */
	cs->actor = strcmp(who, "controller") == 0 ? "controller" : "loader";
	rc = cs->ops.apply(cs->ops.arg, t, err, errlen);
	if (rc == 0)
		cs->applied = *t;
	/* The audit log has every change; stderr only with -v (a failure always). */
	log_msg(rc == 0 ? LOG_LEVEL_DEBUG : LOG_LEVEL_WARN, NULL, "audit: %s: set_throttle %s -> %s: %s%s",
		who, before, after, rc == 0 ? "applied" : "failed: ", rc == 0 ? "" : err);
	return rc;
}

static int control_handle_hello(void *server, const void *msg, uint64_t now_ns)
{
	struct control_server *cs = server;
	const Lowprof__Ctl__Envelope *env = msg;
	const Lowprof__Ctl__Hello *h = env->hello;
	char why[96];
	int rc;

	if (h->version != WIRE_PROTOCOL_VERSION || h->component != LOWPROF__CTL__COMPONENT__COMPONENT_CONTROLLER) {
		snprintf(why, sizeof(why), "hello version %u component %d, expected version %u controller",
			 h->version, (int)h->component, WIRE_PROTOCOL_VERSION);
		control_refuse(cs, env, EPROTO, why, now_ns);
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
	cs->subscribed = false; /* until this controller asks for it */
	/* The next Stats covers the time since this hello. */
	cs->have_base = cs->ops.counters(cs->ops.arg, &cs->base) == 0;
	return 0;
}

void control_counters_delta(const struct control_counters *now, const struct control_counters *base,
			    struct control_counters *out)
{
#define CONTROL_DELTA(f) (now->f >= base->f ? now->f - base->f : 0)
	out->monotonic_ns = CONTROL_DELTA(monotonic_ns);
	out->submitted = CONTROL_DELTA(submitted);
	out->reserve_failures = CONTROL_DELTA(reserve_failures);
	out->bpf_run_time_ns = CONTROL_DELTA(bpf_run_time_ns);
	out->bpf_run_count = CONTROL_DELTA(bpf_run_count);
	out->agent_cpu_ns = CONTROL_DELTA(agent_cpu_ns);
	out->startup_cpu_ns = CONTROL_DELTA(startup_cpu_ns);
	out->tables_cpu_ns = CONTROL_DELTA(tables_cpu_ns);
	out->offcpu_run_time_ns = CONTROL_DELTA(offcpu_run_time_ns);
	out->offcpu_records = CONTROL_DELTA(offcpu_records);
	out->offcpu_switches = CONTROL_DELTA(offcpu_switches);
	out->offcpu_floor_runs = CONTROL_DELTA(offcpu_floor_runs);
	out->offcpu_floor_run_ns = CONTROL_DELTA(offcpu_floor_run_ns);
	out->host_busy_ticks = CONTROL_DELTA(host_busy_ticks);
	out->host_total_ticks = CONTROL_DELTA(host_total_ticks);
	out->host_ctxt = CONTROL_DELTA(host_ctxt);
#undef CONTROL_DELTA
	out->host_have_ctxt = now->host_have_ctxt && base->host_have_ctxt;
	if (now->host_total_ticks == 0 || base->host_total_ticks == 0)
		out->host_busy_ticks = out->host_total_ticks = out->host_ctxt = 0;
	out->ringbuf_used_bytes = now->ringbuf_used_bytes;
	out->ringbuf_size_bytes = now->ringbuf_size_bytes;
	out->online_cpus = now->online_cpus;
}

/* A Stats of the counters since the previous one: the answer to a request, or the push. */
/* next_push_intervals: see the Stats message; 0 in an answer. */
static int control_send_stats(struct control_server *cs, unsigned next_push_intervals)
{
	Lowprof__Ctl__Envelope out = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__Stats st = LOWPROF__CTL__STATS__INIT;
	Lowprof__Ctl__ThrottleState applied;
	struct control_counters now, d;
	int rc;

	rc = cs->ops.counters(cs->ops.arg, &now);
	if (rc != 0)
		return control_send_reply(cs, -rc, "reading the BPF counters failed");
	if (!cs->have_base) {
		/* No baseline: an empty interval rather than counters since boot. */
		cs->base = now;
		cs->have_base = true;
	}
	control_counters_delta(&now, &cs->base, &d);
	st.monotonic_ns = now.monotonic_ns;
	st.interval_ns = d.monotonic_ns;
	st.samples_submitted = d.submitted;
	st.reserve_failures = d.reserve_failures;
	st.bpf_run_time_ns = d.bpf_run_time_ns;
	st.bpf_run_count = d.bpf_run_count;
	st.agent_cpu_ns = d.agent_cpu_ns;
	st.startup_cpu_ns = d.startup_cpu_ns;
	st.tables_cpu_ns = d.tables_cpu_ns;
	st.ringbuf_used_bytes = d.ringbuf_used_bytes;
	st.ringbuf_size_bytes = d.ringbuf_size_bytes;
	st.online_cpus = d.online_cpus;
	st.offcpu_run_time_ns = d.offcpu_run_time_ns;
	st.offcpu_records = d.offcpu_records;
	st.offcpu_switches = d.offcpu_switches;
	st.offcpu_floor_runs = d.offcpu_floor_runs;
	st.offcpu_floor_run_ns = d.offcpu_floor_run_ns;
	st.host_busy_ticks = d.host_busy_ticks;
	st.host_total_ticks = d.host_total_ticks;
	st.host_context_switches = d.host_ctxt;
	st.host_have_switches = d.host_have_ctxt;
	st.next_push_intervals = next_push_intervals;
	throttle_to_wire(&cs->applied, &applied);
	st.applied = &applied;
	cs->base = now;
	cs->stats_served++;
	out.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS;
	out.stats = &st;
	return wire_send(cs->mon.fd, &out);
}

static int control_handle_stats_request(void *server, const void *msg, uint64_t now_ns)
{
	struct control_server *cs = server;
	const Lowprof__Ctl__Envelope *env = msg;

	(void)now_ns;
	cs->subscribed = env->stats_request->every_interval;
	return control_send_stats(cs, 0);
}

/*
 * Bytes we sent that the peer has not read yet (SIOCOUTQ: a unix socket's
 * messages count against their sender until the receiver takes them); -1 if
 * unknown.
 */
static int control_unread(int fd)
{
	int n = 0;

	return ioctl(fd, SIOCOUTQ, &n) == 0 ? n : -1;
}

/* A subscribed controller that read everything we sent (our last push
 * included) is alive: that is its sign of life between requests. */
static bool control_push_read(struct control_server *cs, uint64_t now_ns)
{
	if (!cs->subscribed || !cs->hello || cs->mon.fd < 0 || control_unread(cs->mon.fd) != 0)
		return false;
	cs->last_heard_ns = now_ns;
	return true;
}

bool control_server_listening(struct control_server *cs, uint64_t now_ns)
{
	return control_push_read(cs, now_ns);
}

bool control_server_push(struct control_server *cs, uint64_t now_ns, unsigned next_push_intervals)
{
	char why[160];
	int rc;

	/* The last push still unread: the controller is not listening (stopped,
	 * hung, gone). One unread Stats at most, and its silence runs on. */
	if (!control_push_read(cs, now_ns))
		return false;
	rc = control_send_stats(cs, next_push_intervals);
	if (rc != 0) {
		snprintf(why, sizeof(why), "controller cut off: sending its stats: %s", strerror(-rc));
		control_cut_off(cs, why, false);
		return false;
	}
	return true;
}

/* Checked against the loader's own limits, never against what the peer claims. */
static int control_validate_set_throttle(void *server, const void *msg, char *why, size_t whylen)
{
	const struct control_server *cs = server;
	const Lowprof__Ctl__Envelope *env = msg;
	struct throttle t;

	if (wire_validate_set_throttle(env->set_throttle, &cs->cfg.limits, why, whylen) != 0)
		return -EINVAL;
	if (throttle_from_wire(env->set_throttle->state, &t) != 0)
		return errbuf_fail(-EINVAL, why, whylen, "tier or unwind mode unknown");
	return 0;
}

static int control_handle_set_throttle(void *server, const void *msg, uint64_t now_ns)
{
	struct control_server *cs = server;
	const Lowprof__Ctl__Envelope *env = msg;
	struct throttle t;
	char why[256], err[200];
	int rc;

	throttle_from_wire(env->set_throttle->state, &t);
	/* The user's --max-depth is a ceiling like -F: deeper requests are cut to it. */
	if (t.max_depth > cs->cfg.max_depth)
		t.max_depth = cs->cfg.max_depth;
	/* So is --off-cpu-probability; 0 asks for no change. */
	if (cs->cfg.offcpu_max_ppm == 0) {
		t.offcpu_prob_ppm = 0;
		t.offcpu_parked = false;
	} else if (t.offcpu_prob_ppm == 0)
		t.offcpu_prob_ppm = cs->applied.offcpu_prob_ppm;
	else if (t.offcpu_prob_ppm > cs->cfg.offcpu_max_ppm)
		t.offcpu_prob_ppm = cs->cfg.offcpu_max_ppm;
	if (throttle_equal(&t, &cs->applied))
		return control_send_reply(cs, 0, NULL);
	if (cs->cfg.fixed)
		return control_refuse(cs, env, EPERM, "--no-throttle: settings are fixed", now_ns);
	rc = control_apply(cs, &t, "controller", err, sizeof(err));
	if (rc != 0) {
		snprintf(why, sizeof(why), "applying failed: %s", err);
		return control_send_reply(cs, -rc, why);
	}
	return control_send_reply(cs, 0, NULL);
}

static int control_handle_get_state(void *server, const void *msg, uint64_t now_ns)
{
	struct control_server *cs = server;
	Lowprof__Ctl__Envelope out = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__ThrottleState st;

	(void)msg;
	(void)now_ns;
	throttle_to_wire(&cs->applied, &st);
	out.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE;
	out.state = &st;
	return wire_send(cs->mon.fd, &out);
}

static int control_kind_of(const void *msg)
{
	return (int)((const Lowprof__Ctl__Envelope *)msg)->payload_case;
}

static const char *control_kind_name(int kind)
{
	return wire_payload_name((Lowprof__Ctl__Envelope__PayloadCase)kind);
}

/* The whole of what a controller may ask, and in which states. A Hello is
 * taken in any state: a restarted controller reuses the socket and greets
 * again. (--no-throttle refuses SetThrottle in its handler.) */
static const struct monitor_request control_requests[] = {
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO, 0, NULL, control_handle_hello, NULL},
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST, CONTROL_PEER_ACTIVE, NULL,
	 control_handle_stats_request, NULL},
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE, CONTROL_PEER_ACTIVE, control_validate_set_throttle,
	 control_handle_set_throttle, NULL},
	{LOWPROF__CTL__ENVELOPE__PAYLOAD_GET_STATE, CONTROL_PEER_ACTIVE, NULL, control_handle_get_state, NULL},
};

static const struct monitor_protocol control_protocol = {
	.requests = control_requests,
	.nrequests = sizeof(control_requests) / sizeof(control_requests[0]),
	.kind_of = control_kind_of,
	.kind_name = control_kind_name,
	.answer = control_answer,
	.state_refusal = "say hello first",
};

/* One envelope: 0, or a negative errno meaning the peer must be cut off. */
static int control_dispatch(struct control_server *cs, const Lowprof__Ctl__Envelope *env,
			    uint64_t now_ns)
{
	unsigned state = cs->hello ? CONTROL_PEER_ACTIVE : CONTROL_PEER_AWAIT_HELLO;
	int rc = monitor_admit(&cs->mon, &control_protocol, cs, env, now_ns);

	if (rc != 1)
		return rc;
	return monitor_dispatch(&cs->mon, &control_protocol, cs, env, state, now_ns);
}

static void control_enter_failsafe(struct control_server *cs, const char *why)
{
	struct throttle fs = cs->cfg.failsafe;
	char err[200];

	cs->hello = false;
	cs->subscribed = false;
	if (cs->cfg.fixed) {
		log_warn("%s; --no-throttle: the settings stay as they are", why);
		return;
	}
	if (cs->failsafe)
		return;
	log_warn("%s: applying the critical tier until a controller says hello", why);
	/* The critical tier detaches the switch program; its probability stays. */
	fs.offcpu_prob_ppm = cs->applied.offcpu_prob_ppm;
	if (control_apply(cs, &fs, "loader fail-safe", err, sizeof(err)) == 0)
		cs->failsafe = true;
}

/* audit: false for a peer that closed: it is not cut off for anything it did. */
static void control_cut_off(struct control_server *cs, const char *why, bool audit)
{
	if (cs->mon.fd >= 0) {
		if (audit)
			monitor_audit_cut_off(&cs->mon, why);
		close(cs->mon.fd);
		cs->mon.fd = -1;
	}
	control_enter_failsafe(cs, why);
}

void control_server_init(struct control_server *cs, int fd, const struct control_server_config *cfg,
			 const struct control_ops *ops, const struct throttle *initial,
			 uint64_t now_ns)
{
	struct monitor_config mc = {
		.component = "controller",
		.socket_name = "control",
		.check_peer = cfg->check_peer,
		.expected_uid = cfg->expected_uid,
		.expected_ppid = cfg->expected_ppid,
		.expected_exe = cfg->expected_exe,
		.rate_per_s = cfg->rate_per_s,
		.rate_burst = cfg->rate_burst > 0 ? cfg->rate_burst : CONTROL_RATE_BURST,
	};

	memset(cs, 0, sizeof(*cs));
	cs->cfg = *cfg;
	cs->ops = *ops;
	cs->applied = *initial;
	cs->last_heard_ns = now_ns;
	cs->served = fd >= 0;
	wire_reader_init(&cs->rd);
	monitor_init(&cs->mon, fd, &mc, now_ns);
}

/*
 * One message: exactly one frame (SOCK_SEQPACKET keeps the boundaries the
 * controller's wire_send made), its length prefix checked by the wire reader.
 * 0, or a negative errno once the peer was cut off.
 */
static int control_handle_message(struct control_server *cs, const uint8_t *msg, size_t len,
				  uint64_t now_ns)
{
	Lowprof__Ctl__Envelope *env = NULL;
	char err[200], why[256];
	int rc;

	rc = wire_reader_feed(&cs->rd, msg, len);
	if (rc == 0)
		rc = wire_reader_next(&cs->rd, &env, err, sizeof(err));
	else
		errbuf_set(err, sizeof(err), "%s", cs->rd.err);
	if (rc == WIRE_AGAIN || (rc == WIRE_MESSAGE && cs->rd.len > 0)) {
		errbuf_set(err, sizeof(err), "a message of %zu bytes is not exactly one frame", len);
		wire_free(env);
		rc = -EPROTO;
	}
	if (rc < 0) {
		snprintf(why, sizeof(why), "controller cut off: %s", err);
		control_cut_off(cs, why, true);
		return rc;
	}
	cs->last_heard_ns = now_ns;
	rc = control_dispatch(cs, env, now_ns);
	wire_free(env);
	if (rc != 0) {
		snprintf(why, sizeof(why), "controller cut off: %s", strerror(-rc));
		control_cut_off(cs, why, true);
	}
	return rc;
}

int control_server_handle(struct control_server *cs, uint64_t now_ns)
{
	uint8_t msg[WIRE_HEADER_SIZE + WIRE_MAX_FRAME];
	char why[256], cut[300];
	size_t len;
	int n, rc;

	if (cs->mon.fd < 0)
		return -EBADF;
	for (n = 0; n < CONTROL_MAX_MESSAGES_PER_WAKE; n++) {
		switch (monitor_recv(&cs->mon, msg, sizeof(msg), &len, why, sizeof(why))) {
		case MONITOR_RECV_NONE:
			return 0;
		case MONITOR_RECV_CLOSED:
			control_cut_off(cs, "the controller closed the control socket", false);
			return -EPIPE;
		case MONITOR_RECV_ERROR:
		case MONITOR_RECV_REFUSED:
			snprintf(cut, sizeof(cut), "controller cut off: %s", why);
			control_cut_off(cs, cut, true);
			return -EPROTO;
		case MONITOR_RECV_MESSAGE:
			break;
		}
		rc = monitor_check_sender(&cs->mon, why, sizeof(why));
		if (rc == -ESRCH) {
			/* A killed controller's last request, read late (a slow start):
			 * its successor will speak on the same socket. */
			monitor_audit_refusal(&cs->mon, &control_protocol, NULL, "stale", ESRCH, why,
					      now_ns);
			continue;
		}
		if (rc != 0) {
			control_cut_off(cs, why, true);
			return -EACCES;
		}
		rc = control_handle_message(cs, msg, len, now_ns);
		if (rc != 0)
			return rc;
	}
	return 0;
}

bool control_server_tick(struct control_server *cs, uint64_t now_ns)
{
	char why[128];

	monitor_tick(&cs->mon, now_ns);
	/* Without a control socket there is nothing to fall silent. */
	if (!cs->served || cs->failsafe || cs->mon.fd < 0 || cs->cfg.interval_ns == 0)
		return false;
	/* Our last push was read: it was listening, however long ago that push
	 * was (a quiet interval lasts several intervals, one push at each end). */
	(void)control_push_read(cs, now_ns);
	/* The tick that ends the third interval of silence: ticks keep their
	 * phase but may run a quarter interval early (the loader's slack) or
	 * late, and the silence counts from the first tick after the last word. */
	if (now_ns + cs->cfg.interval_ns / 4 - cs->last_heard_ns <
	    CONTROL_SILENCE_INTERVALS * cs->cfg.interval_ns)
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
	monitor_close(&cs->mon);
}
