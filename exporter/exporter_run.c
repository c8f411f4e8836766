/*
 * The exporter's life: start (sources, sandbox, symbolizer, restart state),
 * run (the poll loop: ring batches, file writes, OTLP, the supervisor's
 * messages) and stop (the last batches, the last files, a bounded OTLP flush).
 */
#include "exporter/exporter_run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/event_fds.h"
#include "common/log.h"
#include "common/mono_clock.h"
#include "exporter/formats/archive.h"
#include "exporter/formats/output_file.h"
#include "exporter/otlp/otlp_export.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_window.h"
#include "exporter/profile/timeline.h"
#include "exporter/symbols/proc_source.h"
#include "exporter/symbols/stack_cache.h"
#include "exporter/symbols/symbolizer.h"
#include "ipc/lowprof_fds.h"
#include "ipc/notify.h"
#include "ipc/shm_ring.h"
#include "seccomp/sandbox.h"
#include "settings/defaults.h"

/* The loader writes the eventfd when a pass of its drain published samples
 * (not for its statistics and timeline records alone, which wait for our next
 * pass), so the exporter wakes on data: at once for a new process, at most
 * 5 s apart for known ones (loader/drain.h); otherwise at the next file write, or
 * for its liveness ping (0.4 of the supervisor's timeout apart). After a
 * wake by the loader our own timeout waits a tenth longer than the ping
 * interval, so that the loader's next notice, if samples keep coming, is our
 * pass too; the ping is then a tenth late at most (notify_ping's own slack). */
#define POLL_LOADER_SLACK_DIV 10
/* An interval's end that would only let a trickle's interval go on
 * (exporter_interval_ends_going_on) waits for a wake that comes anyway (the
 * loader's notice, a ping interval apart at rest, or the ping, which bounds
 * the poll's timeout). Such an end writes no file. Without OTLP nothing
 * else waits on it either: it comes with the next wake, and the ends passed
 * by then are taken together (exporter_run). With OTLP, which is sent the
 * interval at its end, it waits up to this many tenths of an --interval, so
 * the next end keeps its time. An end that would roll is never late. */
#define POLL_REST_END_LATE_TENTHS 9
/* At exit, the delivery queue gets this long to drain. */
#define OTLP_FLUSH_MS 5000
/* The longest the exporter waits for the loader to answer one symbol request. */
#define SYMBOL_SOURCE_TIMEOUT_MS 1000
/* At start, how long kallsyms may wait for a loader that is starting too (well
 * inside the supervisor's readiness deadline). */
#define KALLSYMS_START_TIMEOUT_MS 10000

/* The loader over LOWPROF_FD_SYMBOLS (a wait for it ends when we are asked to
 * stop: stop_fd); without it (a bare exporter run by hand), /proc read
 * directly, which works only with the privilege to read it. */
static struct proc_source *exporter_proc_source(const struct exporter_options *o, int stop_fd)
{
	struct stat st;

	if (fstat(LOWPROF_FD_SYMBOLS, &st) == 0 && S_ISSOCK(st.st_mode))
		return proc_source_broker_new(LOWPROF_FD_SYMBOLS, SYMBOL_SOURCE_TIMEOUT_MS, stop_fd);
	log_warn("no symbol source socket (fd %d): reading /proc directly", LOWPROF_FD_SYMBOLS);
	return proc_source_direct_new("/proc", SETTINGS_DEBUG_DIR, o->kallsyms_path);
}

