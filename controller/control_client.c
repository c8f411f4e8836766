/* control_client: the controller's side of the control socket (see the header). */
#include "controller/control_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>

#include "common/errbuf.h"
#include "common/log.h"

int control_client_open(struct control_client *cc, int fd, int cancel_fd, char *err, size_t errlen)
{
	struct stat st;
	int flags;

	memset(cc, 0, sizeof(*cc));
	cc->fd = -1;
	cc->cancel_fd = cancel_fd;
	wire_reader_init(&cc->rd);
	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		return errbuf_fail(-ENOTSOCK, err, errlen, "fd %d is not the control socket to the loader",
				   fd);
	/* Every wait for the loader goes through poll (with the signalfd beside it):
	 * a blocking recv would outlive SIGTERM when the loader is not there. */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
		return errbuf_fail(-errno, err, errlen, "control socket: %s", strerror(errno));
	cc->fd = fd;
	return 0;
}

/*
 * Send one request and wait for the answer of type want. Returns 0 with *out
 * set (wire_free it), -ETIMEDOUT, or another negative errno when the loader is
 * gone or broke the protocol (fatal for us: the supervisor restarts us).
 * A Reply that refuses is returned as it is when want is not REPLY.
 */
static int control_client_call(struct control_client *cc, const Lowprof__Ctl__Envelope *req,
			       Lowprof__Ctl__Envelope__PayloadCase want, Lowprof__Ctl__Envelope **out)
{
	struct pollfd pfd[2] = {{.fd = cc->fd, .events = POLLIN}, {.fd = cc->cancel_fd, .events = POLLIN}};
	Lowprof__Ctl__Envelope *env;
	char err[200];
	int rc, stale = 0;

	*out = NULL;
	rc = wire_send(cc->fd, req);
	if (rc != 0)
		return rc;
	for (;;) {
		env = NULL;
		rc = wire_recv(cc->fd, &cc->rd, &env, err, sizeof(err));
		if (rc == WIRE_CLOSED)
			return -EPIPE;
		if (rc < 0) {
			log_error("control socket: %s", err);
			return rc;
		}
		if (rc == WIRE_AGAIN) {
			rc = poll(pfd, cc->cancel_fd >= 0 ? 2 : 1, CONTROL_CLIENT_REPLY_TIMEOUT_MS);
			if (rc == 0)
				return -ETIMEDOUT;
			if (rc < 0 && errno != EINTR)
				return -errno;
			/* SIGTERM while waiting for a loader that may never answer. */
			if (rc > 0 && (pfd[1].revents & POLLIN))
				return -ECANCELED;
			continue;
		}
		if (env->payload_case == want ||
		    env->payload_case == LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY) {
			*out = env;
			return 0;
		}
		/* The loader's push, crossing our request: the caller's next step. */
		if (env->payload_case == LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS) {
			wire_free(cc->pushed);
			cc->pushed = env;
			continue;
		}
		/* An answer that came after we stopped waiting for it. */
		log_debug("skipping a late %s", wire_payload_name(env->payload_case));
		wire_free(env);
		if (++stale > CONTROL_CLIENT_MAX_STALE)
			return -EPROTO;
	}
}

int control_client_hello(struct control_client *cc, struct throttle *state)
{
	Lowprof__Ctl__Envelope req = LOWPROF__CTL__ENVELOPE__INIT, *ans;
	Lowprof__Ctl__Hello hello = LOWPROF__CTL__HELLO__INIT;
	Lowprof__Ctl__GetState get = LOWPROF__CTL__GET_STATE__INIT;
	int rc;

	hello.version = WIRE_PROTOCOL_VERSION;
	hello.component = LOWPROF__CTL__COMPONENT__COMPONENT_CONTROLLER;
	req.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO;
	req.hello = &hello;
	rc = control_client_call(cc, &req, LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY, &ans);
	if (rc != 0)
		return rc;
	if (!ans->reply->ok) {
		log_error("the loader refused hello: %s", ans->reply->error);
		wire_free(ans);
		return -EPROTO;
	}
	wire_free(ans);
	req.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_GET_STATE;
	req.get_state = &get;
	rc = control_client_call(cc, &req, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE, &ans);
	if (rc != 0)
		return rc;
	if (ans->payload_case != LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE) {
		wire_free(ans);
		return -EPROTO;
	}
	/* The loader's own state: an unknown tier or mode is only reported, as the safe side. */
	throttle_from_wire(ans->state, state);
	wire_free(ans);
	return 0;
}

