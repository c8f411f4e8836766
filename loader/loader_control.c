/*
 * The loader's control side: what the control server (loader/control_server.h)
 * calls to apply a throttle and read the counters, the tier table the loader
 * starts from and falls back to, and the timeline entry of each control
 * interval for the exporter.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mono_clock.h"
#include "ipc/notify.h"
#include "ipc/loader_stats.h"
#include "ipc/lowprof_fds.h"
#include "ipc/unwinder_proto.h"
#include "loader/audit_log.h"
#include "loader/loader.h"
#include "loader/loader_audit.h"
#include "measure/agent_cpu.h"

static int loader_apply(void *arg, const struct throttle *t, char *err, size_t errlen)
{
	struct loader *l = arg;
	struct throttle bt = *t, thr_before;
	struct lowprof_config cfg_before;
	struct audit_actor who;
	int rc;

	bt.unwind_mode = file_tables_unwind_mode(&l->pt, t->unwind_mode);
	cfg_before = l->sess.config;
	thr_before = l->sess.throttle;
	rc = bpf_session_apply(&l->sess, &bt, err, errlen);
	/* The control server says for whom; it knows the peer's credentials. */
	if (l->cs.actor != NULL && strcmp(l->cs.actor, "controller") == 0) {
		who.component = "controller";
		who.pid = l->cs.mon.peer_pid;
		who.uid = l->cs.mon.peer_uid;
	} else {
		audit_actor_self(&who);
	}
	loader_audit_apply(&who, &l->sess, &cfg_before, &thr_before, &bt, rc);
	if (rc == 0) {
		l->applied_in_interval = true;
		loader_span_end(l);
	}
	return rc;
}

/* /proc/stat's aggregate line into the counters (left 0, unknown, when unreadable). */
static void loader_host_ticks(struct loader *l, struct control_counters *out)
{
	static bool said;
	struct host_stat cur;
	struct host_ticks t;
	char err[160];

	if (host_load_source_stat(&l->host, &cur, err, sizeof(err)) != 0) {
		/* Once: the host's load stays unknown while it lasts (no tier from it). */
		if (!said)
			log_warn_f("/proc/stat: %s", err);
		said = true;
		return;
	}
	host_ticks_of(&cur, &t);
	out->host_busy_ticks = t.busy;
	out->host_total_ticks = t.total;
	out->host_ctxt = t.ctxt;
	out->host_have_ctxt = t.have_ctxt;
}

static int loader_counters_read(struct loader *l, struct control_counters *out)
{
	struct lowprof_cpu_stats sum;
	struct agent_cpu_totals agent;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = loader_read_bpf_stats(l, &sum);
	if (rc != 0)
		return rc;
	out->monotonic_ns = mono_ns();
	loader_host_ticks(l, out);
	out->submitted = sum.submitted;
	out->reserve_failures = sum.reserve_failures;
	out->bpf_run_time_ns = sum.run_time_ns;
	out->bpf_run_count = sum.events;
	/* The tables of the processes running at start are start-up too, however
	 * long they take: until they are done, every lowprof process's CPU is.
	 * (Their time is not taken off the charged CPU afterwards: it is in the
	 * start-up already, and charged CPU would read 0 until it had made up
	 * for it, minutes after a start in DWARF mode.) Unreadable (the
	 * supervisor gone): the agent's CPU reads as unchanged. */
	l->agent.starting = file_tables_starting(&l->pt);
	if (agent_cpu_sample(&l->agent, "/proc", &agent) == 0) {
		out->agent_cpu_ns = agent.charged_ns;
		out->startup_cpu_ns = agent.startup_ns;
		/* The unwinder's charged CPU and this loader's share of the work. */
		out->tables_cpu_ns = agent.tables_ns + l->pt.st.work_cpu_ns;
	} else {
		out->agent_cpu_ns = l->tl_base.agent_cpu_ns;
		out->startup_cpu_ns = l->tl_base.startup_cpu_ns;
		out->tables_cpu_ns = l->tl_base.tables_cpu_ns;
	}
	out->ringbuf_used_bytes = bpf_session_ringbuf_used(&l->sess);
	out->ringbuf_size_bytes = (uint64_t)l->opt.ringbuf_kb * 1024u;
	out->online_cpus = (uint32_t)l->sess.events.count;
	if (l->sess.offcpu.enabled) {
		struct lowprof_offcpu_stats os;

		/* Unreadable: the off-CPU share reads as unchanged, the rest stands. */
		if (offcpu_read_stats(l->sess.skel, l->sess.ncpus_possible, &os) == 0) {
			out->offcpu_run_time_ns = os.run_time_ns;
			out->offcpu_records = os.submitted;
			out->offcpu_switches = os.switches;
			out->offcpu_floor_runs = os.floor_runs;
			out->offcpu_floor_run_ns = os.floor_run_ns;
		} else {
			out->offcpu_run_time_ns = l->tl_base.offcpu_run_time_ns;
			out->offcpu_records = l->tl_base.offcpu_records;
			out->offcpu_switches = l->tl_base.offcpu_switches;
			out->offcpu_floor_runs = l->tl_base.offcpu_floor_runs;
			out->offcpu_floor_run_ns = l->tl_base.offcpu_floor_run_ns;
		}
	}
	return 0;
}

