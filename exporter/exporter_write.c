/*
 * The files' writes (exporter_loop.h): the interval's roll, and the outputs
 * as jobs paced within the CPU budget (output_pace.h), each one's CPU time
 * measured on this thread (user and system: the compression, the rename and
 * fsync calls). What summary.json and `lowprof status` say about the caps
 * is put together here too.
 */
#include "exporter/exporter_loop.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/heap_bound.h"
#include "common/log.h"
#include "common/mono_clock.h"
#include "exporter/formats/archive.h"
#include "exporter/formats/held_file.h"
#include "exporter/formats/offcpu_outputs.h"
#include "exporter/formats/outputs.h"
#include "exporter/formats/window_split_file.h"
#include "exporter/otlp/otlp_export.h"
#include "exporter/otlp/process_info.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_window.h"
#include "exporter/profile/timeline.h"
#include "exporter/profile/window_split.h"
#include "exporter/symbols/symbolizer.h"
#include "ipc/lowprof_fds.h"
#include "ipc/notify.h"
#include "ipc/throttle.h"
#include "settings/defaults.h"

static uint64_t exporter_now_unix(const struct exporter *ex, uint64_t now_mono)
{
	return ex->start_unix_ns + (now_mono - ex->start_mono_ns);
}

/* The allowance and the slots from the budget and control interval in ex->opt. */
static void exporter_pace_limits(struct exporter *ex, uint64_t *allowance, unsigned *slots)
{
	double n = (double)ex->opt.interval_s / ex->opt.control_interval_s;

	*allowance = output_pace_allowance_ns(ex->opt.cpu_budget_pct, ex->ncpus,
					      ex->opt.control_interval_s, OUTPUT_PACE_BUDGET_FRACTION);
	*slots = n >= 1.0 ? (unsigned)n : 1;
	ex->slot_ns = (uint64_t)(ex->opt.control_interval_s * 1e9);
}

void exporter_pace_init(struct exporter *ex)
{
	uint64_t allowance;
	unsigned slots;

	exporter_pace_limits(ex, &allowance, &slots);
	output_pace_init(&ex->pace, allowance, slots, OUTPUT_PACE_MAX_EVERY);
	output_pace_enable(&ex->pace, OUTPUT_PACE_OFFCPU, ex->offcpu_window != NULL);
	ex->slot_start_ns = mono_ns();
}

void exporter_pace_set(struct exporter *ex, double budget_pct, double control_interval_s)
{
	uint64_t allowance;
	unsigned slots;

	if (budget_pct < SETTINGS_CPU_BUDGET_MIN_PCT || budget_pct > SETTINGS_CPU_BUDGET_MAX_PCT ||
	    control_interval_s < SETTINGS_CONTROL_INTERVAL_MIN_S ||
	    control_interval_s > SETTINGS_CONTROL_INTERVAL_MAX_S) {
		log_warn_f("pacing settings out of range refused (%g%%, %g s)", budget_pct,
			   control_interval_s);
		return;
	}
	ex->opt.cpu_budget_pct = budget_pct;
	ex->opt.control_interval_s = control_interval_s;
	exporter_pace_limits(ex, &allowance, &slots);
	output_pace_set_limits(&ex->pace, allowance, slots);
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

	memset(&t, 0, sizeof(t));
	profile_window_get_stats(ex->window, &ws);
	if (ex->profile != NULL)
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
		 "\"folded_samples\": %llu, \"gone_samples\": %llu, \"gone_stacks\": %zu, "
		 "\"gone_pid_stacks\": %llu, \"files_set_aside\": %llu, \"archive\": %s}",
		 ex->opt.window.window_s, ex->opt.interval_s,
		 ws.start_ns >= ex->start_unix_ns ? (double)(ws.start_ns - ex->start_unix_ns) / 1e9 : 0.0,
		 now_unix >= ws.start_ns ? (double)(now_unix - ws.start_ns) / 1e9 : 0.0, ws.intervals,
		 (unsigned long long)ws.expired, ex->opt.window.max_stacks,
		 (unsigned long long)t.folded_samples, (unsigned long long)t.gone_samples,
		 t.gone_stacks, (unsigned long long)t.gone_pid_stacks,
		 (unsigned long long)ex->state.set_aside, archive);
}

