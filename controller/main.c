/*
 * lowprof-controller: the throttle's brain, with no privileges of its own.
 * Every control interval it measures the host (/proc/stat, /proc/pressure/cpu)
 * and asks the loader for the interval's counters (samples, drops, BPF run
 * time, the agent's CPU time: the loader reads other processes' /proc entries,
 * which a sandboxed controller may not), runs the pure policy
 * (controller/policy.c), and, when the decision changes, asks the loader for
 * the new settings with SetThrottle. It never calls bpf(); it can only ask.
 *
 * Inherited fds (ipc/lowprof_fds.h): NOTIFY, CONTROL (a stream socket to the
 * loader). Options: --control-interval=SECONDS --cpu-budget=PCT
 * --frequency=HZ [--no-throttle] [-v].
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/number_parse.h"
#include "measure/host_load.h"
#include "controller/policy.h"
#include "seccomp/sandbox.h"
#include "ipc/lowprof_fds.h"
#include "ipc/wire.h"

/* The supervisor's liveness clock wants a line at least this often. */
#define CONTROLLER_PING_MS 1000
/* Longest wait for the loader's answer: it answers from its main loop at once. */
#define CONTROLLER_REPLY_TIMEOUT_MS 2000
/* Unexpected (late) answers skipped while waiting for the one asked for. */
#define CONTROLLER_MAX_STALE 4

struct controller {
	double interval_s;
	struct policy_settings set;
	struct policy_state state;
	int fd;
	int sfd; /* signalfd: a stop request also ends any wait for the loader */
	struct wire_reader rd;
	struct host_stat prev;
	bool have_prev;
	struct throttle sent; /* what the loader was last asked for (or reported) */
	bool have_sent;
};

