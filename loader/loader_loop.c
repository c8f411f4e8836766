/* The loader's start, poll loop and stop (see loader/loader.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/event_fds.h"
#include "common/log.h"
#include "common/mono_clock.h"
#include "settings/defaults.h"
#include "ipc/notify.h"
#include "ipc/loader_stats.h"
#include "ipc/lowprof_fds.h"
#include "loader/audit_log.h"
#include "loader/bpf_pins.h"
#include "loader/loader.h"
#include "loader/file_registry.h"
#include "loader/loader_audit.h"

/* At a clean stop, the symbol socket is served until it is quiet this long, at most the max. */
#define LOADER_SYMBOLS_QUIET_MS 300
#define LOADER_SYMBOLS_GRACE_MAX_NS (2ULL * NSEC_PER_SEC)

int loader_inherited_seqpacket(int fd, const char *what)
{
	struct stat st;
	socklen_t len = sizeof(int);
	int type = 0;

	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET) {
		log_warn("fd %d is not a SOCK_SEQPACKET socket: no %s socket", fd, what);
		return -1;
	}
	/* Not inherited by anything the loader might start. */
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

static void loader_symbols_start(struct loader *l)
{
	struct symbol_broker_config cfg;
	int fd = loader_inherited_seqpacket(LOWPROF_FD_SYMBOLS, "symbol");

	if (fd < 0) {
		log_info("no symbol socket: no symbol broker for the exporter");
		return;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.proc_root = "/proc";
	cfg.debug_root = l->opt.debug_dir;
	/* The monitor's checks: only the exporter (its uid, a child of our
	 * supervisor, running lowprof-exporter), at a bounded rate, and only
	 * about the processes the drain has seen. */
	cfg.check_peer = l->opt.exporter_uid >= 0;
	cfg.exporter_uid = (uid_t)l->opt.exporter_uid;
	cfg.exporter_ppid = cfg.check_peer ? getppid() : 0;
	cfg.exporter_exe = cfg.check_peer ? "lowprof-exporter" : NULL;
	if (seen_pids_init(&l->seen, mono_ns()) != 0)
		fatal(LOWPROF_EXIT_FAILURE, "out of memory");
	l->dr.seen = &l->seen;
	cfg.sampled = &l->seen;
	cfg.files = l->files;
	cfg.rate_per_s = SYMBOL_BROKER_RATE_PER_S;
	cfg.burst = SYMBOL_BROKER_RATE_BURST;
	if (symbol_broker_init(&l->sb, fd, &cfg, mono_ns()) != 0) {
		log_warn("symbol broker: bad configuration: no symbol broker");
		close(fd);
	}
}

/*
 * After the last drain the exporter still symbolizes what it has not read yet,
 * and the supervisor stops it only once we are gone: keep answering it until
 * it has been quiet for a moment (bounded, the stop must not hang on it).
 */
static void loader_symbols_grace(struct loader *l)
{
	uint64_t end = mono_ns() + LOADER_SYMBOLS_GRACE_MAX_NS;
	struct pollfd p;

	while (l->sb.mon.fd >= 0 && mono_ns() < end) {
		p.fd = l->sb.mon.fd;
		p.events = POLLIN;
		p.revents = 0;
		if (poll(&p, 1, LOADER_SYMBOLS_QUIET_MS) <= 0)
			break;
		symbol_broker_handle(&l->sb, mono_ns());
	}
}

/* Publish the cumulative counters into the shared ring for the exporter. */
static void loader_publish_stats(struct loader *l)
{
	struct lowprof_loader_stats st;
	struct lowprof_cpu_stats sum;

	if (loader_read_bpf_stats(l, &sum) != 0) {
		log_warn_f("reading BPF counters: %s", strerror(errno));
		return;
	}
	memset(&st, 0, sizeof(st));
	st.version = LOWPROF_LOADER_STATS_VERSION;
	st.online_cpus = (__u32)l->sess.events.count;
	st.monotonic_ns = mono_ns();
	st.events = sum.events;
	st.submitted = sum.submitted;
	st.reserve_failures = sum.reserve_failures;
	st.divisor_skipped = sum.divisor_skipped;
	st.filtered = sum.filtered;
	st.idle = sum.idle;
	st.guard_skipped = sum.guard_skipped;
	st.guard_proc_capped = sum.guard_proc_capped;
	st.sigframe_refused = sum.sigframe_refused;
	st.bpf_run_time_ns = sum.run_time_ns;
	st.drained = l->dr.drained;
	st.shm_dropped = l->dr.shm_dropped;
	st.ringbuf_bytes = (__u64)l->opt.ringbuf_kb * 1024u;
	/* The frequency in force, not the ceiling: it changes with the throttle. */
	st.frequency_hz = l->sess.throttle.frequency_hz;
	st.bpf_load_ns = l->bpf_load_ns;
	st.tables_ns = l->tables_ns;
	if (l->sess.offcpu.enabled) {
		struct lowprof_offcpu_stats os;

		if (offcpu_read_stats(l->sess.skel, l->sess.ncpus_possible, &os) == 0) {
			st.offcpu_switches = os.switches;
			st.offcpu_sampled = os.sampled;
			st.offcpu_stashed = os.stashed;
			st.offcpu_guard_skipped = os.guard_skipped;
			st.offcpu_short = os.short_dropped;
			st.offcpu_submitted = os.submitted;
			st.offcpu_reserve_failures = os.reserve_failures;
			st.offcpu_run_time_ns = os.run_time_ns;
			st.offcpu_floor_runs = os.floor_runs;
			st.offcpu_floor_run_ns = os.floor_run_ns;
			st.offcpu_stale_dropped = os.stale_dropped;
		}
		st.offcpu_prob_ppm = l->sess.offcpu.prob_ppm;
		st.offcpu_attached = l->sess.offcpu_link != NULL;
	}
	if (drain_put_record(&l->dr, LOWPROF_REC_LOADER_STATS, &st, sizeof(st)) != 0)
		log_warn_f("shared ring full: statistics record not delivered");
}

/* This process's CPU time, ns. */
static uint64_t loader_cpu_ns(void)
{
	uint64_t ns = 0;

	agent_cpu_process_ns(0, &ns);
	return ns;
}

/* Start the session in the healthy tier: what the controller asks for on a calm host. */
static void loader_session_start(struct loader *l, struct bpf_session_settings *set)
{
	struct throttle healthy;
	uint64_t cpu0;
	char err[512];
	int rc;

	loader_tier_throttle(&l->opt, THROTTLE_TIER_HEALTHY, &healthy);
	memset(set, 0, sizeof(*set));
	set->frequency_hz = healthy.frequency_hz;
	set->ringbuf_kb = l->opt.ringbuf_kb;
	set->max_depth = healthy.max_depth;
	file_tables_configure(&l->pt, l->opt.unwind);
	set->unwind_mode = file_tables_unwind_mode(&l->pt, healthy.unwind_mode);
	set->unwind_table_mb = l->opt.unwind == LOADER_UNWIND_FP ? 0 : l->opt.unwind_table_mb;
	set->pids = l->opt.pids;
	set->npids = l->opt.npids;
	set->pid_starts = l->opt.npid_starts > 0 ? l->opt.pid_starts : NULL;
	set->follow_pid = l->opt.follow_pid;
	offcpu_settings_from_options(&l->opt, &set->offcpu);
	/* Each CPU's share of the budget per 100 ms guard window; 100% means no guard. */
	if (l->opt.cpu_budget_pct < 100.0)
		set->budget_ns_per_window = (__u64)(l->opt.cpu_budget_pct / 100.0 * 100e6);
	if (l->opt.pin_dir != NULL) {
		rc = bpf_pins_prepare(l->opt.pin_dir, err, sizeof(err));
		if (rc < 0)
			fatal(LOWPROF_EXIT_FAILURE, "%s", err);
		if (rc > 0)
			log_info("removed the pins of %d lowprof run(s) that were killed", rc);
		set->pin_dir = l->opt.pin_dir;
	}
	cpu0 = loader_cpu_ns();
	rc = bpf_session_start(&l->sess, set, err, sizeof(err));
	l->bpf_load_ns = loader_cpu_ns() - cpu0;
	loader_audit_session_start(&l->sess, set->pids, set->pid_starts, set->npids, rc, err);
	if (rc != 0)
		fatal(rc == -EPERM ? LOWPROF_EXIT_CONFIG : LOWPROF_EXIT_FAILURE, "%s", err);
	if (l->sess.adopted_links > 0)
		log_info("adopted the pinned session of the previous loader (%u CPU%s): sampling never "
			 "stopped", l->sess.adopted_links, l->sess.adopted_links == 1 ? "" : "s");
}

int loader_start(struct loader *l, char *err, size_t errlen)
{
	struct bpf_session_settings set;
	int rc;

	/* Until their start functions run: the stop path closes them (not fd 0). */
	l->cs.mon.fd = -1;
	l->sb.mon.fd = -1;
	host_load_source_init(&l->host, "/proc/stat", NULL);
	signal(SIGPIPE, SIG_IGN);
	l->agent_root = getppid();
	l->control_interval_ns = (uint64_t)(l->opt.control_interval_s * 1e9);
	l->sfd = event_signalfd();
	l->tfd = event_timerfd(l->opt.drain_ms);
	l->next_stats_ns = mono_ns() + (uint64_t)l->opt.stats_ms * NSEC_PER_MSEC;
	if (l->sfd < 0 || l->tfd < 0)
		fatal(LOWPROF_EXIT_FAILURE, "signalfd/timerfd: %s",
		      strerror(-(l->sfd < 0 ? l->sfd : l->tfd)));
	l->files = file_registry_new(LOADER_FILES_MAX);
	if (l->files == NULL)
		fatal(LOWPROF_EXIT_FAILURE, "out of memory");
	/* The -p targets held before their pids go into the map (target_pids.h). */
	target_pids_open(&l->targets, l->opt.pids, l->opt.npid_starts > 0 ? l->opt.pid_starts : NULL,
			 l->opt.npids);
	l->targets.command = l->opt.follow_pid;
	loader_session_start(l, &set);
	/* Those gone already out of the map now: it may be a pinned one, adopted. */
	(void)target_pids_check(&l->targets, &l->sess);
	rc = drain_init(&l->dr, bpf_session_ringbuf_fd(&l->sess), LOWPROF_FD_SHM, LOWPROF_FD_EVENT, err,
			errlen);
	if (rc != 0)
		return rc;
	l->draining = true;
	file_tables_start(&l->pt, &l->sess, l->files, l->opt.pids, l->opt.npids);
	loader_control_start(l);
	loader_symbols_start(l);
	log_info("sampling %zu CPU%s at %u Hz (ring buffer %u KiB, guard %llu ns per 100 ms per CPU%s)",
		 l->sess.events.count, l->sess.events.count == 1 ? "" : "s", l->opt.frequency_hz, l->opt.ringbuf_kb,
		 (unsigned long long)set.budget_ns_per_window, l->opt.no_throttle ? ", --no-throttle" : "");
	notify_ready();
	return 0;
}

/* woken: the BPF program woke us (a burst, or samples piling up while we
 * rest): that ends a quiet or steady interval. A trickle drained at a quiet
 * interval's end does not (throttle_quiet counts it), nor the first few a
 * new process's first sample woke us for while we rest (less than the
 * rest's wake bytes waiting): the drain tells the exporter of it, and the
 * host is still quiet. Nor, with --no-throttle, any wake in a steady
 * interval: there is no decision to hurry, the drain was the work. */
static void loader_drain(struct loader *l, bool woken)
{
	uint64_t before = l->dr.drained_bytes, new_pids = l->dr.new_pids;
	int rc = drain_run(&l->dr);

	if (rc < 0)
		log_warn("ring_buffer__consume: %s", strerror(-rc));
	if (rc > 0 && woken && l->quiet && l->dr.drained_bytes - before < SETTINGS_RINGBUF_REST_WAKE_BYTES &&
	    l->span_wakes < LOADER_SPAN_WAKES) {
		l->span_wakes++;
		return;
	}
	if (rc > 0 && woken && loader_steady_fixed(l)) {
		/* Less than the ring's wake: the program's new-process wake. The
		 * ring's own wakes are the drain keeping up, not counted. */
		if (l->dr.drained_bytes - before < l->sess.ring_wake_bytes)
			loader_steady_newcomer_wake(l, l->dr.new_pids != new_pids);
		return;
	}
	/* Something is sampled again: the controller hears of it within an interval. */
	if (rc > 0 && woken)
		loader_span_end(l);
}

/*
 * Drain, the unwind tables, the control interval, the statistics: whatever is
 * due, or due within a quarter of its period (one wake-up does the work of
 * deadlines that fall close together). asked: the controller's stats request
 * came in this pass: the control interval ends now (see loader_arm_timer).
 */
static void loader_tick(struct loader *l, bool asked)
{
	uint64_t now, stats_period = (uint64_t)l->opt.stats_ms * NSEC_PER_MSEC;
	bool ticked;

	loader_drain(l, false);
	file_tables_tick(&l->pt);
	(void)target_pids_check(&l->targets, &l->sess);
	now = mono_ns();
	/* Not right after an entry the timer made: no interval of a few milliseconds. */
	if (asked && now - l->tl_base.monotonic_ns >= l->control_interval_ns / 2)
		l->next_control_ns = now;
	ticked = loader_control_tick(l, now, l->control_interval_ns / 4, asked);
	if (ticked && !asked)
		l->control_driven = false;
	if (asked)
		l->control_driven = true;
	symbol_broker_tick(&l->sb, now);
	/* At a control tick the statistics go along if due within half their
	 * period, so that the two deadlines fall into step (one wake-up a second
	 * at the defaults, not two half a second apart); before a quiet or steady
	 * interval, always: its end is their next deadline. */
	if ((ticked && (l->quiet || l->steady)) ||
	    now + (ticked ? stats_period / 2 : stats_period / 4) >= l->next_stats_ns) {
		loader_publish_stats(l);
		l->next_stats_ns = now + stats_period;
	}
	/* The exporter's pass rides on the interval's: it reads the timeline
	 * entry and statistics now (and pings), not on a timer of its own. */
	if (ticked)
		l->dr.notify_pending = true;
}

/*
 * The next tick: as late as the work allows. The control interval and the
 * statistics have their deadlines; the ring is drained at least every idle
 * period (the BPF program wakes us sooner when it fills), or every quiet
 * interval when nothing is sampled, and at least once per liveness ping;
 * DWARF tables that have work (new processes, exec/exit events) want the
 * fast period.
 *
 * A controller's stats request is the interval's tick (loader_tick's asked):
 * the control and statistics deadlines then stand by half an interval past
 * the next request due, so that it is not followed a few milliseconds later
 * by a tick of our own. A controller that stops asking (the push, controller
 * subscribed, makes requests rare) hands the interval back to the timer.
 */
static void loader_arm_timer(struct loader *l)
{
	uint64_t now = mono_ns(), period_ms = l->opt.drain_ms, next, ctl, stats;
	uint64_t standby = l->control_driven ? l->control_interval_ns / 2 : 0;
	int rc;

	if (!l->pt.busy && period_ms < SETTINGS_IDLE_DRAIN_MS)
		period_ms = SETTINGS_IDLE_DRAIN_MS;
	/* A quiet or steady interval: nothing in the ring to hurry for (a few
	 * samples waiting wake us while we rest, a quarter-full ring at other
	 * times, before any is lost); the statistics wait for its end. */
	if ((l->quiet || l->steady) && period_ms < l->span_ns / NSEC_PER_MSEC)
		period_ms = l->span_ns / NSEC_PER_MSEC;
	/* Our passes carry the liveness pings: never further apart than they. */
	if (period_ms > notify_ping_interval_ms())
		period_ms = notify_ping_interval_ms();
	/* The drain period itself never stands by: it bounds the gap between
	 * pings (whatever the control interval) and the ring's age. */
	next = now + period_ms * NSEC_PER_MSEC;
	ctl = l->next_control_ns + standby;
	stats = l->quiet || l->steady ? UINT64_MAX : l->next_stats_ns + standby;
	if (ctl > now && ctl < next)
		next = ctl;
	if (stats > now && stats < next)
		next = stats;
	rc = event_timer_at(l->tfd, next);
	if (rc < 0)
		log_warn("arming the drain timer: %s", strerror(-rc));
}

int loader_run(struct loader *l)
{
	struct pollfd pfd[8] = {{.fd = l->sfd, .events = POLLIN}, {.fd = l->tfd, .events = POLLIN},
				{.events = POLLIN}, {.events = POLLIN},
				{.fd = drain_wakeup_fd(&l->dr), .events = POLLIN},
				{.fd = file_tables_wakeup_fd(&l->pt), .events = POLLIN},
				{.events = POLLIN}, {.events = POLLIN}};
	uint64_t stats_served;
	bool asked, was_quiet, was_long;

	loader_arm_timer(l);
	for (;;) {
		/* A negative fd is ignored by poll: the controller (or exporter) is gone. */
		pfd[2].fd = l->cs.mon.fd;
		pfd[2].revents = 0;
		pfd[3].fd = l->sb.mon.fd;
		pfd[3].revents = 0;
		/* -p: a target's exit (-1 once none is left). */
		pfd[6].fd = target_pids_wakeup_fd(&l->targets);
		pfd[6].revents = 0;
		pfd[7].fd = l->uevent_fd;
		pfd[7].revents = 0;
		if (event_poll(pfd, 8, -1) < 0)
			return LOWPROF_EXIT_FAILURE;
		l->pass++;
		was_quiet = l->quiet;
		was_long = l->quiet || l->steady;
		/* Liveness for the supervisor: the drain timer wakes us at least
		 * once per ping interval (loader_arm_timer). */
		notify_ping();
		if ((pfd[0].revents & POLLIN) && event_signal_stop(l->sfd))
			return LOWPROF_EXIT_OK;
		stats_served = l->cs.stats_served;
		if (pfd[2].revents != 0)
			control_server_handle(&l->cs, mono_ns());
		asked = l->cs.stats_served != stats_served;
		/* A CPU's event gone with it, or a new one for it. */
		if (pfd[7].revents != 0)
			loader_cpus_changed(l);
		/* Its pid out of the map before the kernel can give it to another. */
		if (pfd[6].revents != 0)
			(void)target_pids_check(&l->targets, &l->sess);
		/* Before the drain tick: the exporter waits for each reply. */
		if (pfd[3].revents != 0)
			symbol_broker_handle(&l->sb, mono_ns());
		/* The ring passed its watermark: drain now, the timer stays as armed. */
		if ((pfd[4].revents & POLLIN) && !asked && !(pfd[1].revents & POLLIN))
			loader_drain(l, true);
		/* The exporter is told of samples only (drain_run): on a host
		 * where nothing is sampled it does not wake with our passes. */
		if (pfd[1].revents & POLLIN)
			event_timer_ack(l->tfd);
		/* A new process to build tables for: tick now, and at the fast period after. */
		if ((pfd[1].revents & POLLIN) || (pfd[5].revents & POLLIN) || asked) {
			loader_tick(l, asked);
			loader_arm_timer(l);
		} else if (was_long && !l->quiet && !l->steady) {
			/* A new throttle or a burst ended the long interval: its
			 * end is one interval after it began, now if that has
			 * passed (the tick), else the timer's. */
			loader_tick(l, false);
			loader_arm_timer(l);
		}
		/* Resting, or a rest just ended: told at once (drain.h). */
		drain_flush_notify(&l->dr, !l->quiet && !was_quiet);
	}
}

/* What following a command's processes did (loader/follow.h): said at the
 * end, and as a warning when the table of targets was full. */
static void loader_log_followed(struct loader *l)
{
	struct lowprof_follow_stats st;

	if (l->opt.follow_pid == 0 || l->sess.skel == NULL ||
	    follow_read_stats(l->sess.skel, l->sess.ncpus_possible, &st) != 0)
		return;
	log_debug("the command's processes: %llu new ones profiled, %llu exited",
		  (unsigned long long)st.followed, (unsigned long long)st.left);
	if (st.not_followed > 0)
		log_warn("%llu of the command's new processes were not profiled: %d of them and the "
			 "-p targets were alive at once, the most lowprof follows",
			 (unsigned long long)st.not_followed, LOWPROF_TARGET_PIDS_MAX);
}

void loader_stop(struct loader *l, bool clean)
{
	/* A stop before the drain started is no clean stop: the pins stay. */
	clean = clean && l->draining;
	if (clean) {
		/* Stop sampling, then hand over everything still in the BPF ring. */
		perf_events_disable(&l->sess.events);
		drain_run(&l->dr);
		l->pass++; /* the final counters, not the last pass's */
		loader_control_final(l);
		loader_publish_stats(l);
		/* The last records: the exporter reads them now, not at its next pass. */
		l->dr.notify_pending = true;
		drain_flush_notify(&l->dr, false);
		loader_symbols_grace(l);
	}
	if (l->draining) {
		file_tables_fini(&l->pt);
		drain_fini(&l->dr);
		l->draining = false;
	}
	control_server_close(&l->cs);
	symbol_broker_close(&l->sb);
	seen_pids_fini(&l->seen);
	target_pids_close(&l->targets);
	file_registry_free(l->files);
	l->files = NULL;
	host_load_source_close(&l->host);
	agent_cpu_fini(&l->agent);
	loader_log_followed(l);
	/* Only a clean stop (SIGTERM from the supervisor) unpins: after a crash the
	 * pinned session keeps sampling for the next loader to adopt. */
	loader_audit_session_stop(&l->sess, clean);
	bpf_session_stop(&l->sess, clean);
	audit_log_close();
}