static void control_client_stats_from_wire(const Lowprof__Ctl__Stats *st, struct control_stats *out)
{
	out->interval_ns = st->interval_ns;
	out->samples_submitted = st->samples_submitted;
	out->reserve_failures = st->reserve_failures;
	out->bpf_run_time_ns = st->bpf_run_time_ns;
	out->bpf_run_count = st->bpf_run_count;
	out->agent_cpu_ns = st->agent_cpu_ns;
	out->startup_cpu_ns = st->startup_cpu_ns;
	out->tables_cpu_ns = st->tables_cpu_ns;
	out->ringbuf_used_bytes = st->ringbuf_used_bytes;
	out->ringbuf_size_bytes = st->ringbuf_size_bytes;
	out->online_cpus = st->online_cpus;
	out->offcpu_run_time_ns = st->offcpu_run_time_ns;
	out->offcpu_records = st->offcpu_records;
	out->offcpu_switches = st->offcpu_switches;
	out->offcpu_floor_runs = st->offcpu_floor_runs;
	out->offcpu_floor_run_ns = st->offcpu_floor_run_ns;
	out->host_busy_ticks = st->host_busy_ticks;
	out->host_total_ticks = st->host_total_ticks;
	out->host_context_switches = st->host_context_switches;
	out->host_have_switches = st->host_have_switches;
	/* Never more than the loader's longest interval (throttle_quiet_max_intervals). */
	out->next_push_intervals = st->next_push_intervals < CONTROL_MAX_PUSH_INTERVALS
					   ? st->next_push_intervals
					   : CONTROL_MAX_PUSH_INTERVALS;
}

int control_client_stats(struct control_client *cc, bool every_interval, struct control_stats *out)
{
	Lowprof__Ctl__Envelope req = LOWPROF__CTL__ENVELOPE__INIT, *ans;
	Lowprof__Ctl__StatsRequest sr = LOWPROF__CTL__STATS_REQUEST__INIT;
	int rc;

	sr.every_interval = every_interval;
	req.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST;
	req.stats_request = &sr;
	/* A push still held covers time this answer covers too: it is stale now. */
	wire_free(cc->pushed);
	cc->pushed = NULL;
	rc = control_client_call(cc, &req, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS, &ans);
	if (rc == -ETIMEDOUT)
		return CONTROL_CLIENT_NO_ANSWER;
	if (rc != 0)
		return rc;
	if (ans->payload_case == LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY) {
		/* EPERM: a restarted loader (it has not met us) or one gone to its
		 * fail-safe (it forgot our hello): expected, and mended by greeting
		 * it again. Anything else is worth a warning. */
		rc = ans->reply->errnum == EPERM ? CONTROL_CLIENT_HELLO_AGAIN : CONTROL_CLIENT_NO_ANSWER;
		if (rc == CONTROL_CLIENT_HELLO_AGAIN)
			log_info("the loader does not know this controller (%s): saying hello again",
				 ans->reply->error);
		else
			log_warn("the loader refused a stats request: %s", ans->reply->error);
		wire_free(ans);
		return rc;
	}
	/* Answered: what the call put aside came before it, covered by this one. */
	wire_free(cc->pushed);
	cc->pushed = NULL;
	control_client_stats_from_wire(ans->stats, out);
	wire_free(ans);
	return 0;
}

int control_client_pushed(struct control_client *cc, struct control_stats *out)
{
	Lowprof__Ctl__Envelope *env;
	char err[200];
	int rc;

	for (;;) {
		env = cc->pushed;
		cc->pushed = NULL;
		if (env == NULL) {
			rc = wire_recv(cc->fd, &cc->rd, &env, err, sizeof(err));
			if (rc == WIRE_AGAIN)
				return 0;
			if (rc == WIRE_CLOSED)
				return -EPIPE;
			if (rc < 0) {
				log_error("control socket: %s", err);
				return rc;
			}
		}
		if (env->payload_case == LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS) {
			control_client_stats_from_wire(env->stats, out);
			wire_free(env);
			return 1;
		}
		log_debug("skipping a late %s", wire_payload_name(env->payload_case));
		wire_free(env);
	}
}

void control_client_close(struct control_client *cc)
{
	wire_free(cc->pushed);
	cc->pushed = NULL;
}

int control_client_set_throttle(struct control_client *cc, const struct throttle *t)
{
	Lowprof__Ctl__Envelope req = LOWPROF__CTL__ENVELOPE__INIT, *ans;
	Lowprof__Ctl__SetThrottle set = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__ThrottleState st;
	int rc;

	throttle_to_wire(t, &st);
	set.state = &st;
	req.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE;
	req.set_throttle = &set;
	rc = control_client_call(cc, &req, LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY, &ans);
	if (rc != 0)
		return rc;
	rc = 0;
	if (!ans->reply->ok) {
		log_error("the loader refused the throttle: %s", ans->reply->error);
		rc = ans->reply->errnum == EPERM ? CONTROL_CLIENT_HELLO_AGAIN : CONTROL_CLIENT_NO_ANSWER;
	}
	wire_free(ans);
	return rc;
}
