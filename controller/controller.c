/* The controller's loop (see the header). */
#include "controller/controller.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/event_fds.h"
#include "common/log.h"
#include "common/mono_clock.h"
#include "ipc/notify.h"
#include "ipc/lowprof_fds.h"

/* Hello, then GetState: a restarted controller starts from what is in force. */
static int controller_hello(struct controller *c)
{
	char desc[96];
	int rc = control_client_hello(&c->cc, &c->sent);

	if (rc != 0)
		return rc;
	c->have_sent = true;
	throttle_describe(&c->sent, desc, sizeof(desc));
	log_debug("loader state: %s", desc);
	return 0;
}

/* This interval's CPU pressure (optional: kernels without PSI simply have no
 * pressure signal). The host's CPU comes with the loader's Stats. */
static void controller_read_pressure(struct controller *c, struct policy_signals *sig)
{
	char err[160];

	sig->pressure_valid = host_load_source_pressure(&c->host, &sig->cpu_pressure, err,
							sizeof(err)) == 0;
}

/* The policy's signals from the interval's counters. */
static void controller_signals_from_stats(const struct control_stats *st, struct policy_signals *sig)
{
	struct host_load load;

	/* The host's load from /proc/stat as the loader read it for the interval. */
	if (host_load_of_ticks(st->host_busy_ticks, st->host_total_ticks, st->host_have_switches,
			       st->host_context_switches, &load)) {
		sig->host_valid = true;
		sig->host_cpu_pct = load.host_cpu_pct;
		sig->host_switches_valid = load.switches_valid;
		sig->host_switches_per_cpu_s = load.switches_per_cpu_s;
	}
	if (st->interval_ns > 0) {
		sig->stats_valid = true;
		sig->drop_pct = throttle_drop_pct(st->reserve_failures, st->samples_submitted);
		sig->overhead_pct = throttle_overhead_pct(st->bpf_run_time_ns, st->agent_cpu_ns,
							  st->online_cpus, st->interval_ns);
		/* Off-CPU's cost: its own BPF time, and the agent's CPU in the proportion
		 * of the records it wrote (draining and symbolizing cost per record).
		 * Building unwind tables is not per record: a new executable brings it
		 * whatever is sampled, and on a host that samples little, records
		 * would take nearly all of it. */
		sig->offcpu_ran = st->offcpu_switches > 0;
		if (sig->offcpu_ran) {
			double recs = (double)st->offcpu_records + (double)st->samples_submitted;
			double per_record = st->agent_cpu_ns > st->tables_cpu_ns
						    ? (double)(st->agent_cpu_ns - st->tables_cpu_ns)
						    : 0.0;
			double agent = recs > 0 ? per_record * (double)st->offcpu_records / recs : 0;

			sig->offcpu_overhead_pct = throttle_overhead_pct(st->offcpu_run_time_ns, (uint64_t)agent,
								 st->online_cpus, st->interval_ns);
		}
		if (st->offcpu_floor_runs >= OFFCPU_FLOOR_MIN_RUNS) {
			sig->offcpu_floor_valid = true;
			sig->offcpu_floor_ns = (double)st->offcpu_floor_run_ns / (double)st->offcpu_floor_runs;
		}
		/* The host load that drives the tiers is everyone else's. */
		if (sig->host_valid)
			sig->host_cpu_pct = host_load_others_pct(
				sig->host_cpu_pct, st->bpf_run_time_ns + st->agent_cpu_ns + st->startup_cpu_ns,
				st->online_cpus, st->interval_ns);
	}
	log_debug("stats: %llu submitted, %llu lost, ring %llu/%llu bytes, BPF %llu ns in %llu runs, "
		  "agent %llu ns (tables %llu), start-up %llu ns, off-CPU %llu ns %llu records %llu switches, over %.3f s",
		  (unsigned long long)st->samples_submitted, (unsigned long long)st->reserve_failures,
		  (unsigned long long)st->ringbuf_used_bytes, (unsigned long long)st->ringbuf_size_bytes,
		  (unsigned long long)st->bpf_run_time_ns, (unsigned long long)st->bpf_run_count,
		  (unsigned long long)st->agent_cpu_ns, (unsigned long long)st->tables_cpu_ns,
		  (unsigned long long)st->startup_cpu_ns,
		  (unsigned long long)st->offcpu_run_time_ns, (unsigned long long)st->offcpu_records,
		  (unsigned long long)st->offcpu_switches, (double)st->interval_ns / 1e9);
}

