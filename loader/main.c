/*
 * lowprof-loader: the privileged component. It alone owns the BPF program,
 * its maps and the perf events; it drains the BPF ring buffer on a timer into
 * the shared-memory ring the exporter reads.
 *
 * Inherited fds (ipc/lowprof_fds.h): NOTIFY, SHM, EVENT.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "ipc/loader_stats.h"
#include "ipc/lowprof_fds.h"
#include "loader/bpf_session.h"
#include "loader/drain.h"
#include "loader/loader_options.h"

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

/* Publish the cumulative counters into the shared ring for the exporter. */
static void loader_publish_stats(struct bpf_session *sess, struct drain *dr,
				 const struct loader_options *opt)
{
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
	st.frequency_hz = opt->frequency_hz;
	if (drain_put_record(dr, LOWPROF_REC_LOADER_STATS, &st, sizeof(st)) != 0)
		log_warn_f("shared ring full: statistics record not delivered");
}

static void loader_notify_ready(void)
{
	static const char line[] = "ready\n";

	/* s6-style readiness: one line on the inherited notification fd. */
	if (write(LOWPROF_FD_NOTIFY, line, sizeof(line) - 1) < 0 && errno != EBADF)
		log_warn("readiness notification failed: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct loader_options opt;
	struct bpf_session sess;
	struct bpf_session_settings set;
	struct drain dr;
	struct pollfd pfd[2];
	unsigned ticks_per_stats, ticks = 0;
	char err[512];
	int rc, sfd, tfd, status = LOWPROF_EXIT_FAILURE;
	bool running = true;

	log_init("lowprof-loader", LOG_LEVEL_INFO);
	rc = loader_options_parse(argc, argv, &opt, err, sizeof(err));
	if (rc != 0)
		fatal(rc, "%s", err);
	libbpf_set_print(loader_libbpf_print);
	signal(SIGPIPE, SIG_IGN);

	sfd = loader_signalfd();
	tfd = loader_timerfd(opt.drain_ms);
	if (sfd < 0 || tfd < 0)
		fatal(LOWPROF_EXIT_FAILURE, "signalfd/timerfd: %s", strerror(errno));

	memset(&set, 0, sizeof(set));
	set.frequency_hz = opt.frequency_hz;
	set.ringbuf_kb = opt.ringbuf_kb;
	set.max_depth = opt.max_depth;
	set.unwind_mode = LOWPROF_UNWIND_FP;
	set.pids = opt.pids;
	set.npids = opt.npids;
	rc = bpf_session_start(&sess, &set, err, sizeof(err));
	if (rc != 0)
		fatal(rc == -EPERM ? LOWPROF_EXIT_CONFIG : LOWPROF_EXIT_FAILURE, "%s", err);
	rc = drain_init(&dr, bpf_session_ringbuf_fd(&sess), LOWPROF_FD_SHM, LOWPROF_FD_EVENT, err,
			sizeof(err));
	if (rc != 0) {
		log_error("%s", err);
		goto out_session;
	}
	log_info("sampling %zu CPUs at %u Hz (ring buffer %u KiB)", sess.events.count,
		 opt.frequency_hz, opt.ringbuf_kb);
	loader_notify_ready();

	ticks_per_stats = opt.stats_ms / opt.drain_ms;
	if (ticks_per_stats == 0)
		ticks_per_stats = 1;
	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = tfd;
	pfd[1].events = POLLIN;
	while (running) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %s", strerror(errno));
			goto out_drain;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGHUP)
				running = false;
		}
		if (pfd[1].revents & POLLIN) {
			uint64_t expirations;

			if (read(tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
				log_warn("timerfd read: %s", strerror(errno));
			rc = drain_run(&dr);
			if (rc < 0)
				log_warn("ring_buffer__consume: %s", strerror(-rc));
			if (++ticks % ticks_per_stats == 0)
				loader_publish_stats(&sess, &dr, &opt);
		}
	}
	/* Stop sampling, then hand over everything still in the BPF ring. */
	perf_events_disable(&sess.events);
	drain_run(&dr);
	loader_publish_stats(&sess, &dr, &opt);
	status = LOWPROF_EXIT_OK;
out_drain:
	drain_fini(&dr);
out_session:
	bpf_session_stop(&sess);
	return status;
}