int loader_read_bpf_stats(struct loader *l, struct lowprof_cpu_stats *sum)
{
	int rc;

	if (l->pass != 0 && l->bpf_stats_pass == l->pass) {
		*sum = l->bpf_stats;
		return 0;
	}
	rc = bpf_session_read_stats(&l->sess, sum);
	if (rc == 0) {
		l->bpf_stats = *sum;
		l->bpf_stats_pass = l->pass;
	}
	return rc;
}

/*
 * The counters, read once per loop pass: the controller's stats request and
 * the timeline entry of the same pass (the request is the interval's tick)
 * share one reading of the BPF maps and of the agent's processes.
 */
static int loader_counters(void *arg, struct control_counters *out)
{
	struct loader *l = arg;
	int rc;

	if (l->pass != 0 && l->counters_pass == l->pass) {
		*out = l->counters;
		return 0;
	}
	rc = loader_counters_read(l, out);
	if (rc == 0) {
		l->counters = *out;
		l->counters_pass = l->pass;
	}
	return rc;
}

/* Whole-host CPU over the counters' delta d, in hundredths of a percent; -1 if unknown. */
static int loader_host_cpu(const struct control_counters *d)
{
	struct host_load load;
	int centi;

	if (!host_load_of_ticks(d->host_busy_ticks, d->host_total_ticks, false, 0, &load))
		return -1;
	centi = (int)(load.host_cpu_pct * 100.0 + 0.5);
	return centi > 10000 ? 10000 : centi;
}

/* The tier table, as the controller builds it: --max-depth is the healthy
 * tier's depth, and so every tier's ceiling. */
static void loader_tiers(const struct loader_options *opt,
			 struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT])
{
	throttle_tiers_default(tiers, opt->frequency_hz);
	tiers[THROTTLE_TIER_HEALTHY].max_depth = opt->max_depth;
}

/* Whether the interval whose deltas are d (host: its host CPU in
 * hundredths of a percent, -1 unknown) was steady, the policy's test as the
 * controller would see it (ipc/throttle.h's throttle_steady). */
static bool loader_steady(const struct loader *l, const struct control_counters *d, int host,
			  uint32_t cpus)
{
	struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT];
	double overhead = throttle_overhead_pct(d->bpf_run_time_ns, d->agent_cpu_ns, cpus, d->monotonic_ns);
	double others = host < 0 ? -1.0
				 : host_load_others_pct(host / 100.0, d->bpf_run_time_ns + d->agent_cpu_ns +
									  d->startup_cpu_ns,
							cpus, d->monotonic_ns);

	loader_tiers(&l->opt, tiers);
	return throttle_steady(&l->cs.applied, tiers, l->opt.no_throttle, others, d->reserve_failures,
			       d->offcpu_records, overhead, l->opt.cpu_budget_pct);
}

/* One timeline entry for the control interval that just ended. True: the
 * interval was quiet (next to nothing sampled, see throttle_quiet); *steady:
 * it was steady (loader_steady). */