void exporter_start(struct exporter *ex, bool seccomp_log)
{
	char err[512];

	/* The budget is a share of the host's CPUs: counted before the sandbox
	 * hides /sys. */
	ex->ncpus = (unsigned)(sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1);
	ex->signal_fd = event_signalfd();
	if (ex->signal_fd < 0)
		fatal(LOWPROF_EXIT_FAILURE, "signalfd: %s", strerror(-ex->signal_fd));
	/* A loader that never answers (it could not start) holds no stop up. */
	ex->stop_fd = event_stop_signalfd();
	if (ex->stop_fd < 0)
		fatal(LOWPROF_EXIT_FAILURE, "signalfd: %s", strerror(-ex->stop_fd));
	ex->src = exporter_proc_source(&ex->opt, ex->stop_fd);
	if (ex->src == NULL)
		fatal(LOWPROF_EXIT_FAILURE, "out of memory");
	/* Before any sandbox: reads the TLS files and resolves the collector's name. */
	if (ex->opt.otlp_enabled) {
		ex->otlp = otlp_export_new(&ex->opt.otlp, ex->src, err, sizeof(err));
		if (ex->otlp == NULL)
			fatal(LOWPROF_EXIT_FAILURE, "otlp: %s", err);
		if (ex->opt.off_cpu && otlp_export_enable_offcpu(ex->otlp) != 0)
			fatal(LOWPROF_EXIT_FAILURE, "out of memory");
	}
	/* The supervisor starts us as --user with nothing; run by hand as root, drop
	 * every capability all the same. Then the filter, before any sample is read. */
	if (geteuid() == 0)
		sandbox_limit_caps("exporter", NULL, 0);
	/* Paths: the output directory alone, however a path is spelled (Landlock
	 * checks where it resolves; the filter below, only the dirfd). */
	sandbox_confine_to_dir("exporter", LOWPROF_FD_OUTDIR);
	sandbox_enter("exporter", seccomp_log);
	if (shm_ring_consumer_attach(&ex->ring, LOWPROF_FD_SHM, err, sizeof(err)) != 0)
		fatal(LOWPROF_EXIT_FAILURE, "shared ring: %s", err);
	ex->sym = symbolizer_new(ex->src, err, sizeof(err));
	if (ex->sym == NULL)
		fatal(LOWPROF_EXIT_FAILURE, "symbolizer: %s", err);
	/* Without it every sample is symbolized afresh: slower, not wrong. */
	ex->stacks = stack_cache_new(STACK_CACHE_DEFAULT_SLOTS);
	symbolizer_set_kernel_addresses(ex->sym, ex->opt.kernel_addresses);
	/* kallsyms before readiness: its parse (tens of ms) is start-up cost, not a
	 * stall in the middle of sampling. The loader starts alongside us. */
	proc_source_set_timeout(ex->src, KALLSYMS_START_TIMEOUT_MS);
	if (!symbolizer_load_kernel_symbols(ex->sym))
		log_warn("kallsyms not received from the loader at start: asked again at the first kernel frame");
	proc_source_set_timeout(ex->src, SYMBOL_SOURCE_TIMEOUT_MS);
	ex->timeline = timeline_new(TIMELINE_MAX_ENTRIES);
	if (ex->timeline == NULL)
		fatal(LOWPROF_EXIT_FAILURE, "out of memory");
	ex->start_mono_ns = mono_ns();
	ex->start_unix_ns = exporter_unix_ns();
	/* A restart of this run picks up the window its predecessor wrote. */
	exporter_restore(ex);
	exporter_window_start(ex);
	exporter_pace_init(ex);
	ex->merge_changes = EXPORTER_CHANGES_UNKNOWN;
	for (int i = 0; i < OUTPUT_PACE_N; i++)
		ex->file_changes[i] = EXPORTER_CHANGES_UNKNOWN;
	ex->interval_start_unix_ns = exporter_unix_ns();
	ex->next_write_ns = ex->start_mono_ns + (uint64_t)ex->opt.interval_s * NSEC_PER_SEC;
	ex->intervals_spanned = 1;
	notify_ready();
}

/* How long the loop may sleep: until the next interval end (at rest, up to
 * POLL_REST_END_LATE_TENTHS of an interval after it), the next slot with a file
 * still due, an OTLP transfer or retry due, or the liveness ping, whichever
 * is first. */
static int exporter_poll_timeout(const struct exporter *ex, bool loader_woke)
{
	uint64_t now_ns = mono_ns(), end_ns = ex->next_write_ns;
	unsigned going_on;
	int poll_ms = (int)notify_ping_interval_ms(), pace_ms;
	int timeout = poll_ms + (loader_woke ? poll_ms / POLL_LOADER_SLACK_DIV : 0);
	long otlp_ms;

	/* After a busy end the next is kept on time: the loader tells us of the
	 * samples of processes we know only 5 s apart (loader/drain.h), so the
	 * few read since the roll are no rate, and a busy interval taken for a
	 * trickle would be closed up to 5 s late. At rest its notices come with
	 * every pass, and what was read is the rate. */
	going_on = ex->last_end_busy ? 0 : exporter_interval_ends_going_on(ex);
	if (going_on > 0 && ex->otlp == NULL)
		end_ns += (uint64_t)going_on * ex->opt.interval_s * NSEC_PER_SEC; /* the roll */
	else if (going_on > 0)
		end_ns += (uint64_t)ex->opt.interval_s * NSEC_PER_SEC / 10 * POLL_REST_END_LATE_TENTHS;
	if (end_ns > now_ns && (end_ns - now_ns) / NSEC_PER_MSEC < (uint64_t)timeout)
		timeout = (int)((end_ns - now_ns) / NSEC_PER_MSEC) + 1;
	else if (end_ns <= now_ns)
		timeout = 0;
	pace_ms = exporter_pace_timeout_ms(ex);
	if (pace_ms >= 0 && pace_ms < timeout)
		timeout = pace_ms;
	otlp_ms = ex->otlp != NULL ? otlp_export_timeout_ms(ex->otlp) : -1;
	if (otlp_ms >= 0 && otlp_ms < timeout)
		timeout = (int)otlp_ms;
	return timeout;
}

/* The directory fsync the pass's renames left (output_file_defer_dir_sync). */
static void exporter_sync_dir(void)
{
	char err[256];

	if (output_file_sync_dirs(err, sizeof(err)) != 0)
		log_warn("%s", err);
}

