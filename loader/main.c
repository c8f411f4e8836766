/*
 * lowprof-loader: the privileged component. It alone owns the BPF program,
 * its maps and the perf events; it drains the BPF ring buffer on a timer into
 * the shared-memory ring the exporter reads.
 *
 * It also answers the controller on the control socket (control_server.c),
 * applies the throttle it asks for, falls back to the critical tier by itself
 * when the controller goes silent, and forwards one timeline entry per
 * control interval to the exporter.
 *
 * It is the exporter's broker too (symbol_broker.c): the exporter runs
 * without privileges and asks for /proc/PID/maps, mapped binaries, debug
 * files, kallsyms and process details, which the loader checks and opens.
 *
 * Inherited fds (ipc/lowprof_fds.h): NOTIFY, SHM, EVENT, CONTROL when a
 * controller runs (without it, the settings stay fixed), and SYMBOLS when an
 * exporter needs the broker (without it, none runs).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/notify.h"
#include "measure/agent_cpu.h"
#include "measure/host_load.h"
#include "ipc/loader_stats.h"
#include "ipc/lowprof_fds.h"
#include "loader/bpf_pins.h"
#include "loader/bpf_session.h"
#include "loader/control_server.h"
#include "loader/drain.h"
#include "loader/loader_options.h"
#include "loader/proc_tracker.h"
#include "loader/symbol_broker.h"
#include "loader/audit_log.h"
#include "loader/loader_audit.h"
#include "seccomp/sandbox.h"

/* At a clean stop, the symbol socket is served until it is quiet this long, at most the max. */
#define LOADER_SYMBOLS_QUIET_MS 300
#define LOADER_SYMBOLS_GRACE_MAX_NS (2ULL * 1000000000ULL)