static bool loader_timeline_entry(struct loader *l, bool *steady)
{
	struct lowprof_timeline_entry e;
	struct control_counters now, d;
	const struct throttle *t = &l->cs.applied;
	int host;

	*steady = false;
	if (loader_counters(l, &now) != 0)
		return false;
	control_counters_delta(&now, &l->tl_base, &d);
	host = loader_host_cpu(&d);
	memset(&e, 0, sizeof(e));
	e.version = LOWPROF_TIMELINE_VERSION;
	e.monotonic_ns = now.monotonic_ns;
	e.interval_ns = d.monotonic_ns > 0 ? d.monotonic_ns : 1;
	e.tier = t->tier;
	e.frequency_hz = t->frequency_hz;
	e.unwind = t->unwind_mode;
	e.max_depth = t->max_depth;
	e.sample_divisor = t->sample_divisor;
	e.paused = t->paused;
	e.online_cpus = now.online_cpus > 0 ? now.online_cpus : 1;
	e.cpu_budget_centipct = (__u32)(l->opt.cpu_budget_pct * 100.0 + 0.5);
	if (l->cs.failsafe)
		e.flags |= LOWPROF_TIMELINE_FAILSAFE;
	if (host >= 0) {
		e.flags |= LOWPROF_TIMELINE_HOST_VALID;
		e.host_cpu_centipct = (__u32)host;
	}
	e.events = d.bpf_run_count;
	e.submitted = d.submitted;
	e.reserve_failures = d.reserve_failures;
	e.bpf_run_time_ns = d.bpf_run_time_ns;
	e.agent_cpu_ns = d.agent_cpu_ns;
	e.startup_cpu_ns = d.startup_cpu_ns;
	e.offcpu_prob_ppm = l->sess.offcpu.enabled ? l->sess.offcpu.prob_ppm : 0;
	e.offcpu_attached = l->sess.offcpu_link != NULL;
	e.offcpu_run_time_ns = d.offcpu_run_time_ns;
	e.offcpu_records = d.offcpu_records;
	l->tl_base = now;
	l->tl_overhead_pct = throttle_overhead_pct(e.bpf_run_time_ns, e.agent_cpu_ns, e.online_cpus, e.interval_ns);
	l->tl_drop_pct = throttle_drop_pct(e.reserve_failures, e.submitted);
	if (!l->first_entry_done) {
		/* The running processes' tables are built in the first interval: start-up. */
		l->tables_ns = l->pt.st.work_ns;
		l->first_entry_done = true;
	}
	if (drain_put_record(&l->dr, LOWPROF_REC_TIMELINE, &e, sizeof(e)) != 0)
		log_warn_f("shared ring full: timeline entry not delivered");
	*steady = loader_steady(l, &d, host, e.online_cpus);
	return throttle_quiet(t, d.submitted, d.reserve_failures, d.offcpu_records, e.interval_ns);
}

void loader_control_final(struct loader *l)
{
	bool steady;

	if (!l->first_entry_done)
		(void)loader_timeline_entry(l, &steady);
}

void loader_tier_throttle(const struct loader_options *opt, enum throttle_tier tier,
			  struct throttle *out)
{
	struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT];

	loader_tiers(opt, tiers);
	throttle_for_tier(tiers, tier, out);
}

void loader_control_start(struct loader *l)
{
	static const struct control_ops ops = {loader_apply, loader_counters, NULL};
	struct control_server_config cfg;
	struct control_ops o = ops;
	struct throttle initial;
	int fd = loader_inherited_seqpacket(LOWPROF_FD_CONTROL, "control");

	memset(&cfg, 0, sizeof(cfg));
	cfg.limits.max_frequency_hz = l->opt.frequency_hz;
	cfg.limits.max_divisor = 64;
	cfg.max_depth = l->opt.max_depth;
	if (l->opt.off_cpu) {
		struct offcpu_settings user;

		offcpu_settings_from_options(&l->opt, &user);
		cfg.offcpu_max_ppm = user.prob_ppm;
	}
	cfg.interval_ns = l->control_interval_ns;
	cfg.fixed = l->opt.no_throttle;
	/* The monitor's checks: only the supervisor's controller child (its uid,
	 * its parent, its program), at a bounded rate. */
	cfg.check_peer = l->opt.controller_uid >= 0;
	cfg.expected_uid = (uid_t)l->opt.controller_uid;
	cfg.expected_ppid = getppid();
	cfg.expected_exe = cfg.check_peer ? "lowprof-controller" : NULL;
	cfg.rate_per_s = CONTROL_RATE_PER_S;
	cfg.rate_burst = CONTROL_RATE_BURST;
	loader_tier_throttle(&l->opt, THROTTLE_TIER_CRITICAL, &cfg.failsafe);
	initial = l->sess.throttle;
	initial.tier = THROTTLE_TIER_HEALTHY;
	o.arg = l;
	control_server_init(&l->cs, fd, &cfg, &o, &initial, mono_ns());
	if (fd < 0)
		log_info("no control socket: fixed settings, no fail-safe");
	/* Every lowprof process counts as starting unless this loader adopted a
	 * running session (a restart): then only the loader does. */
	agent_cpu_init(&l->agent, l->agent_root, getpid(), l->sess.adopted_links == 0);
	agent_cpu_set_tables_comm(&l->agent, UNWINDER_PROGRAM);
	/* The first timeline entry covers the time from here. */
	loader_counters(l, &l->tl_base);
	/* What the processes had used up to here is the first entry's start-up. */
	l->tl_base.startup_cpu_ns = 0;
	l->next_control_ns = l->tl_base.monotonic_ns + l->control_interval_ns;
}