/* Ask for the interval's counters (into *st, *got set when they came), and for
 * them every interval from now on. Returns 0, CONTROL_CLIENT_HELLO_AGAIN, or -errno. */
static int controller_read_stats(struct controller *c, struct policy_signals *sig,
				 struct control_stats *st, bool *got)
{
	int rc = control_client_stats(&c->cc, true, st);

	*got = false;
	if (rc == CONTROL_CLIENT_NO_ANSWER)
		return 0; /* stats_valid stays false: the policy holds what depends on them */
	if (rc != 0)
		return rc;
	controller_signals_from_stats(st, sig);
	*got = true;
	return 0;
}

/* Ask for t. Returns 0 or -errno when the loader is gone. */
static int controller_set_throttle(struct controller *c, const struct throttle *t)
{
	int rc = control_client_set_throttle(&c->cc, t);

	if (rc == 0) {
		c->sent = *t;
		c->have_sent = true;
	}
	if (rc == CONTROL_CLIENT_HELLO_AGAIN)
		return controller_hello(c);
	return rc < 0 ? rc : 0;
}

/*
 * One control interval: pushed, the Stats the loader sent at its end; NULL:
 * ask for them (the first interval, or no push came). The Stats say when
 * the next come (next_push_intervals: several intervals on after a quiet or
 * steady one, ipc/throttle.h; a change ends it there: a push sooner than we
 * stand by for does no harm).
 * Returns 0, or -errno when the loader is gone.
 */
static int controller_step(struct controller *c, const struct control_stats *pushed)
{
	struct policy_signals sig;
	struct policy_decision d;
	const struct throttle *t = &d.throttle;
	struct control_stats asked;
	const struct control_stats *st = pushed;
	bool got = pushed != NULL;
	char desc[96];
	int rc = 0;

	memset(&sig, 0, sizeof(sig));
	controller_read_pressure(c, &sig);
	if (pushed != NULL)
		controller_signals_from_stats(pushed, &sig);
	else
		rc = controller_read_stats(c, &sig, &asked, &got);
	if (rc == CONTROL_CLIENT_HELLO_AGAIN)
		rc = controller_hello(c);
	if (rc != 0)
		return rc;
	if (pushed == NULL)
		st = &asked;
	policy_step(&c->set, &c->state, &sig, &d);
	/* --no-throttle: the loader's settings are fixed (it refuses any change);
	 * the controller only measures, for the timeline and the log. */
	if (c->set.no_throttle || (c->have_sent && throttle_equal(t, &c->sent))) {
		log_debug("host %.1f%%, drops %.2f%%, overhead %.3f%%: %s",
			  sig.host_cpu_pct, sig.drop_pct, sig.overhead_pct, d.reason);
	} else {
		throttle_describe(t, desc, sizeof(desc));
		/* "; now": the reason ends with a tier change of its own ("high ->
		 * healthy"), which another arrow would run on into. */
		log_info("host %.1f%%, drops %.2f%%, overhead %.3f%%: %s; now %s", sig.host_cpu_pct,
			 sig.drop_pct, sig.overhead_pct, d.reason, desc);
		rc = controller_set_throttle(c, t);
	}
	/* The loader says when it pushes next (a new throttle ends a long
	 * interval there: a push sooner than we stand by for does no harm). */
	c->next_push_intervals = rc == 0 && got ? st->next_push_intervals : 0;
	return rc;
}