static void exporter_caps(const struct exporter *ex, struct exporter_caps *c)
{
	struct profile_totals t;
	struct profile_window_stats ws;
	struct symbolizer_stats ss;

	memset(c, 0, sizeof(*c));
	if (ex->profile != NULL) {
		profile_get_totals(ex->profile, &t);
		c->folded_samples = t.folded_samples;
		c->dropped_samples = t.dropped_samples;
		c->string_bytes = t.string_bytes;
	}
	if (ex->window != NULL) {
		profile_window_get_stats(ex->window, &ws);
		c->window_bytes = ws.memory_bytes;
	}
	if (ex->sym != NULL) {
		symbolizer_stats(ex->sym, &ss);
		c->symbol_bytes = symbolizer_memory(ex->sym);
		c->symbol_file_bytes = ss.file_bytes;
		c->symbol_string_bytes = ss.string_bytes;
		c->symbol_kernel_bytes = ss.kernel_bytes;
		c->symbol_maps_bytes = ss.maps_bytes;
		c->symbol_evictions = ss.evictions;
		c->symbol_string_trims = ss.string_trims;
	}
	c->set_aside = ex->state.set_aside;
}

static void exporter_caps_json(const struct exporter *ex, char *buf, size_t len)
{
	struct exporter_caps c;
	char audit[160] = "null";

	exporter_caps(ex, &c);
	if (ex->have_audit)
		snprintf(audit, sizeof(audit),
			 "{\"records\": %u, \"suppressed\": %u, \"rotations\": %u, \"reopens\": %u}",
			 ex->audit[EXPORTER_AUDIT_RECORDS], ex->audit[EXPORTER_AUDIT_SUPPRESSED],
			 ex->audit[EXPORTER_AUDIT_ROTATIONS], ex->audit[EXPORTER_AUDIT_REOPENS]);
	snprintf(buf, len,
		 "{\"max_stacks\": %u, \"folded_samples\": %llu, \"dropped_samples\": %llu, "
		 "\"string_bytes\": %llu, \"window_bytes\": %llu, \"symbol_bytes\": %llu, "
		 "\"symbol_parts\": {\"files\": %llu, \"strings\": %llu, \"kallsyms\": %llu, "
		 "\"maps\": %llu}, "
		 "\"symbol_string_cap_bytes\": %zu, \"symbol_file_cap_bytes\": %zu, "
		 "\"symbol_evictions\": %llu, \"symbol_string_trims\": %llu, "
		 "\"files_set_aside\": %llu, \"audit\": %s}",
		 ex->opt.window.max_stacks, (unsigned long long)c.folded_samples,
		 (unsigned long long)c.dropped_samples, (unsigned long long)c.string_bytes,
		 (unsigned long long)c.window_bytes, (unsigned long long)c.symbol_bytes,
		 (unsigned long long)c.symbol_file_bytes, (unsigned long long)c.symbol_string_bytes,
		 (unsigned long long)c.symbol_kernel_bytes, (unsigned long long)c.symbol_maps_bytes,
		 SYMBOLIZER_DEFAULT_MAX_STRING_BYTES, SYMBOLIZER_DEFAULT_MAX_FILE_BYTES,
		 (unsigned long long)c.symbol_evictions, (unsigned long long)c.symbol_string_trims,
		 (unsigned long long)c.set_aside, audit);
}

