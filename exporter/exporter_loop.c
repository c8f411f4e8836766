#include "exporter/exporter_loop.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/log.h"
#include "common/mono_clock.h"
#include "ipc/notify.h"
#include "exporter/formats/archive.h"
#include "exporter/formats/offcpu_outputs.h"
#include "exporter/formats/outputs.h"
#include "exporter/otlp/otlp_export.h"
#include "exporter/otlp/process_info.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_window.h"
#include "exporter/profile/timeline.h"
#include "exporter/symbols/symbolizer.h"
#include "ipc/lowprof_fds.h"
#include "ipc/sample_record.h"

uint64_t exporter_unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void exporter_handle_record(struct exporter *ex, uint32_t type, const void *buf, uint32_t len)
{
	struct ingest_targets targets;
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
		targets.cumulative = profile_window_current(ex->window);
		targets.interval = ex->otlp != NULL ? otlp_export_interval_profile(ex->otlp) : NULL;
		targets.procs = ex->otlp != NULL ? otlp_export_procs(ex->otlp) : NULL;
		targets.offcpu = ex->offcpu_window != NULL ? profile_window_current(ex->offcpu_window) : NULL;
		targets.offcpu_interval = ex->otlp != NULL ? otlp_export_offcpu_profile(ex->otlp) : NULL;
		targets.stacks = ex->stacks;
		ingest_sample(&targets, ex->sym, &sv, &ex->ingest);
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

/*
 * The consumer's read position. shm_ring keeps it in its public struct (for
 * embedding); we only read it, to name the batch in the state file.
 */
static uint64_t exporter_ring_position(const struct exporter *ex)
{
	return ex->ring.pos;
}

/* Before the batch's space goes back to the producer: see exporter_state.h. */
static void exporter_note_batch(struct exporter *ex)
{
	int rc;

	if (ex->state_fd < 0)
		return;
	ex->state.pos_before = ex->state.pos_after;
	ex->state.accepted_before = ex->state.accepted_after;
	ex->state.pos_after = exporter_ring_position(ex);
	ex->state.accepted_after = ex->samples_base + ex->ingest.samples;
	rc = exporter_state_store(ex->state_fd, &ex->state);
	if (rc != 0) {
		log_warn("%s: %s; samples lost to a restart will not be counted", EXPORTER_STATE_FILE,
			 strerror(-rc));
		ex->state_fd = -1; /* closed at exit; the count is off from here on */
	}
}

/* Records read ahead of their handling, so that the new pids among them whose
 * samples carry raw addresses are asked of the loader together
 * (symbolizer_prefetch_pids): one round trip per group rather than one per new
 * process. Samples of (file, offset) frames need no maps at all. */
#define EXPORTER_LOOKAHEAD_RECORDS SYMBOLIZER_PREFETCH_MAX
#define EXPORTER_LOOKAHEAD_BYTES (1u << 20) /* room for at least 16 records of the largest size */

struct exporter_lookahead {
	uint32_t type, len;
	size_t off; /* in the arena */
};

int exporter_read_batch(struct exporter *ex)
{
	static uint64_t arena[EXPORTER_LOOKAHEAD_BYTES / sizeof(uint64_t)];
	struct exporter_lookahead recs[EXPORTER_LOOKAHEAD_RECORDS];
	uint32_t pids[EXPORTER_LOOKAHEAD_RECORDS];
	struct sample_view sv;
	size_t used, k, i, npids;
	char err[256];
	bool empty = false;
	int n = 0, rc;

	while (n < EXPORTER_RECORDS_PER_BATCH && !empty && !ex->ring_broken) {
		used = 0;
		k = 0;
		while (k < EXPORTER_LOOKAHEAD_RECORDS && n < EXPORTER_RECORDS_PER_BATCH &&
		       used + SHM_RING_MAX_RECORD <= sizeof(arena)) {
			rc = shm_ring_consumer_read(&ex->ring, &recs[k].type, (uint8_t *)arena + used,
						    SHM_RING_MAX_RECORD, &recs[k].len, err, sizeof(err));
			if (rc == 0) {
				empty = true;
				break;
			}
			if (rc < 0) {
				/* Never resync on a corrupt ring: report, keep what we have. */
				log_error("shared ring violation, no more samples will be read: %s", err);
				ex->ring_broken = true;
				break;
			}
			recs[k].off = used;
			used += ((size_t)recs[k].len + 7) & ~(size_t)7;
			k++;
			n++;
		}
		npids = 0;
		for (i = 0; i < k; i++) {
			if (recs[i].type == LOWPROF_REC_SAMPLE &&
			    sample_record_decode((uint8_t *)arena + recs[i].off, recs[i].len, &sv, err,
						 sizeof(err)) == 0 &&
			    ingest_uses_maps(&sv))
				pids[npids++] = sv.hdr->pid;
		}
		symbolizer_prefetch_pids(ex->sym, pids, npids);
		for (i = 0; i < k; i++)
			exporter_handle_record(ex, recs[i].type, (uint8_t *)arena + recs[i].off, recs[i].len);
		/* A long batch on a starved host (each new pid or file waits for the
		 * loader) must not look like a hung exporter: at most one ping a second. */
		notify_ping();
	}
	if (n > 0)
		exporter_note_batch(ex);
	shm_ring_consumer_commit(&ex->ring);
	return n;
}

void exporter_report_export(struct exporter *ex)
{
	struct otlp_client_stats st;

	if (ex->otlp == NULL)
		return;
	otlp_export_stats(ex->otlp, &st);
	if (ex->reported_export &&
	    memcmp(&st, &ex->last_export, sizeof(st)) == 0)
		return;
	ex->last_export = st;
	ex->reported_export = true;
	/* Keys and values fit notify_message's rules ([a-z0-9_]=[0-9]). */
	notify_state("export_sent=%llu export_failed=%llu export_retried=%llu "
		     "export_dropped=%llu export_bytes=%llu export_queued=%zu",
		     (unsigned long long)st.sent, (unsigned long long)st.failed,
		     (unsigned long long)st.retried, (unsigned long long)st.dropped,
		     (unsigned long long)st.bytes, st.queued);
}

static void exporter_restarts_json(const struct exporter *ex, char *buf, size_t len)
{
	snprintf(buf, len, "{\"loader\": %u, \"controller\": %u, \"exporter\": %u}",
		 ex->restarts[EXPORTER_RESTARTS_LOADER], ex->restarts[EXPORTER_RESTARTS_CONTROLLER],
		 ex->restarts[EXPORTER_RESTARTS_EXPORTER]);
}

/* What summary.json's "window" says: the span the files cover and the bounds. */
static void exporter_window_json(const struct exporter *ex, uint64_t now_unix, char *buf,
				 size_t len)
{
	struct profile_window_stats ws;
	struct profile_totals t;
	struct archive_stats as;
	char archive[160] = "null";

	profile_window_get_stats(ex->window, &ws);
	profile_get_totals(ex->profile, &t);
	if (ex->archive != NULL) {
		archive_get_stats(ex->archive, &as);
		snprintf(archive, sizeof(archive),
			 "{\"files\": %zu, \"bytes\": %llu, \"written\": %llu, \"removed\": %llu}",
			 as.files, (unsigned long long)as.bytes, (unsigned long long)as.written,
			 (unsigned long long)as.removed);
	}
	snprintf(buf, len,
		 "{\"seconds\": %u, \"interval_s\": %u, \"start_s\": %.3f, \"covered_s\": %.3f, "
		 "\"intervals\": %zu, \"expired_intervals\": %llu, \"max_stacks\": %u, "
		 "\"folded_samples\": %llu, \"files_set_aside\": %llu, \"archive\": %s}",
		 ex->opt.window.window_s, ex->opt.interval_s,
		 ws.start_ns >= ex->start_unix_ns ? (double)(ws.start_ns - ex->start_unix_ns) / 1e9 : 0.0,
		 now_unix >= ws.start_ns ? (double)(now_unix - ws.start_ns) / 1e9 : 0.0, ws.intervals,
		 (unsigned long long)ws.expired, ex->opt.window.max_stacks,
		 (unsigned long long)t.folded_samples, (unsigned long long)ex->state.set_aside, archive);
}

/* The interval just closed, as its own file (--archive). */
static void exporter_archive(struct exporter *ex, const struct profile *closed, uint64_t now_unix)
{
	char err[256];

	if (ex->archive == NULL)
		return;
	if (closed != NULL && archive_add(ex->archive, closed, now_unix, err, sizeof(err)) != 0)
		log_warn("archive: %s", err);
	else if (closed == NULL)
		archive_prune(ex->archive, now_unix);
}

static void exporter_expire(struct exporter *ex, uint64_t now_mono)
{
	/* The interval being exported may reach further back than a short window. */
	unsigned keep_s = ex->opt.window.window_s > ex->opt.interval_s ? ex->opt.window.window_s
									 : ex->opt.interval_s;
	uint64_t window_ns = (uint64_t)keep_s * NSEC_PER_SEC;

	if (now_mono <= window_ns)
		return;
	symbolizer_expire(ex->sym, now_mono - window_ns);
	if (ex->otlp != NULL)
		process_info_expire(otlp_export_procs(ex->otlp), now_mono - window_ns);
}

void exporter_write(struct exporter *ex)
{
	struct outputs_context ctx;
	struct otlp_client_stats st;
	struct profile_window_stats ws;
	const struct profile *closed;
	struct profile *merged;
	char export_json[256], restarts_json[128], lost_json[32], window_json[512];
	char *offcpu_json = NULL;
	uint64_t now_mono = mono_ns();
	uint64_t now_unix = ex->start_unix_ns + (now_mono - ex->start_mono_ns);

	/* Each write closes an interval: the files are the window's merge, so
	 * what they cost is bounded by the window, whatever the run's length. */
	closed = profile_window_roll(ex->window, now_unix);
	exporter_archive(ex, closed, now_unix);
	merged = profile_window_merged(ex->window, now_unix);
	if (merged == NULL) {
		log_error("out of memory: the window's profile was not written");
		return;
	}
	ex->profile = merged;
	/* What no sample of the window used (files no longer run, processes gone)
	 * leaves the caches: they follow the window, not the run's history. */
	exporter_expire(ex, now_mono);
	/* No frame is held now: the symbolizer's strings may start afresh. */
	symbolizer_trim_strings(ex->sym, SYMBOLIZER_DEFAULT_MAX_STRING_BYTES);
	/* The intervals that left the window and the previous merge were freed:
	 * give the heap's free pages back rather than keep the high-water mark. */
	malloc_trim(0);
	profile_window_get_stats(ex->window, &ws);
	if (ws.start_ns >= ex->start_unix_ns)
		timeline_trim(ex->timeline, ex->start_mono_ns + (ws.start_ns - ex->start_unix_ns));
	memset(&ctx, 0, sizeof(ctx));
	if (ex->otlp != NULL) {
		otlp_export_interval(ex->otlp, ex->timeline, ex->opt.frequency_hz,
				     ex->interval_start_unix_ns, now_unix);
		ex->interval_start_unix_ns = now_unix;
		/* Start the transfer now rather than at the next loop turn. */
		otlp_export_poll(ex->otlp);
		otlp_export_stats(ex->otlp, &st);
		otlp_client_stats_json(&st, export_json, sizeof(export_json));
		ctx.export_json = export_json;
		exporter_report_export(ex);
	}
	exporter_restarts_json(ex, restarts_json, sizeof(restarts_json));
	snprintf(lost_json, sizeof(lost_json), "%llu", (unsigned long long)ex->state.lost_total);
	exporter_window_json(ex, now_unix, window_json, sizeof(window_json));
	ctx.restarts_json = restarts_json;
	ctx.lost_on_restart_json = lost_json;
	ctx.window_json = window_json;
	ctx.dirfd = LOWPROF_FD_OUTDIR;
	ctx.frequency_hz = ex->opt.frequency_hz;
	ctx.duration_s = (double)(now_mono - ex->start_mono_ns) / 1e9;
	ctx.loader = ex->have_loader_stats ? &ex->loader : NULL;
	ctx.ingest = &ex->ingest;
	ctx.timeline = ex->timeline;
	ctx.start_mono_ns = ex->start_mono_ns;
	if (ex->offcpu_window != NULL) {
		/* The same window as the on-CPU files: rolled at the same instant. */
		profile_window_roll(ex->offcpu_window, now_unix);
		ex->offcpu = profile_window_merged(ex->offcpu_window, now_unix);
		if (ex->offcpu == NULL) {
			log_error("out of memory: the off-CPU profile was not written");
		} else {
			if (offcpu_outputs_write(ex->offcpu, LOWPROF_FD_OUTDIR) == 0)
				profile_get_time(ex->offcpu, &ex->state.offcpu_window_start_ns, NULL);
			offcpu_json = offcpu_summary_json(ex->offcpu, ex->ingest.offcpu,
							  ex->have_loader_stats ? &ex->loader : NULL);
			ctx.offcpu_json = offcpu_json;
		}
	}
	if (outputs_write_all(merged, &ctx) == 0 && ex->state_fd >= 0) {
		/* From now on a restart may reload profile.pb.gz (exporter_state.h). */
		ex->state.flushes++;
		ex->state.written_samples = ex->samples_base + ex->ingest.samples;
		profile_get_time(merged, &ex->state.window_start_ns, NULL);
		if (exporter_state_store(ex->state_fd, &ex->state) != 0)
			log_warn("%s: not updated", EXPORTER_STATE_FILE);
	}
	free(offcpu_json);
}

/* Accepts a decimal of 1 to 10 digits up to UINT32_MAX; advances *p past it. */
static int exporter_parse_count(const char **p, const char *end, unsigned *out)
{
	unsigned long long v = 0;
	const char *s = *p;

	while (s < end && *s >= '0' && *s <= '9' && s - *p < 10) {
		v = v * 10 + (unsigned)(*s - '0');
		s++;
	}
	if (s == *p || v > 0xffffffffULL || (s < end && *s >= '0' && *s <= '9'))
		return -1;
	*out = (unsigned)v;
	*p = s;
	return 0;
}

int exporter_parse_restarts(const char *msg, size_t len, unsigned out[EXPORTER_RESTARTS_N])
{
	static const char *const keys[EXPORTER_RESTARTS_N] = {" loader=", " controller=",
							       " exporter="};
	const char *p = msg, *end = msg + len;
	unsigned v[EXPORTER_RESTARTS_N];
	size_t i, k;

	if (len > 0 && msg[len - 1] == '\n')
		end--;
	if ((size_t)(end - p) < 8 || memcmp(p, "restarts", 8) != 0)
		return -1;
	p += 8;
	for (i = 0; i < EXPORTER_RESTARTS_N; i++) {
		k = strlen(keys[i]);
		if ((size_t)(end - p) < k || memcmp(p, keys[i], k) != 0)
			return -1;
		p += k;
		if (exporter_parse_count(&p, end, &v[i]) != 0)
			return -1;
	}
	if (p != end)
		return -1;
	memcpy(out, v, sizeof(v));
	return 0;
}

bool exporter_read_supervisor(struct exporter *ex)
{
	char msg[256];
	ssize_t n;

	for (;;) {
		n = recv(LOWPROF_FD_NOTIFY, msg, sizeof(msg), MSG_DONTWAIT | MSG_TRUNC);
		if (n == 0)
			return true; /* the supervisor is gone: its end closed */
		if (n < 0)
			return false; /* nothing more (EAGAIN), or no supervisor at all (EBADF) */
		if ((size_t)n > sizeof(msg) ||
		    exporter_parse_restarts(msg, (size_t)n, ex->restarts) != 0)
			log_warn_f("unexpected message from the supervisor refused (%zd bytes)", n);
	}
}

void exporter_print_summary(struct exporter *ex)
{
	struct profile_top_entry top[5];
	struct profile_totals totals;
	size_t n, i;
	uint64_t lost = ex->have_loader_stats ? outputs_lost_samples(&ex->loader) : 0;

	if (ex->profile == NULL)
		return;
	profile_get_totals(ex->profile, &totals);
	fprintf(stderr, "lowprof: %llu samples, %llu lost\n", (unsigned long long)totals.samples,
		(unsigned long long)lost);
	n = profile_top_functions(ex->profile, 5, top);
	for (i = 0; i < n; i++)
		fprintf(stderr, "lowprof:   %5.1f%%  %s\n", top[i].self_pct, top[i].name);
	fprintf(stderr, "lowprof: flame graph: %s/flamegraph.svg (also profile.pb.gz, profile.folded, summary.json)\n",
		ex->opt.output_label);
}