/* The state line is sent again at least this often even when unchanged. */
#define LOADER_STATE_RESEND_NS (30ULL * NSEC_PER_SEC)

/* The throttle state for `lowprof status`, with the last control interval's
 * overhead and losses: sent when it changed (about every interval, then:
 * the supervisor reads the lines at its own passes, they do not wake it),
 * and now and then in case one was lost. */
static void loader_notify_state(struct loader *l, uint64_t now_ns)
{
	const struct throttle *t = &l->cs.applied;
	struct lowprof_offcpu_stats os;
	char off[256] = "", line[sizeof(l->state_sent)];

	/* Off-CPU: records, blocked periods under the threshold, switch-outs the
	 * probability passed over, records lost to a full ring, the probability. */
	if (l->sess.offcpu.enabled && offcpu_read_stats(l->sess.skel, l->sess.ncpus_possible, &os) == 0)
		snprintf(off, sizeof(off),
			 " offcpu_records=%llu offcpu_short=%llu offcpu_sampled_out=%llu "
			 "offcpu_drops=%llu offcpu_probability_pct=%.4f offcpu_attached=%d",
			 (unsigned long long)os.submitted, (unsigned long long)os.short_dropped,
			 (unsigned long long)(os.switches > os.sampled ? os.switches - os.sampled : 0),
			 (unsigned long long)os.reserve_failures, (double)l->sess.offcpu.prob_ppm / 1e4,
			 l->sess.offcpu_link != NULL);
	/* The figures rounded as summary.json's timeline rounds them. */
	snprintf(line, sizeof(line),
		 "tier=%s frequency_hz=%u unwind=%s max_depth=%u sample_divisor=%u paused=%d failsafe=%d "
		 "overhead_pct=%.4f drop_pct=%.2f cpus=%zu%s",
		 throttle_tier_name(t->tier), t->frequency_hz, throttle_unwind_name(t->unwind_mode),
		 t->max_depth, t->sample_divisor, t->paused ? 1 : 0, l->cs.failsafe ? 1 : 0,
		 l->tl_overhead_pct, l->tl_drop_pct, l->sess.events.count, off);
	if (strcmp(line, l->state_sent) == 0 && now_ns - l->state_sent_ns < LOADER_STATE_RESEND_NS)
		return;
	notify_state("%s", line);
	memcpy(l->state_sent, line, sizeof(line));
	l->state_sent_ns = now_ns;
}

void loader_span_end(struct loader *l)
{
	if (!l->quiet && !l->steady)
		return;
	l->quiet = false;
	l->quiet_run = 0;
	l->steady = false;
	l->steady_run = 0;
	bpf_session_set_wake(&l->sess, 0, false);
	if (l->next_control_ns > l->last_control_ns + l->control_interval_ns)
		l->next_control_ns = l->last_control_ns + l->control_interval_ns;
}

void loader_steady_newcomer_wake(struct loader *l, bool found_new)
{
	unsigned intervals = l->control_interval_ns > 0 ? (unsigned)(l->span_ns / l->control_interval_ns) : 1;

	if (l->newcomer_wake_off)
		return;
	if (found_new)
		l->span_told++;
	else
		l->span_wakes++;
	if (l->span_wakes >= LOADER_SPAN_WAKES || l->span_told >= LOADER_SPAN_WAKES * intervals) {
		bpf_session_set_wake(&l->sess, 0, false);
		l->newcomer_wake_off = true;
		l->wake_off_new_pids = l->dr.new_pids;
	}
}