void exporter_report_state(struct exporter *ex, bool now)
{
	struct otlp_client_stats st;
	struct exporter_caps c;
	char exp[256] = "";
	uint64_t t = mono_ns();
	bool settled = false;

	if (ex->otlp != NULL) {
		otlp_export_stats(ex->otlp, &st);
		/* A transfer's outcome (about one an interval) is told at once:
		 * the exporter may sleep a second after it, and `lowprof status`
		 * should not show a delivered profile as queued meanwhile. */
		settled = !ex->reported_export || st.sent != ex->last_export.sent ||
			  st.failed != ex->last_export.failed ||
			  st.dropped != ex->last_export.dropped;
	}
	if (!now && !settled && t - ex->last_caps_report_ns < NSEC_PER_SEC)
		return;
	exporter_caps(ex, &c);
	if (ex->otlp != NULL) {
		/* Keys and values fit notify_message's rules ([a-z0-9_]=[0-9]). */
		snprintf(exp, sizeof(exp),
			 " export_sent=%llu export_failed=%llu export_retried=%llu "
			 "export_dropped=%llu export_bytes=%llu export_queued=%zu",
			 (unsigned long long)st.sent, (unsigned long long)st.failed,
			 (unsigned long long)st.retried, (unsigned long long)st.dropped,
			 (unsigned long long)st.bytes, st.queued);
	}
	if (!now && ex->reported_export && memcmp(&c, &ex->last_caps, sizeof(c)) == 0 &&
	    (ex->otlp == NULL || memcmp(&st, &ex->last_export, sizeof(st)) == 0))
		return;
	ex->last_caps_report_ns = t;
	ex->reported_export = true;
	ex->last_caps = c;
	if (ex->otlp != NULL)
		ex->last_export = st;
	notify_state("stacks_folded=%llu stacks_dropped=%llu string_bytes=%llu window_bytes=%llu "
		     "symbol_bytes=%llu symbol_evictions=%llu set_aside=%llu%s",
		     (unsigned long long)c.folded_samples, (unsigned long long)c.dropped_samples,
		     (unsigned long long)c.string_bytes, (unsigned long long)c.window_bytes,
		     (unsigned long long)c.symbol_bytes, (unsigned long long)c.symbol_evictions,
		     (unsigned long long)c.set_aside, exp);
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

/*
 * At rest (nothing sampled in the interval just closed, nothing with samples
 * folded or gone from the window) a new merge would hold the samples of the
 * last one and only its time range would move on: the profile files written
 * from it are left as they are, and the merge with them; a file still due
 * from an earlier merge is written from the one held. summary.json is
 * written as ever (its counters and timeline move). An idle host's exporter
 * then wakes for no write but the summary's.
 */
static void exporter_hold_unchanged(struct exporter *ex, uint64_t changes)
{
	static const enum output_pace_job files[] = { OUTPUT_PACE_PPROF, OUTPUT_PACE_FOLDED,
						      OUTPUT_PACE_SVG };
	size_t i;

	if (ex->profile == NULL || ex->merge_changes != changes)
		return;
	output_pace_hold(&ex->pace, OUTPUT_PACE_MERGE);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (ex->file_changes[files[i]] == changes)
			output_pace_hold(&ex->pace, files[i]);
	}
}

/* The OTLP collector gets every --interval, whether it closed or went on. */
static void exporter_otlp_interval(struct exporter *ex, uint64_t now_unix)
{
	if (ex->otlp == NULL)
		return;
	otlp_export_interval(ex->otlp, ex->timeline, ex->opt.frequency_hz,
			     ex->interval_start_unix_ns, now_unix);
	ex->interval_start_unix_ns = now_unix;
	/* Start the transfer now rather than at the next loop turn. */
	otlp_export_poll(ex->otlp);
}

/* The samples of the interval being collected, off-CPU ones (--off-cpu) too. */
static uint64_t exporter_current_samples(const struct exporter *ex)
{
	struct profile_totals t;
	uint64_t n;

	profile_get_totals(profile_window_current(ex->window), &t);
	n = t.samples;
	if (ex->offcpu_window != NULL) {
		profile_get_totals(profile_window_current(ex->offcpu_window), &t);
		n += t.samples;
	}
	return n;
}

bool exporter_trickle(const struct exporter *ex, uint64_t span_ns)
{
	return (double)exporter_current_samples(ex) <=
	       THROTTLE_QUIET_SAMPLES_PER_S * ((double)span_ns / NSEC_PER_SEC);
}

/* Whether the interval being collected, had it spanned `spanned` --intervals
 * (and late_ns more: its end taken late) with the samples it holds now, could
 * go on at that end: a trickle over the time it spans then, and room in the
 * window for one more --interval. */
