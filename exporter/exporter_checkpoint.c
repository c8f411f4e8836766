/*
 * The checkpoint of the interval being collected (exporter_checkpoint.h).
 *
 * The files are rewritten once per --interval (10 s by default); an exporter
 * that dies between two writes took the samples it had read since the last
 * one with it: up to an interval of the run, gone from the window. So while
 * samples come, the current interval is also written on its own, at most
 * every EXPORTER_CHECKPOINT_NS, as a small pprof (it holds one interval, not
 * the window). The paced writes after a roll hold the closed intervals only
 * (profile_window_merged_closed), so the window file ends where the current
 * interval begins and the two never hold the same sample: a restarted
 * exporter takes the checkpoint when it begins at or after the window
 * file's end, and counts as lost only what neither holds.
 *
 * It is kept in a memfd the supervisor holds (LOWPROF_FD_CHECKPOINT,
 * formats/held_file.h), not in the output directory: only a restarted
 * exporter of the same run reads it, so it has to outlive the exporter, not
 * the host, and no disk needs to see it. A checkpoint the exporter's death
 * cut short fails its gzip check when read back and is counted lost.
 */
#include "exporter/exporter_checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/mono_clock.h"
#include "exporter/exporter_loop.h"
#include "exporter/formats/held_file.h"
#include "exporter/formats/pprof_reader.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_window.h"
#include "ipc/lowprof_fds.h"

uint64_t exporter_checkpoint_gap_ns(uint64_t cost_ns, uint64_t allowance_ns, uint64_t slot_ns)
{
	double gap;

	if (allowance_ns == UINT64_MAX || allowance_ns == 0 || cost_ns == 0)
		return EXPORTER_CHECKPOINT_NS;
	/* cost / gap <= allowance / slot / SHARE; in double: slot_ns may be an hour. */
	gap = (double)cost_ns * EXPORTER_CHECKPOINT_SHARE * (double)slot_ns / (double)allowance_ns;
	if (gap <= (double)EXPORTER_CHECKPOINT_NS)
		return EXPORTER_CHECKPOINT_NS;
	if (gap >= (double)EXPORTER_CHECKPOINT_MAX_NS)
		return EXPORTER_CHECKPOINT_MAX_NS;
	return (uint64_t)gap;
}

bool exporter_checkpoint_due(const struct exporter_checkpoint *c, uint64_t interval_start_ns,
			     uint64_t samples, uint64_t now_mono_ns, uint64_t gap_ns)
{
	if (samples == 0)
		return false;
	if (interval_start_ns == c->interval_start_ns && samples == c->samples)
		return false; /* nothing new since the last one */
	return c->written_mono_ns == 0 || now_mono_ns - c->written_mono_ns >= gap_ns;
}

int exporter_checkpoint_json(const struct exporter_checkpoint *c, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "{\"writes\": %llu, \"failures\": %llu, \"cpu_ms\": %.3f, "
			 "\"cost_ms\": %.3f, \"max_cost_ms\": %.3f, \"every_s\": %.1f}",
			 (unsigned long long)c->written, (unsigned long long)c->failures,
			 (double)c->cpu_ns / 1e6, (double)c->cost_ns / 1e6, (double)c->max_cost_ns / 1e6,
			 (double)(c->gap_ns ? c->gap_ns : EXPORTER_CHECKPOINT_NS) / 1e9);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* The gap by cost, and at rest at least an --interval (up to
 * EXPORTER_CHECKPOINT_MAX_NS): an interval holding a trickle goes on for up
 * to max_every --intervals (output_pace_extend), and a checkpoint at each of
 * the loader's notices (a ping interval apart at rest) was most of the
 * exporter's cost at rest. A death then loses at most that much of a trickle,
 * and counts it.
 * The trickle is judged over at least an --interval: a few samples just
 * after a roll are no rate. */
static uint64_t checkpoint_gap(const struct exporter *ex, uint64_t span_ns)
{
	uint64_t gap = exporter_checkpoint_gap_ns(ex->checkpoint.cost_ns, ex->pace.allowance_ns,
						  ex->slot_ns);
	uint64_t interval = (uint64_t)ex->opt.interval_s * NSEC_PER_SEC;
	uint64_t rest = interval < EXPORTER_CHECKPOINT_MAX_NS ? interval : EXPORTER_CHECKPOINT_MAX_NS;

	if (gap >= rest || !exporter_trickle(ex, span_ns > interval ? span_ns : interval))
		return gap;
	return rest;
}

void exporter_checkpoint(struct exporter *ex)
{
	struct exporter_checkpoint *c = &ex->checkpoint;
	struct profile *cur = profile_window_current(ex->window);
	uint64_t start = profile_window_current_start(ex->window), now = mono_ns(), cpu0, cost;
	uint64_t now_unix = ex->start_unix_ns + (now - ex->start_mono_ns);
	uint64_t span = now_unix > start ? now_unix - start : 0;
	struct profile_totals t;
	char err[320];

	/* Without the state file nothing is reloaded after a restart. */
	if (ex->state_fd < 0)
		return;
	profile_get_totals(cur, &t);
	c->gap_ns = checkpoint_gap(ex, span);
	if (!exporter_checkpoint_due(c, start, t.samples, now, c->gap_ns))
		return;
	cpu0 = thread_cpu_ns();
	/* Timed to now; the roll times it again when it closes the interval. */
	profile_set_time(cur, start, now_unix);
	if (pprof_write_held(LOWPROF_FD_CHECKPOINT, cur, err, sizeof(err)) != 0) {
		c->failures++;
		if ((c->failures & (c->failures - 1)) == 0) /* the 1st, 2nd, 4th, ... */
			log_warn("checkpoint: %s", err);
	} else {
		c->written++;
	}
	c->interval_start_ns = start;
	c->samples = t.samples;
	c->written_mono_ns = now;
	cost = thread_cpu_ns() - cpu0;
	/* Never 0 once one was written: 0 means "not measured yet". */
	c->cost_ns = cost ? cost : 1;
	if (cost > c->max_cost_ns)
		c->max_cost_ns = cost;
	c->cpu_ns += cost;
	c->gap_ns = checkpoint_gap(ex, span);
	output_pace_charge(&ex->pace, cost);
}

void exporter_checkpoint_clear(void)
{
	int rc = held_file_clear(LOWPROF_FD_CHECKPOINT);

	if (rc != 0)
		log_warn("checkpoint: emptying it: %s", strerror(-rc));
}

struct profile *exporter_checkpoint_reload(uint64_t window_end_ns, uint64_t run_start_ns,
					   uint64_t now_unix_ns, bool *refused)
{
	struct profile *p = NULL;
	uint64_t start, end;
	char err[256];
	int rc;

	*refused = false;
	rc = pprof_reader_load_held(LOWPROF_FD_CHECKPOINT, &p, err, sizeof(err));
	if (rc == -ENOENT)
		return NULL;
	if (rc != 0) {
		log_error("restart: the checkpoint refused: %s", err);
		*refused = true;
		return NULL;
	}
	profile_get_time(p, &start, &end);
	/* Only the tail after the window file, of this run, and not from the future. */
	if (start < window_end_ns || start < run_start_ns || end < start || end > now_unix_ns) {
		profile_free(p);
		return NULL;
	}
	return p;
}