void exporter_run(struct exporter *ex)
{
	struct pollfd pfd[3];
	uint64_t hint;
	bool running = true, hangup, loader_woke = false;

	pfd[0].fd = ex->signal_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = LOWPROF_FD_EVENT;
	pfd[1].events = POLLIN;
	/* The supervisor's messages (restarts, audit counts, pace) are read at
	 * each pass, not as they come: its audit counts follow every symbol
	 * request we make, and each would be a wake-up of its own. They are
	 * used at the file writes and the pacing, both at a pass; the timeout
	 * bounds how late. A hang-up (the supervisor gone) still wakes us. */
	pfd[2].fd = LOWPROF_FD_NOTIFY;
	pfd[2].events = 0;
	/* The files a pass replaces share one directory fsync, at its end. */
	output_file_defer_dir_sync(true);
	while (running) {
		/* The eventfd is only a hint: the timeout makes us look anyway. */
		pfd[1].revents = 0; /* left as it was by a poll cut short (EINTR) */
		if (poll(pfd, 3, exporter_poll_timeout(ex, loader_woke)) < 0 && errno != EINTR)
			fatal(LOWPROF_EXIT_FAILURE, "poll: %s", strerror(errno));
		loader_woke = (pfd[1].revents & POLLIN) != 0;
		notify_ping(); /* liveness for the supervisor; the poll timeout bounds the gap */
		if (pfd[1].revents & POLLIN) {
			if (read(LOWPROF_FD_EVENT, &hint, sizeof(hint)) < 0 && errno != EAGAIN)
				log_warn("eventfd read: %s", strerror(errno));
		}
		hangup = false;
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(ex->signal_fd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					hangup = true;
				else
					running = false;
			}
		}
		/* A hang-up is the supervisor gone (killed): finish like on SIGTERM, rather
		 * than poll a dead channel. */
		if (pfd[2].fd >= 0 && exporter_read_supervisor(ex)) {
			log_warn("the supervisor is gone: writing the profile and stopping");
			pfd[2].fd = -1;
			running = false;
		}
		while (exporter_read_batch(ex) == EXPORTER_RECORDS_PER_BATCH && running)
			;
		/* The ends a late wake passed (at rest, without OTLP), while they
		 * only let the interval go on; a roll is the last. */
		while (mono_ns() >= ex->next_write_ns) {
			bool went_on = exporter_interval_end(ex, mono_ns() - ex->next_write_ns);

			ex->next_write_ns += (uint64_t)ex->opt.interval_s * NSEC_PER_SEC;
			if (!went_on) {
				/* Behind by more than an interval (a long paused write): the
				 * next one a whole interval on, not a burst of short ones. */
				if (ex->next_write_ns <= mono_ns())
					ex->next_write_ns =
						mono_ns() + (uint64_t)ex->opt.interval_s * NSEC_PER_SEC;
				break;
			}
		}
		/* SIGHUP: every file now (a reader wants them current), then pacing
		 * goes on as before; on a stop, exporter_stop writes them. */
		if (hangup && running)
			exporter_write_all(ex, false);
		else if (running)
			exporter_pace(ex);
		/* Signals read while a paced write paused (exporter_write.c). */
		if (ex->stop_requested)
			running = false;
		if (ex->hangup_requested && running) {
			ex->hangup_requested = false;
			exporter_write_all(ex, false);
		}
		if (ex->otlp != NULL)
			otlp_export_poll(ex->otlp);
		exporter_sync_dir();
		exporter_report_state(ex, false);
	}
}

void exporter_stop(struct exporter *ex)
{
	size_t left;

	/* The supervisor stops the loader first: everything it drained is in the ring. */
	while (exporter_read_batch(ex) > 0)
		;
	/* Its last counts (restarts, audit) for the last files. */
	exporter_read_supervisor(ex);
	exporter_write_all(ex, true);
	if (ex->otlp != NULL) {
		/* Bounded: a dead collector must not hold up the stop. The files are
		 * written again so summary.json counts what the wait delivered. */
		left = otlp_export_flush(ex->otlp, OTLP_FLUSH_MS);
		if (left > 0)
			log_warn("%zu profile(s) not delivered to the collector at exit", left);
		exporter_write_all(ex, false);
	}
	exporter_sync_dir();
	exporter_print_summary(ex);
	otlp_export_free(ex->otlp);
	if (ex->state_fd >= 0)
		close(ex->state_fd);
	profile_window_free(ex->window);
	profile_window_free(ex->offcpu_window);
	archive_free(ex->archive);
	timeline_free(ex->timeline);
	stack_cache_free(ex->stacks);
	symbolizer_free(ex->sym);
	proc_source_free(ex->src);
	shm_ring_consumer_detach(&ex->ring);
	close(ex->signal_fd);
	close(ex->stop_fd);
}