static bool exporter_interval_may_go_on(const struct exporter *ex, unsigned spanned,
					uint64_t late_ns)
{
	uint64_t spanned_s = (uint64_t)ex->opt.interval_s * spanned;

	/* Never longer than the window: an interval that began more than a
	 * window ago would leave it at its own roll, its samples in no file. */
	return exporter_trickle(ex, spanned_s * NSEC_PER_SEC + late_ns) &&
	       spanned_s + ex->opt.interval_s <= ex->opt.window.window_s;
}

unsigned exporter_interval_ends_going_on(const struct exporter *ex)
{
	unsigned spanned = ex->intervals_spanned;

	/* The bound is max_every (output_pace_may_extend); a trickle now stays
	 * one over a longer span, so the count only stops at a bound. */
	while (output_pace_may_extend(&ex->pace, exporter_interval_may_go_on(ex, spanned, 0), spanned))
		spanned++;
	return spanned - ex->intervals_spanned;
}

bool exporter_interval_end(struct exporter *ex, uint64_t late_ns)
{
	uint64_t cpu0 = thread_cpu_ns();

	ex->last_end_busy = !exporter_trickle(
		ex, (uint64_t)ex->opt.interval_s * ex->intervals_spanned * NSEC_PER_SEC + late_ns);
	/* Taken late, the interval holds the samples read since its end too:
	 * judged over the time up to now. */
	if (!output_pace_extend(&ex->pace,
				exporter_interval_may_go_on(ex, ex->intervals_spanned, late_ns),
				ex->intervals_spanned)) {
		exporter_roll(ex);
		return false;
	}
	ex->intervals_spanned++;
	exporter_otlp_interval(ex, exporter_now_unix(ex, mono_ns()));
	output_pace_charge(&ex->pace, thread_cpu_ns() - cpu0);
	return true;
}

void exporter_roll(struct exporter *ex)
{
	struct profile_window_stats ws;
	const struct profile *closed;
	uint64_t cpu0 = thread_cpu_ns();
	uint64_t now_mono = mono_ns();
	uint64_t now_unix = exporter_now_unix(ex, now_mono);

	/* Each roll closes an interval: the files are the window's merge, so what
	 * they cost is bounded by the window, whatever the run's length. */
	closed = profile_window_roll(ex->window, now_unix);
	ex->intervals_spanned = 1;
	exporter_archive(ex, closed, now_unix);
	exporter_otlp_interval(ex, now_unix);
	/* The off-CPU profile has the same window: rolled at the same instant. */
	if (ex->offcpu_window != NULL)
		profile_window_roll(ex->offcpu_window, now_unix);
	/* What no sample of the window used (files no longer run, processes gone)
	 * leaves the caches: they follow the window, not the run's history. */
	exporter_expire(ex, now_mono);
	/* The interval being collected was just opened and no frame is held: the
	 * symbolizer's strings may start afresh. */
	symbolizer_trim_strings(ex->sym, SYMBOLIZER_DEFAULT_MAX_STRING_BYTES);
	profile_window_get_stats(ex->window, &ws);
	if (ws.start_ns >= ex->start_unix_ns)
		timeline_trim(ex->timeline, ex->start_mono_ns + (ws.start_ns - ex->start_unix_ns));
	output_pace_interval(&ex->pace);
	exporter_hold_unchanged(ex, ws.changes);
	/* A roll starts a slot: the jobs it made due begin now. */
	output_pace_slot(&ex->pace);
	ex->slot_start_ns = now_mono;
	output_pace_charge(&ex->pace, thread_cpu_ns() - cpu0);
	exporter_report_state(ex, false);
}

/*
 * A write that outlasts what is left of the slot's allowance pauses here
 * (outputs_context.progress, after each 64 KiB written) until the next slot:
 * meanwhile the ring is read (samples go to the interval being collected,
 * not to the merge being written, which nothing else touches) and the
 * supervisor pinged. A stop or SIGHUP read meanwhile ends the pausing: the
 * rest is written at once and the main loop acts on the signal.
 */
