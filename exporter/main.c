/*
 * lowprof-exporter: reads sample batches from the shared-memory ring,
 * symbolizes and aggregates them, and rewrites the output files every
 * --interval and once more at the end.
 *
 * Inherited fds (ipc/lowprof_fds.h): NOTIFY, SHM, EVENT, OUTDIR.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/notify.h"
#include "exporter/exporter_options.h"
#include "exporter/ingest.h"
#include "exporter/outputs.h"
#include "exporter/profile.h"
#include "exporter/symbolizer.h"
#include "exporter/timeline.h"
#include "ipc/loader_stats.h"
#include "ipc/lowprof_fds.h"
#include "ipc/sample_record.h"
#include "ipc/shm_ring.h"

/* Bound the work per wake-up so signals and interval writes are never starved. */
#define RECORDS_PER_BATCH 4096
#define POLL_MS 200

struct exporter {
	struct exporter_options opt;
	struct shm_ring_consumer ring;
	struct symbolizer *sym;
	struct profile *profile;
	struct lowprof_loader_stats loader;
	bool have_loader_stats;
	struct ingest_stats ingest;
	struct timeline *timeline;
	uint64_t start_mono_ns;
	uint64_t start_unix_ns;
	bool ring_broken;
};

static uint64_t exporter_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void exporter_handle_record(struct exporter *ex, uint32_t type, const void *buf, uint32_t len)
{
	struct sample_view sv;
	struct lowprof_timeline_entry te;
	char err[256];

	switch (type) {
	case LOWPROF_REC_SAMPLE:
		if (sample_record_decode(buf, len, &sv, err, sizeof(err)) != 0) {
			ex->ingest.rejected++;
			log_warn_f("malformed sample refused: %s", err);
			return;
		}
		ingest_sample(ex->profile, ex->sym, &sv, &ex->ingest);
		return;
	case LOWPROF_REC_LOADER_STATS:
		if (loader_stats_decode(buf, len, &ex->loader) == 0)
			ex->have_loader_stats = true;
		else
			log_warn_f("malformed statistics record refused (%u bytes)", len);
		return;
	case LOWPROF_REC_TIMELINE:
		if (timeline_entry_decode(buf, len, &te) != 0)
			log_warn_f("malformed timeline entry refused (%u bytes)", len);
		else if (timeline_add(ex->timeline, &te) != 0)
			log_warn_f("out of memory: timeline entry dropped");
		return;
	default:
		ex->ingest.rejected++;
		log_warn_f("unknown record type %u refused", type);
	}
}

/* Returns records read; stops at RECORDS_PER_BATCH or when the ring is empty. */
static int exporter_read_batch(struct exporter *ex)
{
	static uint64_t buf[SHM_RING_MAX_RECORD / sizeof(uint64_t)];
	uint32_t type, len;
	char err[256];
	int n, rc;

	if (ex->ring_broken)
		return 0;
	for (n = 0; n < RECORDS_PER_BATCH; n++) {
		rc = shm_ring_consumer_read(&ex->ring, &type, buf, sizeof(buf), &len, err, sizeof(err));
		if (rc == 0)
			break;
		if (rc < 0) {
			/* Never resync on a corrupt ring: report, keep what we have. */
			log_error("shared ring violation, no more samples will be read: %s", err);
			ex->ring_broken = true;
			break;
		}
		exporter_handle_record(ex, type, buf, len);
	}
	shm_ring_consumer_commit(&ex->ring);
	return n;
}

static void exporter_write(struct exporter *ex)
{
	struct outputs_context ctx;
	uint64_t now_mono = exporter_clock_ns(CLOCK_MONOTONIC);

	profile_set_time(ex->profile, ex->start_unix_ns,
			 ex->start_unix_ns + (now_mono - ex->start_mono_ns));
	memset(&ctx, 0, sizeof(ctx));
	ctx.dirfd = LOWPROF_FD_OUTDIR;
	ctx.frequency_hz = ex->opt.frequency_hz;
	ctx.duration_s = (double)(now_mono - ex->start_mono_ns) / 1e9;
	ctx.loader = ex->have_loader_stats ? &ex->loader : NULL;
	ctx.ingest = &ex->ingest;
	ctx.timeline = ex->timeline;
	ctx.start_mono_ns = ex->start_mono_ns;
	outputs_write_all(ex->profile, &ctx);
}