static int loader_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's debug output is the verifier log and friends: only with -v. */
	if (level == LIBBPF_DEBUG && log_get_level() < LOG_LEVEL_DEBUG)
		return 0;
	/* libbpf's messages already start with "libbpf: ". */
	fputs("lowprof-loader: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static uint64_t loader_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int loader_timerfd(unsigned ms)
{
	struct itimerspec its;
	int fd;

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return -1;
	memset(&its, 0, sizeof(its));
	its.it_interval.tv_sec = ms / 1000;
	its.it_interval.tv_nsec = (long)(ms % 1000) * 1000000L;
	its.it_value = its.it_interval;
	if (timerfd_settime(fd, 0, &its, NULL) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int loader_signalfd(void)
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

/* Everything the main loop and the control callbacks share. */
struct loader {
	struct loader_options opt;
	struct bpf_session sess;
	struct drain dr;
	struct proc_tracker pt;       /* DWARF unwind tables (--unwind) */
	struct control_server cs;
	struct symbol_broker sb;      /* the exporter's symbol sources; sb.fd -1: none */
	pid_t agent_root;             /* the supervisor: lowprof's processes are it and its children */
	struct host_stat host_prev;   /* /proc/stat at the previous timeline entry */
	bool have_host_prev;
	struct control_counters tl_base; /* counters at the previous timeline entry */
	uint64_t next_control_ns;
	uint64_t control_interval_ns;
};

static int loader_apply(void *arg, const struct throttle *t, char *err, size_t errlen)
{
	struct loader *l = arg;
	struct throttle bt, thr_before;
	struct lowprof_config cfg_before;
	struct audit_actor who;
	int rc;

	bt.frequency_hz = t->frequency_hz;
	bt.unwind_mode = proc_tracker_unwind_mode(&l->pt, t->unwind_mode);
	bt.max_depth = t->max_depth;
	bt.sample_divisor = t->sample_divisor;
	bt.paused = t->paused;
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
	return rc;
}

static int loader_counters(void *arg, struct control_counters *out)
{
	struct loader *l = arg;
	struct lowprof_cpu_stats sum;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = bpf_session_read_stats(&l->sess, &sum);
	if (rc != 0)
		return rc;
	out->monotonic_ns = loader_monotonic_ns();
	out->submitted = sum.submitted;
	out->reserve_failures = sum.reserve_failures;
	out->bpf_run_time_ns = sum.run_time_ns;
	out->bpf_run_count = sum.events;
	/* Unreadable (the supervisor gone): the agent's CPU reads as unchanged. */
	if (agent_cpu_read("/proc", l->agent_root, &out->agent_cpu_ns) != 0)
		out->agent_cpu_ns = l->tl_base.agent_cpu_ns;
	out->ringbuf_used_bytes = bpf_session_ringbuf_used(&l->sess);
	out->ringbuf_size_bytes = (uint64_t)l->opt.ringbuf_kb * 1024u;
	out->online_cpus = (uint32_t)l->sess.events.count;
	return 0;
}

/* Whole-host CPU since the previous entry, in hundredths of a percent; -1 if unknown. */
static int loader_host_cpu(struct loader *l)
{
	struct host_stat cur;
	struct host_load load;
	char err[160];
	int centi = -1;

	if (host_load_read_stat("/proc/stat", &cur, err, sizeof(err)) != 0)
		return -1;
	if (l->have_host_prev &&
	    host_load_compute(&l->host_prev, &cur, &load, err, sizeof(err)) == 0)
		centi = (int)(load.host_cpu_pct * 100.0 + 0.5);
	if (l->have_host_prev)
		host_load_stat_free(&l->host_prev);
	l->host_prev = cur;
	l->have_host_prev = true;
	if (centi > 10000)
		centi = 10000;
	return centi;
}

/* One timeline entry for the control interval that just ended. */
static void loader_timeline_entry(struct loader *l)
{
	struct lowprof_timeline_entry e;
	struct control_counters now;
	const struct control_counters *b = &l->tl_base;
	const struct throttle *t = &l->cs.applied;
	int host;

	host = loader_host_cpu(l);
	if (loader_counters(l, &now) != 0)
		return;
	memset(&e, 0, sizeof(e));
	e.version = LOWPROF_TIMELINE_VERSION;
	e.monotonic_ns = now.monotonic_ns;
	e.interval_ns = now.monotonic_ns > b->monotonic_ns ? now.monotonic_ns - b->monotonic_ns : 1;
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
#define LOADER_DELTA(f) (now.f >= b->f ? now.f - b->f : 0)
	e.events = LOADER_DELTA(bpf_run_count);
	e.submitted = LOADER_DELTA(submitted);
	e.reserve_failures = LOADER_DELTA(reserve_failures);
	e.bpf_run_time_ns = LOADER_DELTA(bpf_run_time_ns);
	e.agent_cpu_ns = LOADER_DELTA(agent_cpu_ns);
#undef LOADER_DELTA
	l->tl_base = now;
	if (drain_put_record(&l->dr, LOWPROF_REC_TIMELINE, &e, sizeof(e)) != 0)
		log_warn_f("shared ring full: timeline entry not delivered");
}

/* The settings in force before any controller speaks, and the fail-safe:
 * the default tier table with the user's -F and --max-depth as the ceiling. */
static void loader_tier_throttle(const struct loader_options *opt, enum throttle_tier tier,
				 struct throttle *out)
{
	struct throttle_tier_settings tiers[THROTTLE_TIER_COUNT];

	throttle_tiers_default(tiers, opt->frequency_hz);
	/* As in the controller: --max-depth is the healthy tier's depth. */
	tiers[THROTTLE_TIER_HEALTHY].max_depth = opt->max_depth;
	throttle_for_tier(tiers, tier, out);
}

/* fd 6 is the control socket only if the supervisor passed one. */
static int loader_control_fd(void)
{
	struct stat st;

	if (fstat(LOWPROF_FD_CONTROL, &st) != 0 || !S_ISSOCK(st.st_mode))
		return -1;
	/* Not inherited by anything the loader might start. */
	fcntl(LOWPROF_FD_CONTROL, F_SETFD, FD_CLOEXEC);
	return LOWPROF_FD_CONTROL;
}

static void loader_control_start(struct loader *l)
{
	static const struct control_ops ops = {loader_apply, loader_counters, NULL};
	struct control_server_config cfg;
	struct control_ops o = ops;
	struct throttle initial;
	int fd = loader_control_fd();

	memset(&cfg, 0, sizeof(cfg));
	cfg.limits.max_frequency_hz = l->opt.frequency_hz;
	cfg.limits.max_divisor = 64;
	cfg.max_depth = l->opt.max_depth;
	cfg.interval_ns = l->control_interval_ns;
	cfg.fixed = l->opt.no_throttle;
	/* The monitor's checks: only the supervisor's controller child, at a bounded rate. */
	cfg.check_peer = l->opt.controller_uid >= 0;
	cfg.expected_uid = (uid_t)l->opt.controller_uid;
	cfg.expected_ppid = getppid();
	cfg.rate_per_s = CONTROL_RATE_PER_S;
	cfg.rate_burst = CONTROL_RATE_BURST;
	loader_tier_throttle(&l->opt, THROTTLE_TIER_CRITICAL, &cfg.failsafe);
	initial = l->sess.throttle;
	initial.tier = THROTTLE_TIER_HEALTHY;
	o.arg = l;
	control_server_init(&l->cs, fd, &cfg, &o, &initial, loader_monotonic_ns());
	if (fd < 0)
		log_info("no control socket: fixed settings, no fail-safe");
}

/* fd 10 is the symbol socket only if the supervisor passed one (a SEQPACKET socket). */
static int loader_symbols_fd(void)
{
	struct stat st;
	socklen_t len = sizeof(int);
	int type = 0;

	if (fstat(LOWPROF_FD_SYMBOLS, &st) != 0 || !S_ISSOCK(st.st_mode))
		return -1;
	if (getsockopt(LOWPROF_FD_SYMBOLS, SOL_SOCKET, SO_TYPE, &type, &len) != 0 ||
	    type != SOCK_SEQPACKET) {
		log_warn("fd %d is not a SOCK_SEQPACKET socket: no symbol broker", LOWPROF_FD_SYMBOLS);
		return -1;
	}
	return LOWPROF_FD_SYMBOLS;
}

static void loader_symbols_start(struct loader *l)
{
	struct symbol_broker_config cfg;
	int fd = loader_symbols_fd();

	l->sb.mon.fd = -1;
	if (fd < 0) {
		log_info("no symbol socket: no symbol broker for the exporter");
		return;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.proc_root = "/proc";
	cfg.debug_root = l->opt.debug_dir;
	/* The monitor's checks: only the exporter's uid, at a bounded rate. */
	cfg.check_peer = l->opt.exporter_uid >= 0;
	cfg.exporter_uid = (uid_t)l->opt.exporter_uid;
	cfg.rate_per_s = SYMBOL_BROKER_RATE_PER_S;
	cfg.burst = SYMBOL_BROKER_RATE_BURST;
	if (symbol_broker_init(&l->sb, fd, &cfg, loader_monotonic_ns()) != 0) {
		log_warn("symbol broker: bad configuration: no symbol broker");
		close(fd);
	}
}

/* Publish the cumulative counters into the shared ring for the exporter. */
static void loader_publish_stats(struct bpf_session *sess, struct drain *dr,
				 const struct loader_options *opt)
{
	/* The frequency in force, not the ceiling: it changes with the throttle. */
	struct lowprof_loader_stats st;
	struct lowprof_cpu_stats sum;

	if (bpf_session_read_stats(sess, &sum) != 0) {
		log_warn_f("reading BPF counters: %s", strerror(errno));
		return;
	}
	memset(&st, 0, sizeof(st));
	st.version = LOWPROF_LOADER_STATS_VERSION;
	st.online_cpus = (__u32)sess->events.count;
	st.monotonic_ns = loader_monotonic_ns();
	st.events = sum.events;
	st.submitted = sum.submitted;
	st.reserve_failures = sum.reserve_failures;
	st.divisor_skipped = sum.divisor_skipped;
	st.filtered = sum.filtered;
	st.idle = sum.idle;
	st.guard_skipped = sum.guard_skipped;
	st.bpf_run_time_ns = sum.run_time_ns;
	st.drained = dr->drained;
	st.shm_dropped = dr->shm_dropped;
	st.ringbuf_bytes = (__u64)opt->ringbuf_kb * 1024u;
	st.frequency_hz = sess->throttle.frequency_hz;
	if (drain_put_record(dr, LOWPROF_REC_LOADER_STATS, &st, sizeof(st)) != 0)
		log_warn_f("shared ring full: statistics record not delivered");
}

/* One line on the inherited notification fd (s6 style); never blocks. */
static void loader_notify(const char *line)
{
	if (write(LOWPROF_FD_NOTIFY, line, strlen(line)) < 0 && errno != EBADF && errno != EAGAIN)
		log_warn("notification to the supervisor failed: %s", strerror(errno));
}

static void loader_notify_ready(void)
{
	int flags = fcntl(LOWPROF_FD_NOTIFY, F_GETFL);

	/* A supervisor that stops reading must not stall sampling: drop lines instead. */
	if (flags >= 0)
		fcntl(LOWPROF_FD_NOTIFY, F_SETFL, flags | O_NONBLOCK);
	loader_notify("ready\n");
}

/* The throttle state for `lowprof status`. */
static void loader_notify_state(const struct loader *l)
{
	const struct throttle *t = &l->cs.applied;
	char line[192];

	snprintf(line, sizeof(line),
		 "state tier=%s frequency_hz=%u unwind=%s max_depth=%u sample_divisor=%u paused=%d failsafe=%d\n",
		 throttle_tier_name(t->tier), t->frequency_hz, throttle_unwind_name(t->unwind_mode),
		 t->max_depth, t->sample_divisor,
		 t->paused ? 1 : 0, l->cs.failsafe ? 1 : 0);
	loader_notify(line);
}

/* Once per control interval: the fail-safe clock, then the timeline entry. */
static void loader_control_tick(struct loader *l, uint64_t now)
{
	if (now < l->next_control_ns)
		return;
	control_server_tick(&l->cs, now);
	loader_timeline_entry(l);
	loader_notify_state(l);
	l->next_control_ns += l->control_interval_ns;
	/* After a stall, do not emit a burst of catch-up entries. */
	if (l->next_control_ns <= now)
		l->next_control_ns = now + l->control_interval_ns;
}

/*
 * First thing, before any input: keep only the capabilities the loader needs
 * (docs/SECURITY.md; a missing one is a configuration error naming it), take
 * the audit log fd, then install the seccomp filter.
 */
static void loader_sandbox(bool seccomp_log)
{
	/*
	 * In every unwind mode, since the loader is also the exporter's broker:
	 *  - CAP_BPF: maps, programs, BTF;
	 *  - CAP_PERFMON: perf events of every CPU, kernel stacks;
	 *  - CAP_SYS_PTRACE: the ptrace-mode read check of every process's
	 *    /proc/PID/maps, /proc/PID/root (binaries, for DWARF tables and for
	 *    the exporter) and /proc/PID/exe;
	 *  - CAP_DAC_READ_SEARCH: binaries and debug files their owners keep
	 *    unreadable to others (read-only bypass, no write);
	 *  - CAP_SYSLOG: real addresses in /proc/kallsyms, decided by the opener's
	 *    credentials when the broker opens it for the exporter.
	 */
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH,
					   CAP_SYSLOG};
	struct stat st;

	sandbox_limit_caps("loader", caps, sizeof(caps) / sizeof(caps[0]));
	if (fstat(LOWPROF_FD_AUDIT, &st) == 0 && S_ISREG(st.st_mode)) {
		fcntl(LOWPROF_FD_AUDIT, F_SETFD, FD_CLOEXEC);
		audit_log_open(LOWPROF_FD_AUDIT);
	}
	sandbox_enter("loader", seccomp_log);
}

/*
 * After the last drain the exporter still symbolizes what it has not read yet,
 * and the supervisor stops it only once we are gone: keep answering it until
 * it has been quiet for a moment (bounded, the stop must not hang on it).
 */
static void loader_symbols_grace(struct loader *l)
{
	uint64_t end = loader_monotonic_ns() + LOADER_SYMBOLS_GRACE_MAX_NS;
	struct pollfd p;

	while (l->sb.mon.fd >= 0 && loader_monotonic_ns() < end) {
		p.fd = l->sb.mon.fd;
		p.events = POLLIN;
		p.revents = 0;
		if (poll(&p, 1, LOADER_SYMBOLS_QUIET_MS) <= 0)
			break;
		symbol_broker_handle(&l->sb, loader_monotonic_ns());
	}
}

int main(int argc, char **argv)
{
	static struct loader l; /* large (reader buffers): not on the stack */
	struct bpf_session_settings set;
	struct throttle healthy;
	struct pollfd pfd[4];
	unsigned ticks_per_stats, ticks = 0;
	char err[512];
	int rc, sfd, tfd, status = LOWPROF_EXIT_FAILURE;
	bool running = true, clean_stop = false, seccomp_log;

	log_init("lowprof-loader", LOG_LEVEL_INFO);
	seccomp_log = sandbox_take_seccomp_log(&argc, argv);
	rc = loader_options_parse(argc, argv, &l.opt, err, sizeof(err));
	if (rc != 0)
		fatal(rc, "%s", err);
	loader_sandbox(seccomp_log);
	/* Until their start functions run: the cleanup path closes them (not fd 0). */
	l.cs.mon.fd = -1;
	l.sb.mon.fd = -1;
	libbpf_set_print(loader_libbpf_print);
	signal(SIGPIPE, SIG_IGN);
	l.agent_root = getppid();
	l.control_interval_ns = (uint64_t)(l.opt.control_interval_s * 1e9);

	sfd = loader_signalfd();
	tfd = loader_timerfd(l.opt.drain_ms);
	if (sfd < 0 || tfd < 0)
		fatal(LOWPROF_EXIT_FAILURE, "signalfd/timerfd: %s", strerror(errno));

	/* Start in the healthy tier: what the controller asks for on a calm host. */
	loader_tier_throttle(&l.opt, THROTTLE_TIER_HEALTHY, &healthy);
	memset(&set, 0, sizeof(set));
	set.frequency_hz = healthy.frequency_hz;
	set.ringbuf_kb = l.opt.ringbuf_kb;
	set.max_depth = healthy.max_depth;
	proc_tracker_configure(&l.pt, l.opt.unwind);
	set.unwind_mode = proc_tracker_unwind_mode(&l.pt, healthy.unwind_mode);
	set.unwind_table_mb = l.opt.unwind == LOADER_UNWIND_FP ? 0 : l.opt.unwind_table_mb;
	set.pids = l.opt.pids;
	set.npids = l.opt.npids;
	/* Each CPU's share of the budget per 100 ms guard window; 100% means no guard. */
	if (l.opt.cpu_budget_pct < 100.0)
		set.budget_ns_per_window = (__u64)(l.opt.cpu_budget_pct / 100.0 * 100e6);
	if (l.opt.pin_dir != NULL) {
		rc = bpf_pins_prepare(l.opt.pin_dir, err, sizeof(err));
		if (rc < 0)
			fatal(LOWPROF_EXIT_FAILURE, "%s", err);
		if (rc > 0)
			log_info("removed the pins of %d lowprof run(s) that were killed", rc);
		set.pin_dir = l.opt.pin_dir;
	}
	rc = bpf_session_start(&l.sess, &set, err, sizeof(err));
	loader_audit_session_start(&l.sess, set.pids, set.npids, rc, err);
	if (rc != 0)
		fatal(rc == -EPERM ? LOWPROF_EXIT_CONFIG : LOWPROF_EXIT_FAILURE, "%s", err);
	if (l.sess.adopted_links > 0)
		log_info("adopted the pinned session of the previous loader (%u CPUs): sampling never stopped",
			 l.sess.adopted_links);
	rc = drain_init(&l.dr, bpf_session_ringbuf_fd(&l.sess), LOWPROF_FD_SHM, LOWPROF_FD_EVENT, err,
			sizeof(err));
	if (rc != 0) {
		log_error("%s", err);
		goto out_session;
	}
	proc_tracker_start(&l.pt, &l.sess);
	loader_control_start(&l);
	loader_symbols_start(&l);
	loader_counters(&l, &l.tl_base);
	loader_host_cpu(&l);
	l.next_control_ns = l.tl_base.monotonic_ns + l.control_interval_ns;
	log_info("sampling %zu CPUs at %u Hz (ring buffer %u KiB, guard %llu ns per 100 ms per CPU%s)",
		 l.sess.events.count, l.opt.frequency_hz, l.opt.ringbuf_kb,
		 (unsigned long long)set.budget_ns_per_window, l.opt.no_throttle ? ", --no-throttle" : "");
	loader_notify_ready();

	ticks_per_stats = l.opt.stats_ms / l.opt.drain_ms;
	if (ticks_per_stats == 0)
		ticks_per_stats = 1;
	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = tfd;
	pfd[1].events = POLLIN;
	pfd[2].events = POLLIN;
	pfd[3].events = POLLIN;
	while (running) {
		/* A negative fd is ignored by poll: the controller (or exporter) is gone. */
		pfd[2].fd = l.cs.mon.fd;
		pfd[2].revents = 0;
		pfd[3].fd = l.sb.mon.fd;
		pfd[3].revents = 0;
		if (poll(pfd, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			goto out_drain;
		}
		/* Liveness for the supervisor: the drain timer wakes us 10 times a second. */
		notify_ping();
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGHUP)
				running = false;
		}
		if (pfd[2].revents != 0)
			control_server_handle(&l.cs, loader_monotonic_ns());
		/* Before the drain tick: the exporter waits for each reply. */
		if (pfd[3].revents != 0)
			symbol_broker_handle(&l.sb, loader_monotonic_ns());
		if (pfd[1].revents & POLLIN) {
			uint64_t expirations;

			if (read(tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
				log_warn("timerfd read: %s", strerror(errno));
			rc = drain_run(&l.dr);
			if (rc < 0)
				log_warn("ring_buffer__consume: %s", strerror(-rc));
			proc_tracker_tick(&l.pt);
			loader_control_tick(&l, loader_monotonic_ns());
			symbol_broker_tick(&l.sb, loader_monotonic_ns());
			if (++ticks % ticks_per_stats == 0) {
				loader_publish_stats(&l.sess, &l.dr, &l.opt);
				/* Liveness: the supervisor expects a line every second. */
				loader_notify("ping\n");
			}
		}
	}
	/* Stop sampling, then hand over everything still in the BPF ring. */
	perf_events_disable(&l.sess.events);
	drain_run(&l.dr);
	loader_publish_stats(&l.sess, &l.dr, &l.opt);
	loader_symbols_grace(&l);
	status = LOWPROF_EXIT_OK;
	clean_stop = true;
out_drain:
	proc_tracker_fini(&l.pt);
	drain_fini(&l.dr);
out_session:
	control_server_close(&l.cs);
	symbol_broker_close(&l.sb);
	if (l.have_host_prev)
		host_load_stat_free(&l.host_prev);
	/* Only a clean stop (SIGTERM from the supervisor) unpins: after a crash the
	 * pinned session keeps sampling for the next loader to adopt. */
	loader_audit_session_stop(&l.sess, clean_stop);
	bpf_session_stop(&l.sess, clean_stop);
	audit_log_close();
	return status;
}