static void exporter_write_progress(void *arg)
{
	struct exporter *ex = arg;
	struct pollfd pfd[2];
	struct signalfd_siginfo si;
	uint64_t cpu = thread_cpu_ns(), piece = cpu - ex->piece_cpu0, now, due, hint;

	if (ex->job_running < OUTPUT_PACE_N)
		output_pace_stretch(&ex->pace, (enum output_pace_job)ex->job_running,
				    cpu - ex->stretch_cpu0);
	ex->stretch_cpu0 = cpu;
	notify_ping();
	if (ex->job_unpaced || ex->pace.slot_spent_ns + piece <= ex->pace.allowance_ns)
		return;
	output_pace_piece(&ex->pace, piece);
	ex->job_pieces_ns += piece;
	pfd[0].fd = ex->signal_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = LOWPROF_FD_EVENT;
	pfd[1].events = POLLIN;
	for (;;) {
		now = mono_ns();
		due = ex->slot_start_ns + ex->slot_ns;
		if (now >= due || ex->job_unpaced)
			break;
		if (poll(pfd, 2, (int)((due - now) / NSEC_PER_MSEC) + 1) > 0) {
			if ((pfd[0].revents & POLLIN) &&
			    read(ex->signal_fd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					ex->hangup_requested = true;
				else
					ex->stop_requested = true;
				ex->job_unpaced = true;
			}
			if (pfd[1].revents & POLLIN)
				(void)!read(LOWPROF_FD_EVENT, &hint, sizeof(hint));
		}
		notify_ping();
		while (exporter_read_batch(ex) == EXPORTER_RECORDS_PER_BATCH)
			;
	}
	/* Reading the ring meanwhile is not the write's cost: the next piece
	 * starts now. */
	output_pace_slot(&ex->pace);
	ex->slot_start_ns = mono_ns();
	ex->piece_cpu0 = ex->stretch_cpu0 = thread_cpu_ns();
}

static void exporter_outputs_context(struct exporter *ex, struct outputs_context *ctx,
				     uint64_t now_mono)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->dirfd = LOWPROF_FD_OUTDIR;
	ctx->frequency_hz = ex->opt.frequency_hz;
	ctx->duration_s = (double)(now_mono - ex->start_mono_ns) / 1e9;
	ctx->loader = ex->have_loader_stats ? &ex->loader : NULL;
	ctx->ingest = &ex->ingest;
	ctx->timeline = ex->timeline;
	ctx->start_mono_ns = ex->start_mono_ns;
	ctx->progress = exporter_write_progress;
	ctx->progress_arg = ex;
}

/*
 * Right after profile.pb.gz (offcpu.pb.gz), from the same merge of window w:
 * its split by interval into the held file fd (window_split_file.h), so
 * that a restarted exporter lets the reloaded intervals leave one by one.
 * A split not had or not written leaves the held file empty: a stale one
 * would not match the new file (the restarted exporter would refuse it all
 * the same).
 */
static void exporter_split_written(struct exporter *ex, struct profile_window *w, int fd,
				   const char *what)
{
	/* Taken: the file is not written again from this merge (held at rest,
	 * exporter_hold_unchanged), so the split is not kept till the next. */
	struct window_split *split = profile_window_take_split(w);
	char err[320];
	int rc;

	if (ex->state_fd < 0) { /* nothing is reloaded without the state file */
		window_split_free(split);
		return;
	}
	if (split != NULL)
		rc = window_split_write_held(fd, split, err, sizeof(err));
	else
		rc = errbuf_fail(-ENOMEM, err, sizeof(err), "out of memory");
	window_split_free(split);
	if (rc == 0)
		return;
	ex->split_failures++;
	if ((ex->split_failures & (ex->split_failures - 1)) == 0) /* the 1st, 2nd, 4th, ... */
		log_warn("%s's window split: %s; a restart would keep the reloaded window whole",
			 what, err);
	(void)held_file_clear(fd);
}

/* profile.pb.gz is what a restart reloads: the state file says so once it is written. */
static void exporter_pprof_written(struct exporter *ex)
{
	if (ex->state_fd < 0)
		return;
	ex->state.flushes++;
	ex->state.written_samples = ex->merged_samples;
	profile_get_time(ex->profile, &ex->state.window_start_ns, NULL);
	if (exporter_state_store(ex->state_fd, &ex->state) != 0)
		log_warn("%s: not updated", EXPORTER_STATE_FILE);
}