static int controller_parse_options(int argc, char **argv, struct controller *c, char *err,
				    size_t errlen)
{
	static const struct option longopts[] = {
		{"control-interval", required_argument, NULL, 'i'},
		{"cpu-budget", required_argument, NULL, 'b'},
		{"frequency", required_argument, NULL, 'F'},
		{"no-throttle", no_argument, NULL, 'n'},
		{"max-depth", required_argument, NULL, 'D'},
		{"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	unsigned freq = 19, depth = 64;
	double budget = 1.5;
	bool no_throttle = false;
	int ch;

	c->interval_s = 1.0;
	optind = 1;
	opterr = 0;
	for (;;) {
		ch = getopt_long(argc, argv, "v", longopts, NULL);
		if (ch == -1)
			break;
		switch (ch) {
		case 'i':
			if (number_parse_seconds(optarg, 3600.0, &c->interval_s) != 0 || c->interval_s < 0.1)
				goto bad_value;
			break;
		case 'b':
			if (number_parse_seconds(optarg, 100.0, &budget) != 0 || budget < 0.01)
				goto bad_value;
			break;
		case 'F':
			if (number_parse_uint(optarg, 1, 1000000, &freq) != 0)
				goto bad_value;
			break;
		case 'n':
			no_throttle = true;
			break;
		case 'D':
			if (number_parse_uint(optarg, 1, LOWPROF_MAX_USER_DEPTH, &depth) != 0)
				goto bad_value;
			break;
		case 'v':
			log_init("lowprof-controller", LOG_LEVEL_DEBUG);
			break;
		default:
			snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
			return LOWPROF_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return LOWPROF_EXIT_USAGE;
	}
	policy_settings_default(&c->set, freq);
	/* The user's --max-depth is the healthy tier's depth, and so every tier's ceiling. */
	c->set.tiers[THROTTLE_TIER_HEALTHY].max_depth = depth;
	c->set.cpu_budget_pct = budget;
	c->set.no_throttle = no_throttle;
	if (policy_settings_check(&c->set, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	return 0;
bad_value:
	snprintf(err, errlen, "invalid value '%s' for %s", optarg, argv[optind - 1]);
	return LOWPROF_EXIT_USAGE;
}

/*
 * Send one request and wait for the answer of type want. Returns 0 with *out
 * set (wire_free it), -ETIMEDOUT, or another negative errno when the loader is
 * gone or broke the protocol (fatal for us: the supervisor restarts us).
 * A Reply that refuses is returned as it is when want is not REPLY.
 */
static int controller_call(struct controller *c, const Lowprof__Ctl__Envelope *req,
			   Lowprof__Ctl__Envelope__PayloadCase want, Lowprof__Ctl__Envelope **out)
{
	struct pollfd pfd[2] = {{.fd = c->fd, .events = POLLIN}, {.fd = c->sfd, .events = POLLIN}};
	Lowprof__Ctl__Envelope *env;
	char err[200];
	int rc, stale = 0;

	*out = NULL;
	rc = wire_send(c->fd, req);
	if (rc != 0)
		return rc;
	for (;;) {
		env = NULL;
		rc = wire_recv(c->fd, &c->rd, &env, err, sizeof(err));
		if (rc == WIRE_CLOSED)
			return -EPIPE;
		if (rc < 0) {
			log_error("control socket: %s", err);
			return rc;
		}
		if (rc == WIRE_AGAIN) {
			rc = poll(pfd, c->sfd >= 0 ? 2 : 1, CONTROLLER_REPLY_TIMEOUT_MS);
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
		/* An answer that came after we stopped waiting for it. */
		log_debug("skipping a late %s", wire_payload_name(env->payload_case));
		wire_free(env);
		if (++stale > CONTROLLER_MAX_STALE)
			return -EPROTO;
	}
}

static void policy_from_wire(const Lowprof__Ctl__ThrottleState *st, struct throttle *t)
{
	int mode = wire_unwind_to_lowprof(st->unwind_mode);

	t->tier = st->tier >= LOWPROF__CTL__TIER__TIER_HEALTHY && st->tier <= LOWPROF__CTL__TIER__TIER_CRITICAL
			  ? (enum throttle_tier)(st->tier - LOWPROF__CTL__TIER__TIER_HEALTHY)
			  : THROTTLE_TIER_CRITICAL;
	t->frequency_hz = st->frequency_hz;
	t->unwind_mode = mode < 0 ? LOWPROF_UNWIND_FP : (enum lowprof_unwind_mode)mode;
	t->max_depth = st->max_depth;
	t->sample_divisor = st->sample_divisor;
	t->paused = st->paused;
}

static bool policy_throttle_same(const struct throttle *a, const struct throttle *b)
{
	return a->tier == b->tier && a->frequency_hz == b->frequency_hz && a->unwind_mode == b->unwind_mode &&
	       a->max_depth == b->max_depth && a->sample_divisor == b->sample_divisor &&
	       a->paused == b->paused;
}

/* Hello, then GetState: a restarted controller starts from what is in force. */
static int controller_hello(struct controller *c)
{
	Lowprof__Ctl__Envelope req = LOWPROF__CTL__ENVELOPE__INIT, *ans;
	Lowprof__Ctl__Hello hello = LOWPROF__CTL__HELLO__INIT;
	Lowprof__Ctl__GetState get = LOWPROF__CTL__GET_STATE__INIT;
	int rc;

	hello.version = WIRE_PROTOCOL_VERSION;
	hello.component = LOWPROF__CTL__COMPONENT__COMPONENT_CONTROLLER;
	req.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO;
	req.hello = &hello;
	rc = controller_call(c, &req, LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY, &ans);
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
	rc = controller_call(c, &req, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE, &ans);
	if (rc != 0)
		return rc;
	if (ans->payload_case != LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE) {
		wire_free(ans);
		return -EPROTO;
	}
	policy_from_wire(ans->state, &c->sent);
	c->have_sent = true;
	wire_free(ans);
	log_info("loader state: %s %u Hz %s depth %u divisor %u%s", throttle_tier_name(c->sent.tier),
		 c->sent.frequency_hz, throttle_unwind_name(c->sent.unwind_mode), c->sent.max_depth,
		 c->sent.sample_divisor, c->sent.paused ? " paused" : "");
	return 0;
}

/* This interval's host signals; host_valid stays false when /proc/stat fails. */
static void controller_read_host(struct controller *c, struct policy_signals *sig)
{
	struct host_stat cur;
	struct host_load load;
	char err[160];

	if (host_load_read_stat("/proc/stat", &cur, err, sizeof(err)) != 0) {
		log_warn("/proc/stat: %s", err);
		return;
	}
	if (c->have_prev && host_load_compute(&c->prev, &cur, &load, err, sizeof(err)) == 0) {
		sig->host_valid = true;
		sig->host_cpu_pct = load.host_cpu_pct;
		sig->busiest_cpu_pct = load.busiest_cpu_pct;
	}
	if (c->have_prev)
		host_load_stat_free(&c->prev);
	c->prev = cur;
	c->have_prev = true;
	/* Optional: kernels without PSI simply have no pressure signal. */
	sig->pressure_valid = host_load_read_pressure("/proc/pressure/cpu", &sig->cpu_pressure, err,
						      sizeof(err)) == 0;
}

/* Ask for the interval's counters. Returns 0, 1 if the loader wants a new Hello, or -errno. */
static int controller_read_stats(struct controller *c, struct policy_signals *sig)
{
	Lowprof__Ctl__Envelope req = LOWPROF__CTL__ENVELOPE__INIT, *ans;
	Lowprof__Ctl__StatsRequest sr = LOWPROF__CTL__STATS_REQUEST__INIT;
	const Lowprof__Ctl__Stats *st;
	double lost, total, capacity;
	int rc;

	req.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST;
	req.stats_request = &sr;
	rc = controller_call(c, &req, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS, &ans);
	if (rc == -ETIMEDOUT)
		return 0; /* stats_valid stays false: the policy holds what depends on them */
	if (rc != 0)
		return rc;
	if (ans->payload_case == LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY) {
		/* EPERM: the loader went to its fail-safe and forgot our hello. */
		rc = ans->reply->errnum == EPERM ? 1 : 0;
		log_warn("the loader refused a stats request: %s", ans->reply->error);
		wire_free(ans);
		return rc;
	}
	st = ans->stats;
	lost = (double)st->reserve_failures;
	total = lost + (double)st->samples_submitted;
	capacity = (double)(st->online_cpus > 0 ? st->online_cpus : 1) * (double)st->interval_ns;
	if (st->interval_ns > 0) {
		sig->stats_valid = true;
		sig->drop_pct = total > 0 ? lost / total * 100.0 : 0.0;
		sig->overhead_pct = ((double)st->bpf_run_time_ns + (double)st->agent_cpu_ns) / capacity * 100.0;
	}
	log_debug("stats: %llu submitted, %llu lost, ring %llu/%llu bytes, BPF %llu ns in %llu runs, "
		  "agent %llu ns, over %.3f s",
		  (unsigned long long)st->samples_submitted, (unsigned long long)st->reserve_failures,
		  (unsigned long long)st->ringbuf_used_bytes, (unsigned long long)st->ringbuf_size_bytes,
		  (unsigned long long)st->bpf_run_time_ns, (unsigned long long)st->bpf_run_count,
		  (unsigned long long)st->agent_cpu_ns, (double)st->interval_ns / 1e9);
	wire_free(ans);
	return 0;
}

static int controller_set_throttle(struct controller *c, const struct throttle *t)
{
	Lowprof__Ctl__Envelope req = LOWPROF__CTL__ENVELOPE__INIT, *ans;
	Lowprof__Ctl__SetThrottle set = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__ThrottleState st = LOWPROF__CTL__THROTTLE_STATE__INIT;
	int rc;

	st.tier = (Lowprof__Ctl__Tier)(LOWPROF__CTL__TIER__TIER_HEALTHY + (int)t->tier);
	st.frequency_hz = t->frequency_hz;
	st.unwind_mode = wire_unwind_from_lowprof(t->unwind_mode);
	st.max_depth = t->max_depth;
	st.sample_divisor = t->sample_divisor;
	st.paused = t->paused;
	set.state = &st;
	req.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE;
	req.set_throttle = &set;
	rc = controller_call(c, &req, LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY, &ans);
	if (rc != 0)
		return rc;
	if (!ans->reply->ok) {
		log_error("the loader refused the throttle: %s", ans->reply->error);
		rc = ans->reply->errnum == EPERM ? 1 : 0;
		wire_free(ans);
		return rc;
	}
	wire_free(ans);
	c->sent = *t;
	c->have_sent = true;
	return 0;
}

/* One control interval. Returns 0, or -errno when the loader is gone. */
static int controller_step(struct controller *c)
{
	struct policy_signals sig;
	struct policy_decision d;
	const struct throttle *t = &d.throttle;
	int rc;

	memset(&sig, 0, sizeof(sig));
	controller_read_host(c, &sig);
	rc = controller_read_stats(c, &sig);
	if (rc == 1) {
		rc = controller_hello(c);
		if (rc != 0)
			return rc;
	} else if (rc < 0) {
		return rc;
	}
	policy_step(&c->set, &c->state, &sig, &d);
	/* --no-throttle: the loader's settings are fixed (it refuses any change);
	 * the controller only measures, for the timeline and the log. */
	if (c->set.no_throttle || (c->have_sent && policy_throttle_same(t, &c->sent))) {
		log_debug("host %.1f%% (busiest %.1f%%), drops %.2f%%, overhead %.3f%%: %s",
			  sig.host_cpu_pct, sig.busiest_cpu_pct, sig.drop_pct, sig.overhead_pct, d.reason);
		return 0;
	}
	log_info("host %.1f%%, drops %.2f%%, overhead %.3f%%: %s -> %s %u Hz %s depth %u divisor %u%s",
		 sig.host_cpu_pct, sig.drop_pct, sig.overhead_pct, d.reason, throttle_tier_name(t->tier),
		 t->frequency_hz, throttle_unwind_name(t->unwind_mode), t->max_depth, t->sample_divisor,
		 t->paused ? " paused" : "");
	rc = controller_set_throttle(c, t);
	if (rc == 1)
		rc = controller_hello(c);
	return rc < 0 ? rc : 0;
}

static int controller_timerfd(double seconds)
{
	struct itimerspec its;
	int fd;

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return -1;
	memset(&its, 0, sizeof(its));
	its.it_interval.tv_sec = (time_t)seconds;
	its.it_interval.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
	its.it_value = its.it_interval;
	if (timerfd_settime(fd, 0, &its, NULL) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void controller_notify(const char *line)
{
	if (write(LOWPROF_FD_NOTIFY, line, strlen(line)) < 0 && errno != EBADF && errno != EAGAIN)
		log_warn("notification to the supervisor failed: %s", strerror(errno));
}

static uint64_t controller_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int controller_signalfd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0)
		return -1;
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

int main(int argc, char **argv)
{
	static struct controller c; /* holds a frame-sized reader: not on the stack */
	static const char ready[] = "ready\n";
	struct pollfd pfd[2];
	struct stat st;
	char err[512];
	uint64_t last_ping;
	int rc, sfd, tfd, flags, status = LOWPROF_EXIT_FAILURE;
	bool running = true, seccomp_log;

	log_init("lowprof-controller", LOG_LEVEL_INFO);
	seccomp_log = sandbox_take_seccomp_log(&argc, argv);
	rc = controller_parse_options(argc, argv, &c, err, sizeof(err));
	if (rc != 0)
		fatal(rc, "%s", err);
	/* Before the first byte from the loader or /proc is read. */
	sandbox_enter("controller", seccomp_log);
	signal(SIGPIPE, SIG_IGN);
	if (fstat(LOWPROF_FD_CONTROL, &st) != 0 || !S_ISSOCK(st.st_mode))
		fatal(LOWPROF_EXIT_CONFIG, "fd %d is not the control socket to the loader",
		      LOWPROF_FD_CONTROL);
	c.fd = LOWPROF_FD_CONTROL;
	/* Every wait for the loader goes through poll (with the signalfd beside it):
	 * a blocking recv would outlive SIGTERM when the loader is not there. */
	flags = fcntl(c.fd, F_GETFL);
	if (flags < 0 || fcntl(c.fd, F_SETFL, flags | O_NONBLOCK) != 0)
		fatal(LOWPROF_EXIT_FAILURE, "control socket: %s", strerror(errno));
	wire_reader_init(&c.rd);
	sfd = controller_signalfd();
	tfd = controller_timerfd(c.interval_s);
	if (sfd < 0 || tfd < 0)
		fatal(LOWPROF_EXIT_FAILURE, "signalfd/timerfd: %s", strerror(errno));
	c.sfd = sfd;
	rc = controller_hello(&c);
	if (rc == -ECANCELED)
		return LOWPROF_EXIT_OK; /* stopped before the loader answered */
	if (rc != 0)
		fatal(LOWPROF_EXIT_FAILURE, "no answer from the loader: %s", strerror(-rc));
	policy_state_init(&c.state, &c.set);
	/* The first /proc/stat snapshot: the first interval compares against it. */
	controller_read_host(&c, &(struct policy_signals){0});
	log_info("every %g s: budget %g%%, -F %u Hz%s", c.interval_s, c.set.cpu_budget_pct,
		 c.set.tiers[THROTTLE_TIER_HEALTHY].frequency_hz, c.set.no_throttle ? ", --no-throttle" : "");
	flags = fcntl(LOWPROF_FD_NOTIFY, F_GETFL);
	/* A supervisor that stops reading must not stall us: drop lines instead. */
	if (flags >= 0)
		fcntl(LOWPROF_FD_NOTIFY, F_SETFL, flags | O_NONBLOCK);
	controller_notify(ready);
	last_ping = controller_monotonic_ms();

	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = tfd;
	pfd[1].events = POLLIN;
	while (running) {
		if (poll(pfd, 2, CONTROLLER_PING_MS) < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			goto out;
		}
		if (controller_monotonic_ms() - last_ping >= CONTROLLER_PING_MS) {
			controller_notify("ping\n");
			last_ping = controller_monotonic_ms();
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGHUP)
				running = false;
		}
		if (running && (pfd[1].revents & POLLIN)) {
			uint64_t expirations;

			if (read(tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
				log_warn("timerfd read: %s", strerror(errno));
			rc = controller_step(&c);
			if (rc == -ECANCELED)
				break; /* SIGTERM arrived while waiting for the loader */
			if (rc != 0) {
				log_error("the loader is gone: %s", strerror(-rc));
				goto out;
			}
		}
	}
	status = LOWPROF_EXIT_OK;
out:
	if (c.have_prev)
		host_load_stat_free(&c.prev);
	return status;
}