int controller_start(struct controller *c, char *err, size_t errlen)
{
	int rc;

	c->sfd = c->tfd = -1;
	host_load_source_init(&c->host, NULL, "/proc/pressure/cpu");
	signal(SIGPIPE, SIG_IGN);
	c->sfd = event_signalfd();
	c->tfd = event_timerfd((unsigned)(c->interval_s * 1000.0 + 0.5));
	if (c->sfd < 0 || c->tfd < 0)
		return errbuf_fail(c->sfd < 0 ? c->sfd : c->tfd, err, errlen, "signalfd/timerfd: %s",
				   strerror(-(c->sfd < 0 ? c->sfd : c->tfd)));
	rc = control_client_open(&c->cc, LOWPROF_FD_CONTROL, c->sfd, err, errlen);
	if (rc != 0)
		return rc;
	rc = controller_hello(c);
	if (rc != 0)
		return errbuf_fail(rc, err, errlen, "no answer from the loader: %s", strerror(-rc));
	policy_state_init(&c->state, &c->set);
	/* A restarted controller keeps the off-CPU probability its predecessor reached. */
	if (c->set.offcpu_max_ppm > 0 && c->sent.offcpu_prob_ppm > 0 &&
	    c->sent.offcpu_prob_ppm < c->set.offcpu_max_ppm) {
		c->state.offcpu_ppm = c->sent.offcpu_prob_ppm;
		c->state.current.offcpu_prob_ppm = c->sent.offcpu_prob_ppm;
	}
	log_debug("every %g s: budget %g%%, -F %u Hz%s", c->interval_s, c->set.cpu_budget_pct,
		 c->set.tiers[THROTTLE_TIER_HEALTHY].frequency_hz, c->set.no_throttle ? ", --no-throttle" : "");
	notify_ready();
	return 0;
}

/* A pushed Stats is this late at most before we ask ourselves: half an
 * interval past when the last one said the next is due, which is several
 * intervals on after a quiet or steady one (ipc/throttle.h); one interval
 * when it did not say. */
static uint64_t controller_standby_ns(const struct controller *c)
{
	unsigned span = c->next_push_intervals > 0 ? c->next_push_intervals : 1;

	return (uint64_t)(c->interval_s * (span + 0.5) * 1e9);
}

/*
 * The loader pushes each interval's Stats (we asked with every_interval), so
 * the loop sleeps until it comes: one wake-up per interval, the host read
 * then. The timer only stands by: when no Stats came for an interval and a
 * half (the loader restarted and forgot us, or is stuck), a step asks for
 * them, which also asks for the push again.
 */
int controller_run(struct controller *c)
{
	struct pollfd pfd[3] = {{.fd = c->sfd, .events = POLLIN}, {.fd = c->tfd, .events = POLLIN},
				{.fd = c->cc.fd, .events = POLLIN}};
	/* The push carries the liveness ping when the interval is short enough
	 * (pings are 0.4 of the supervisor's timeout apart). */
	int ping_ms = (int)notify_ping_interval_ms();
	int timeout = c->interval_s * 1000.0 <= ping_ms ? -1 : ping_ms;
	struct control_stats st;
	bool stepped;
	int rc, got;

	event_timer_at(c->tfd, mono_ns() + (uint64_t)(c->interval_s * 1e9));
	for (;;) {
		if (event_poll(pfd, 3, timeout) < 0)
			return LOWPROF_EXIT_FAILURE;
		notify_ping();
		if ((pfd[0].revents & POLLIN) && event_signal_stop(c->sfd))
			return LOWPROF_EXIT_OK;
		stepped = false;
		rc = 0;
		if (pfd[2].revents != 0 || c->cc.pushed != NULL) {
			while (rc == 0 && (got = control_client_pushed(&c->cc, &st)) > 0) {
				rc = controller_step(c, &st);
				stepped = true;
			}
			if (rc == 0 && got < 0)
				rc = got;
		}
		if (rc == 0 && !stepped && (pfd[1].revents & POLLIN)) {
			event_timer_ack(c->tfd);
			rc = controller_step(c, NULL);
			stepped = true;
		}
		if (rc == -ECANCELED)
			return LOWPROF_EXIT_OK; /* SIGTERM arrived while waiting for the loader */
		if (rc != 0) {
			log_error("the loader is gone: %s", strerror(-rc));
			return LOWPROF_EXIT_FAILURE;
		}
		if (stepped)
			event_timer_at(c->tfd, mono_ns() + controller_standby_ns(c));
	}
}

void controller_stop(struct controller *c)
{
	host_load_source_close(&c->host);
	control_client_close(&c->cc);
}