static void exporter_write_summary(struct exporter *ex, struct outputs_context *ctx,
				   uint64_t now_unix)
{
	struct otlp_client_stats st;
	char export_json[256], restarts_json[128], lost_json[32], window_json[768];
	char caps_json[1024], outputs_json[1536], checkpoint_json[192];
	char *offcpu_json = NULL;

	if (ex->otlp != NULL) {
		otlp_export_stats(ex->otlp, &st);
		otlp_client_stats_json(&st, export_json, sizeof(export_json));
		ctx->export_json = export_json;
	}
	exporter_restarts_json(ex, restarts_json, sizeof(restarts_json));
	snprintf(lost_json, sizeof(lost_json), "%llu", (unsigned long long)ex->state.lost_total);
	exporter_window_json(ex, now_unix, window_json, sizeof(window_json));
	exporter_caps_json(ex, caps_json, sizeof(caps_json));
	/* This write is the summary's own "written_s", and counted in its "writes". */
	ex->pace.job[OUTPUT_PACE_SUMMARY].last_unix_ns = now_unix;
	ex->pace.job[OUTPUT_PACE_SUMMARY].runs++;
	if (output_pace_json(&ex->pace, ex->start_unix_ns, outputs_json, sizeof(outputs_json)) > 0)
		ctx->outputs_json = outputs_json;
	ex->pace.job[OUTPUT_PACE_SUMMARY].runs--;
	if (exporter_checkpoint_json(&ex->checkpoint, checkpoint_json, sizeof(checkpoint_json)) > 0)
		ctx->checkpoint_json = checkpoint_json;
	ctx->restarts_json = restarts_json;
	ctx->lost_on_restart_json = lost_json;
	ctx->window_json = window_json;
	ctx->caps_json = caps_json;
	if (ex->offcpu != NULL) {
		offcpu_json = offcpu_summary_json(ex->offcpu, ex->ingest.offcpu,
						  ex->have_loader_stats ? &ex->loader : NULL);
		ctx->offcpu_json = offcpu_json;
	}
	outputs_write_file(ex->profile, ctx, OUTPUTS_SUMMARY);
	free(offcpu_json);
}