static void exporter_print_summary(struct exporter *ex)
{
	struct profile_top_entry top[5];
	size_t n, i;
	uint64_t lost = ex->have_loader_stats ? outputs_lost_samples(&ex->loader) : 0;

	fprintf(stderr, "lowprof: %llu samples, %llu lost\n", (unsigned long long)ex->ingest.samples,
		(unsigned long long)lost);
	n = profile_top_functions(ex->profile, 5, top);
	for (i = 0; i < n; i++)
		fprintf(stderr, "lowprof:   %5.1f%%  %s\n", top[i].self_pct, top[i].name);
	fprintf(stderr, "lowprof: flame graph: %s/flamegraph.svg (also profile.pb.gz, profile.folded, summary.json)\n",
		ex->opt.output_label);
}

static int exporter_signalfd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

int main(int argc, char **argv)
{
	static const char ready[] = "ready\n";
	struct exporter ex;
	struct pollfd pfd[2];
	uint64_t next_write_ns, hint;
	char err[512];
	int rc, sfd;
	bool running = true;

	memset(&ex, 0, sizeof(ex));
	log_init("lowprof-exporter", LOG_LEVEL_INFO);
	rc = exporter_options_parse(argc, argv, &ex.opt, err, sizeof(err));
	if (rc != 0)
		fatal(rc, "%s", err);
	sfd = exporter_signalfd();
	if (sfd < 0)
		fatal(LOWPROF_EXIT_FAILURE, "signalfd: %s", strerror(errno));
	if (shm_ring_consumer_attach(&ex.ring, LOWPROF_FD_SHM, err, sizeof(err)) != 0)
		fatal(LOWPROF_EXIT_FAILURE, "shared ring: %s", err);
	ex.sym = symbolizer_new(ex.opt.kallsyms_path, err, sizeof(err));
	if (ex.sym == NULL)
		fatal(LOWPROF_EXIT_FAILURE, "symbolizer: %s", err);
	ex.profile = profile_new();
	ex.timeline = timeline_new(TIMELINE_MAX_ENTRIES);
	if (ex.profile == NULL || ex.timeline == NULL)
		fatal(LOWPROF_EXIT_FAILURE, "out of memory");
	ex.start_mono_ns = exporter_clock_ns(CLOCK_MONOTONIC);
	ex.start_unix_ns = exporter_clock_ns(CLOCK_REALTIME);
	next_write_ns = ex.start_mono_ns + (uint64_t)ex.opt.interval_s * 1000000000ULL;
	if (write(LOWPROF_FD_NOTIFY, ready, sizeof(ready) - 1) < 0 && errno != EBADF)
		log_warn("readiness notification failed: %s", strerror(errno));

	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = LOWPROF_FD_EVENT;
	pfd[1].events = POLLIN;
	while (running) {
		/* The eventfd is only a hint: the timeout makes us look anyway. */
		if (poll(pfd, 2, POLL_MS) < 0 && errno != EINTR)
			fatal(LOWPROF_EXIT_FAILURE, "poll: %s", strerror(errno));
		notify_ping(); /* liveness for the supervisor; the poll timeout bounds the gap */
		if (pfd[1].revents & POLLIN) {
			if (read(LOWPROF_FD_EVENT, &hint, sizeof(hint)) < 0 && errno != EAGAIN)
				log_warn("eventfd read: %s", strerror(errno));
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGHUP)
				running = false;
		}
		while (exporter_read_batch(&ex) == RECORDS_PER_BATCH && running)
			;
		if (exporter_clock_ns(CLOCK_MONOTONIC) >= next_write_ns) {
			exporter_write(&ex);
			next_write_ns += (uint64_t)ex.opt.interval_s * 1000000000ULL;
		}
	}
	/* The supervisor stops the loader first: everything it drained is in the ring. */
	while (exporter_read_batch(&ex) > 0)
		;
	exporter_write(&ex);
	exporter_print_summary(&ex);
	profile_free(ex.profile);
	timeline_free(ex.timeline);
	symbolizer_free(ex.sym);
	shm_ring_consumer_detach(&ex.ring);
	return LOWPROF_EXIT_OK;
}
