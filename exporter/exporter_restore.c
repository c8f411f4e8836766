/*
 * A restarted exporter takes over from the one that died (exporter_state.h):
 * the profile it last wrote, the run's start time, and the count of the
 * samples it had read but not yet written.
 */
#include "exporter/exporter_loop.h"

#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "common/mono_clock.h"
#include "exporter/formats/pprof_reader.h"
#include "exporter/profile/profile.h"
#include "ipc/lowprof_fds.h"
#include "ipc/output_files.h"

/* The previous exporter of this run: its profile back into ex->profile. */
static void exporter_reload_profile(struct exporter *ex, const struct exporter_state *old)
{
	struct profile *p = NULL;
	struct profile_totals totals;
	uint64_t start;
	char err[256];
	int rc;

	if (old->flushes == 0)
		return; /* it died before writing anything: nothing of this run to reload */
	rc = pprof_reader_load_file(LOWPROF_FD_OUTDIR, OUTPUT_FILE_PPROF, &p, err, sizeof(err));
	if (rc != 0) {
		log_error("restart: profile.pb.gz refused, starting a fresh profile: %s", err);
		return;
	}
	profile_get_time(p, &start, NULL);
	if (start != old->start_unix_ns) {
		/* Written by another run (or replaced by hand): not ours to continue. */
		log_error("restart: profile.pb.gz is not this run's (start %llu, expected %llu), starting a fresh profile",
			  (unsigned long long)start, (unsigned long long)old->start_unix_ns);
		profile_free(p);
		return;
	}
	profile_free(ex->profile);
	ex->profile = p;
	profile_get_totals(p, &totals);
	ex->reloaded_samples = totals.samples;
}

void exporter_restore(struct exporter *ex)
{
	struct exporter_state old;
	uint64_t pos = ex->ring.pos, read_total, now_unix, now_mono, lost = 0;
	int rc;

	ex->state_fd = exporter_state_open(LOWPROF_FD_OUTDIR);
	if (ex->state_fd < 0) {
		log_warn("%s: %s; samples lost to a restart will not be counted", EXPORTER_STATE_FILE,
			 strerror(-ex->state_fd));
		ex->state_fd = -1;
		return;
	}
	memset(&ex->state, 0, sizeof(ex->state));
	memcpy(ex->state.run_id, ex->opt.run_id, sizeof(ex->state.run_id));
	ex->state.start_unix_ns = ex->start_unix_ns;
	rc = exporter_state_load(ex->state_fd, &old);
	if (rc == -EINVAL)
		log_warn("%s is malformed: starting afresh", EXPORTER_STATE_FILE);
	if (rc == 0 && ex->opt.run_id[0] != '\0' && strcmp(old.run_id, ex->opt.run_id) == 0) {
		exporter_reload_profile(ex, &old);
		/* The ring moves only after the record naming the new position was
		 * written, so it is at one of the two positions recorded. */
		if (pos == old.pos_after) {
			read_total = old.accepted_after;
		} else if (pos == old.pos_before) {
			read_total = old.accepted_before;
		} else {
			log_warn("restart: ring position %llu matches neither recorded one: lost samples unknown",
				 (unsigned long long)pos);
			read_total = ex->reloaded_samples;
		}
		if (read_total > ex->reloaded_samples)
			lost = read_total - ex->reloaded_samples;
		ex->state.lost_total = old.lost_total + lost;
		ex->state.flushes = old.flushes;
		if (ex->reloaded_samples > 0) {
			/* The run's clock: durations and the timeline count from its start. */
			now_unix = exporter_unix_ns();
			now_mono = mono_ns();
			if (old.start_unix_ns <= now_unix && now_unix - old.start_unix_ns < now_mono) {
				ex->start_unix_ns = old.start_unix_ns;
				ex->start_mono_ns = now_mono - (now_unix - old.start_unix_ns);
			}
		}
		ex->state.start_unix_ns = ex->start_unix_ns;
		log_info("restart: reloaded %llu samples; %llu read by the previous exporter were lost",
			 (unsigned long long)ex->reloaded_samples, (unsigned long long)lost);
	}
	ex->state.pos_before = ex->state.pos_after = pos;
	ex->state.accepted_before = ex->state.accepted_after = ex->reloaded_samples;
	rc = exporter_state_store(ex->state_fd, &ex->state);
	if (rc != 0)
		log_warn("%s: %s", EXPORTER_STATE_FILE, strerror(-rc));
}