static void exporter_run_job(struct exporter *ex, enum output_pace_job job, bool forced)
{
	struct outputs_context ctx;
	uint64_t now_mono = mono_ns();
	uint64_t now_unix = exporter_now_unix(ex, now_mono);
	struct profile *merged;
	struct profile_totals cur;
	struct profile_window_stats ws;
	uint64_t last;

	ex->piece_cpu0 = ex->stretch_cpu0 = thread_cpu_ns();
	ex->job_pieces_ns = 0;
	ex->job_running = job;
	/* A stop or SIGHUP read during an earlier pause: no more pausing. */
	ex->job_unpaced = forced || ex->pace.allowance_ns == UINT64_MAX || ex->stop_requested ||
			  ex->hangup_requested;

	exporter_outputs_context(ex, &ctx, now_mono);
	switch (job) {
	case OUTPUT_PACE_MERGE:
		/* The merge frees the previous one at once: nothing may read it
		 * while the merge pauses between intervals (its pacing, as a
		 * file's between pieces: exporter_write_progress). */
		ex->profile = NULL;
		profile_window_set_progress(ex->window, exporter_write_progress, ex);
		/* Paced after a roll: the closed intervals, which end where the
		 * checkpoint's begins; a forced write (stop, SIGHUP) has all. */
		merged = forced ? profile_window_merged(ex->window, now_unix)
				: profile_window_merged_closed(ex->window);
		profile_window_set_progress(ex->window, NULL, NULL);
		if (merged == NULL) {
			/* The previous merge was freed with it: no file until the next one. */
			log_error("out of memory: the window's profile was not merged");
			ex->profile = NULL;
			break;
		}
		ex->profile = merged;
		profile_window_get_stats(ex->window, &ws);
		ex->merge_changes = forced ? EXPORTER_CHANGES_UNKNOWN : ws.changes;
		ex->merged_samples = ex->samples_base + ex->ingest.samples;
		if (!forced) {
			profile_get_totals(profile_window_current(ex->window), &cur);
			ex->merged_samples -= cur.samples <= ex->merged_samples ? cur.samples : 0;
		}
		/* The intervals that left the window and the previous merge were
		 * freed: give the heap's free pages back rather than keep the
		 * high-water mark. */
		(void)heap_bound_trim();
		break;
	case OUTPUT_PACE_PPROF:
		if (ex->profile != NULL && outputs_write_file(ex->profile, &ctx, OUTPUTS_PPROF) == 0) {
			exporter_split_written(ex, ex->window, LOWPROF_FD_WINDOW_SPLIT, OUTPUT_FILE_PPROF);
			exporter_pprof_written(ex);
			ex->file_changes[job] = ex->merge_changes;
		}
		break;
	case OUTPUT_PACE_FOLDED:
		if (ex->profile != NULL && outputs_write_file(ex->profile, &ctx, OUTPUTS_FOLDED) == 0)
			ex->file_changes[job] = ex->merge_changes;
		break;
	case OUTPUT_PACE_SVG:
		if (ex->profile != NULL && outputs_write_file(ex->profile, &ctx, OUTPUTS_SVG) == 0)
			ex->file_changes[job] = ex->merge_changes;
		break;
	case OUTPUT_PACE_OFFCPU:
		if (ex->offcpu_window == NULL)
			break;
		ex->offcpu = profile_window_merged(ex->offcpu_window, now_unix);
		if (ex->offcpu == NULL)
			log_error("out of memory: the off-CPU profile was not written");
		else if (offcpu_outputs_write(ex->offcpu, LOWPROF_FD_OUTDIR) == 0) {
			exporter_split_written(ex, ex->offcpu_window, LOWPROF_FD_OFFCPU_WINDOW_SPLIT,
					       OUTPUT_FILE_OFFCPU_PPROF);
			profile_get_time(ex->offcpu, &ex->state.offcpu_window_start_ns, NULL);
		}
		break;
	case OUTPUT_PACE_SUMMARY:
		if (ex->profile != NULL)
			exporter_write_summary(ex, &ctx, now_unix);
		break;
	default:
		break;
	}
	last = thread_cpu_ns() - ex->piece_cpu0;
	output_pace_stretch(&ex->pace, job, thread_cpu_ns() - ex->stretch_cpu0);
	ex->job_running = OUTPUT_PACE_N;
	output_pace_done(&ex->pace, job, ex->job_pieces_ns + last, last, now_unix, forced);
	ex->job_unpaced = false;
}

void exporter_pace(struct exporter *ex)
{
	uint64_t now = mono_ns();
	int job;

	if (now - ex->slot_start_ns >= ex->slot_ns) {
		output_pace_slot(&ex->pace);
		ex->slot_start_ns = now;
	}
	while (!ex->stop_requested && (job = output_pace_next(&ex->pace)) >= 0)
		exporter_run_job(ex, (enum output_pace_job)job, false);
	if (!ex->stop_requested)
		exporter_checkpoint(ex);
}

int exporter_pace_timeout_ms(const struct exporter *ex)
{
	uint64_t now = mono_ns(), due = ex->slot_start_ns + ex->slot_ns;

	if (!output_pace_pending(&ex->pace))
		return -1;
	return due > now ? (int)((due - now) / NSEC_PER_MSEC) + 1 : 0;
}

void exporter_write_all(struct exporter *ex, bool roll)
{
	int i;

	if (roll)
		exporter_roll(ex);
	output_pace_force(&ex->pace);
	for (i = 0; i < OUTPUT_PACE_N; i++) {
		if (ex->pace.job[i].pending)
			exporter_run_job(ex, (enum output_pace_job)i, true);
	}
	/* The stop's last roll: the files hold everything, the checkpoint nothing more. */
	if (roll)
		exporter_checkpoint_clear();
	exporter_report_state(ex, true);
}