bool loader_control_tick(struct loader *l, uint64_t now_ns, uint64_t slack_ns, bool asked)
{
	unsigned intervals, longest;
	uint64_t fit, wake_bytes = 0;
	bool quiet, steady, settled, newcomers;

	if (now_ns + slack_ns < l->next_control_ns)
		return false;
	control_server_tick(&l->cs, now_ns);
	quiet = loader_timeline_entry(l, &steady);
	/* The next interval is longer when nothing is to be throttled (quiet)
	 * or the policy would decide the same again (steady): ipc/throttle.h.
	 * Not while tables are being built (their work is the fast period's),
	 * in the fail-safe, or when the controller is not listening: it read
	 * the previous push (or just asked), so a long interval cannot hide a
	 * controller that already fell silent. A steady one neither when the
	 * controller's request made this tick (it times the intervals then), nor
	 * after a new throttle (its effect is measured over one interval first),
	 * nor unless it fits twice in the exporter's --interval: the exporter
	 * closes its intervals on what we drained, and one that found nothing
	 * new would look like a rest's trickle (and go on). Nor after an
	 * interval that sampled a process not seen lately: on a host that
	 * starts processes the exporter is told of each at the next drain and
	 * asks about it while it exists (drain.h); a long interval would put
	 * that drain off by a second, past a short-lived process's end. */
	settled = (asked || control_server_listening(&l->cs, now_ns)) && !l->cs.failsafe &&
		  !l->pt.busy && l->cs.mon.fd >= 0;
	l->quiet = quiet && settled;
	l->quiet_run = l->quiet ? l->quiet_run + 1 : 0;
	/* With --no-throttle a steady interval's new processes woke us and were
	 * told at once (loader_drain): they keep the next one from being steady
	 * only when one came after the wake went off (told at this drain, late).
	 * A host that starts a process every few seconds (a health check, a cron
	 * job) would otherwise never get past intervals of 1, 2 and 4. */
	newcomers = l->dr.new_pids != l->tick_new_pids &&
		    (!loader_steady_fixed(l) ||
		     (l->newcomer_wake_off && l->dr.new_pids != l->wake_off_new_pids));
	l->span_wakes = l->span_told = 0;
	l->newcomer_wake_off = false;
	l->tick_new_pids = l->dr.new_pids;
	longest = throttle_quiet_max_intervals(l->control_interval_ns,
					       (uint64_t)notify_ping_interval_ms() * NSEC_PER_MSEC);
	/* Two steady intervals fit in the exporter's --interval. */
	fit = l->control_interval_ns > 0
		      ? (uint64_t)l->opt.interval_s * NSEC_PER_SEC / (2 * l->control_interval_ns)
		      : 0;
	l->steady = !l->quiet && steady && settled && !asked && !l->applied_in_interval && !newcomers &&
		    fit >= THROTTLE_STEADY_SPAN;
	l->steady_run = l->steady ? l->steady_run + 1 : 0;
	l->applied_in_interval = false;
	intervals = l->quiet ? throttle_quiet_span(l->quiet_run, longest)
		    : l->steady
			    ? throttle_steady_span(l->opt.no_throttle, l->steady_run,
						   fit < longest ? (unsigned)fit : longest)
			    : 1;
	/* The controller's Stats of the interval, unless it just asked for
	 * them, saying when the next come (it stands by for that long). */
	if (!asked && !control_server_push(&l->cs, now_ns, intervals)) {
		l->quiet = l->steady = false;
		l->quiet_run = l->steady_run = 0;
		intervals = 1;
	}
	loader_notify_state(l, now_ns);
	l->span_ns = l->control_interval_ns * intervals;
	/* While we rest, a few samples waiting wake us, and so does a new
	 * process's first sample (drained at once, told to the exporter while
	 * the process exists; loader_drain keeps resting after it); in a steady
	 * interval, more than its rate would leave (not only a quarter-full ring):
	 * load coming, which the throttle must see. Fixed (--no-throttle) there is
	 * nothing to see: a quarter-full ring, and a new process as at rest. */
	if (l->quiet)
		wake_bytes = SETTINGS_RINGBUF_REST_WAKE_BYTES;
	else if (l->steady && !loader_steady_fixed(l))
		wake_bytes = throttle_steady_wake_bytes(l->dr.drained_bytes - l->tick_drained_bytes,
							now_ns - l->last_control_ns, l->span_ns,
							SETTINGS_RINGBUF_REST_WAKE_BYTES);
	bpf_session_set_wake(&l->sess, wake_bytes, l->quiet || loader_steady_fixed(l));
	l->tick_drained_bytes = l->dr.drained_bytes;
	l->last_control_ns = now_ns;
	l->next_control_ns += l->span_ns;
	/* After a stall, do not emit a burst of catch-up entries. */
	if (l->next_control_ns <= now_ns + slack_ns)
		l->next_control_ns = now_ns + l->span_ns;
	return true;
}
