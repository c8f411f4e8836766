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

/* Refusals are counted (summary.json's rejected_records); the log says the
 * 1st, 2nd, 4th, 8th...: a stream of bad records cannot flood it. */
static bool exporter_log_refusal(uint64_t count)
{
	return (count & (count - 1)) == 0;
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
			if (exporter_log_refusal(ex->ingest.rejected))
				log_warn_f("malformed sample refused: %s (%llu refused so far)", err,
					   (unsigned long long)ex->ingest.rejected);
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
		if (exporter_log_refusal(ex->ingest.rejected))
			log_warn_f("unknown record type %u refused (%llu refused so far)", type,
				   (unsigned long long)ex->ingest.rejected);
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

/* "WORD KEY=N KEY=N ...", the keys in their order: 0 and out[] set, or -1. */
static int exporter_parse_counts(const char *msg, size_t len, const char *word,
				 const char *const keys[], size_t n, unsigned out[])
{
	const char *p = msg, *end = msg + len;
	unsigned v[8]; /* the most keys a message has */
	size_t i, k, wl = strlen(word);

	if (n > sizeof(v) / sizeof(v[0]))
		return -1;
	if (len > 0 && msg[len - 1] == '\n')
		end--;
	if ((size_t)(end - p) < wl || memcmp(p, word, wl) != 0)
		return -1;
	p += wl;
	for (i = 0; i < n; i++) {
		k = strlen(keys[i]);
		if ((size_t)(end - p) < k + 2 || p[0] != ' ' || memcmp(p + 1, keys[i], k) != 0 ||
		    p[1 + k] != '=')
			return -1;
		p += k + 2;
		if (exporter_parse_count(&p, end, &v[i]) != 0)
			return -1;
	}
	if (p != end)
		return -1;
	memcpy(out, v, n * sizeof(v[0]));
	return 0;
}

int exporter_parse_restarts(const char *msg, size_t len, unsigned out[EXPORTER_RESTARTS_N])
{
	static const char *const keys[EXPORTER_RESTARTS_N] = {"loader", "controller", "exporter"};

	return exporter_parse_counts(msg, len, "restarts", keys, EXPORTER_RESTARTS_N, out);
}

int exporter_parse_audit(const char *msg, size_t len, unsigned out[EXPORTER_AUDIT_N])
{
	static const char *const keys[EXPORTER_AUDIT_N] = {"records", "suppressed", "rotations",
							   "reopens"};

	return exporter_parse_counts(msg, len, "audit", keys, EXPORTER_AUDIT_N, out);
}

int exporter_parse_pace(const char *msg, size_t len, unsigned out[EXPORTER_PACE_N])
{
	static const char *const keys[EXPORTER_PACE_N] = {"budget_ppm", "control_ms"};

	return exporter_parse_counts(msg, len, "pace", keys, EXPORTER_PACE_N, out);
}

bool exporter_is_restart_message(const char *msg, size_t len)
{
	if (len > 0 && msg[len - 1] == '\n')
		len--;
	return len == 7 && memcmp(msg, "restart", 7) == 0;
}

bool exporter_read_supervisor(struct exporter *ex)
{
	unsigned pace[EXPORTER_PACE_N];
	char msg[256];
	ssize_t n;

	for (;;) {
		n = recv(LOWPROF_FD_NOTIFY, msg, sizeof(msg), MSG_DONTWAIT | MSG_TRUNC);
		if (n == 0)
			return true; /* the supervisor is gone: its end closed */
		if (n < 0)
			return false; /* nothing more (EAGAIN), or no supervisor at all (EBADF) */
		if ((size_t)n <= sizeof(msg) && exporter_parse_audit(msg, (size_t)n, ex->audit) == 0)
			ex->have_audit = true;
		else if ((size_t)n <= sizeof(msg) && exporter_is_restart_message(msg, (size_t)n))
			ex->restarting = true;
		else if ((size_t)n <= sizeof(msg) && exporter_parse_pace(msg, (size_t)n, pace) == 0)
			exporter_pace_set(ex, (double)pace[EXPORTER_PACE_BUDGET_PPM] / 10000.0,
					  (double)pace[EXPORTER_PACE_CONTROL_MS] / 1000.0);
		else if ((size_t)n > sizeof(msg) ||
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

	if (ex->profile == NULL || ex->restarting)
		return;
	profile_get_totals(ex->profile, &totals);
	/* Nothing ever came from the loader (it could not start, and the
	 * supervisor said why): a count of 0 samples and the files to look at
	 * would read as a run that found nothing to sample. */
	if (!ex->have_loader_stats && totals.samples == 0) {
		fprintf(stderr, "lowprof: nothing sampled: the loader never reported\n");
		return;
	}
	fprintf(stderr, "lowprof: %llu samples, %llu lost\n", (unsigned long long)totals.samples,
		(unsigned long long)lost);
	n = profile_top_functions(ex->profile, 5, top);
	for (i = 0; i < n; i++)
		fprintf(stderr, "lowprof:   %5.1f%%  %s\n", top[i].self_pct, top[i].name);
	fprintf(stderr, "lowprof: flame graph: %s/flamegraph.svg (also profile.pb.gz, profile.folded, summary.json)\n",
		ex->opt.output_label);
}
