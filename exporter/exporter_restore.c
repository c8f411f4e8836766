/*
 * A restarted exporter takes over from the one that died (exporter_state.h):
 * the window it last wrote (interval by interval, with the split written
 * beside it), the run's start time, and the count of the
 * samples it had read but not yet written. What it cannot take back (a
 * malformed state file, a profile.pb.gz refused by the reader's limits) is
 * moved aside and counted, never overwritten unseen.
 */
#include "exporter/exporter_loop.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mono_clock.h"
#include "exporter/exporter_checkpoint.h"
#include "exporter/formats/archive.h"
#include "exporter/formats/held_file.h"
#include "exporter/formats/pprof_reader.h"
#include "exporter/formats/window_split_file.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_window.h"
#include "exporter/profile/window_split.h"
#include "ipc/lowprof_fds.h"
#include "ipc/output_files.h"

static int exporter_set_aside(struct exporter *ex, const char *name)
{
	char err[256];

	if (exporter_state_set_aside(LOWPROF_FD_OUTDIR, name, err, sizeof(err)) != 0) {
		log_error("restart: %s could not be moved aside: %s", name, err);
		return -1;
	}
	ex->state.set_aside++;
	log_warn("restart: %s moved aside to %s.aside.1", name, name);
	return 0;
}

static void exporter_remove(const char *name)
{
	if (unlinkat(LOWPROF_FD_OUTDIR, name, 0) != 0 && errno != ENOENT)
		log_warn("removing %s: %s", name, strerror(errno));
}

/* A window file the previous exporter wrote (its time_nanos start_ns), or NULL:
 * a file refused or replaced by hand since is moved aside, never overwritten. */
static struct profile *exporter_reload_file(struct exporter *ex, const char *name,
					    uint64_t start_ns)
{
	struct profile *p = NULL;
	uint64_t start;
	char err[256];
	int rc;

	rc = pprof_reader_load_file(LOWPROF_FD_OUTDIR, name, &p, err, sizeof(err));
	if (rc != 0) {
		log_error("restart: %s refused, starting afresh: %s", name, err);
		if (rc != -ENOENT)
			exporter_set_aside(ex, name);
		return NULL;
	}
	profile_get_time(p, &start, NULL);
	if (start != start_ns) {
		log_error("restart: %s is not the one this run wrote (start %llu, expected %llu), starting afresh",
			  name, (unsigned long long)start, (unsigned long long)start_ns);
		profile_free(p);
		exporter_set_aside(ex, name);
		return NULL;
	}
	return p;
}

/* The checkpoint of the interval the previous exporter was collecting, when it
 * follows the window reloaded (or the run's start, without one): into
 * ex->restored_tail, to join the window as its newest closed interval.
 * Returns its samples. */
static uint64_t exporter_reload_checkpoint(struct exporter *ex, const struct exporter_state *old)
{
	uint64_t start, window_end = old->start_unix_ns;
	struct profile_totals totals;
	bool refused;

	if (ex->restored != NULL)
		profile_get_time(ex->restored, &start, &window_end);
	ex->restored_tail = exporter_checkpoint_reload(window_end, old->start_unix_ns,
						       exporter_unix_ns(), &refused);
	if (refused) /* cut short: no sample of it can be trusted */
		exporter_checkpoint_clear();
	if (ex->restored_tail == NULL)
		return 0;
	profile_get_totals(ex->restored_tail, &totals);
	return totals.samples;
}

/*
 * The split of a reloaded profile (profile.pb.gz, offcpu.pb.gz: what) by
 * interval, from the held file fd, when it is that file's
 * (window_split_check): the window then goes on interval by interval.
 * Without one the reloaded window is kept whole until its newest part
 * leaves; one that does not match (malformed, or left by an exporter killed
 * between its two writes) is refused and emptied.
 */
static struct window_split *exporter_reload_split(int fd, const char *what,
						  const struct profile *restored)
{
	struct window_split *split = NULL;
	char err[256];
	int rc;

	if (restored == NULL) {
		/* The split of a file not reloaded: of no use to the new window. */
		(void)held_file_clear(fd);
		return NULL;
	}
	rc = window_split_load_held(fd, &split, err, sizeof(err));
	if (rc == 0)
		rc = window_split_check(split, restored, err, sizeof(err));
	if (rc == 0)
		return split;
	window_split_free(split);
	if (rc == -ENOENT) {
		log_warn("restart: no window split of %s: the reloaded window is kept whole until its newest part leaves",
			 what);
		return NULL;
	}
	log_error("restart: the window split of %s refused (%s): the reloaded window is kept whole until its newest part leaves",
		  what, err);
	(void)held_file_clear(fd);
	return NULL;
}

/* The previous exporter's windows: into ex->restored and ex->offcpu_restored
 * (with their splits), to join the new windows. Returns the samples of its
 * checkpoint kept. */
static uint64_t exporter_reload_profile(struct exporter *ex, const struct exporter_state *old)
{
	struct profile_totals totals;
	uint64_t tail = 0;

	if (old->flushes > 0) /* else it died before writing the files */
		ex->restored = exporter_reload_file(ex, OUTPUT_FILE_PPROF, old->window_start_ns);
	ex->restored_split = exporter_reload_split(LOWPROF_FD_WINDOW_SPLIT, OUTPUT_FILE_PPROF,
						   ex->restored);
	tail = exporter_reload_checkpoint(ex, old);
	if (ex->restored != NULL) {
		profile_get_totals(ex->restored, &totals);
		ex->reloaded_samples = totals.samples;
	}
	ex->reloaded_samples += tail;
	if (!ex->opt.off_cpu)
		return tail;
	if (old->flushes > 0 && old->offcpu_window_start_ns != 0)
		ex->offcpu_restored = exporter_reload_file(ex, OUTPUT_FILE_OFFCPU_PPROF,
							   old->offcpu_window_start_ns);
	ex->offcpu_restored_split = exporter_reload_split(LOWPROF_FD_OFFCPU_WINDOW_SPLIT,
							  OUTPUT_FILE_OFFCPU_PPROF, ex->offcpu_restored);
	return tail;
}

/* A state file that cannot be read is kept aside; a fresh one takes its place. */
static void exporter_state_refused(struct exporter *ex)
{
	log_warn("%s is malformed: moving it aside, starting afresh", EXPORTER_STATE_FILE);
	close(ex->state_fd);
	exporter_set_aside(ex, EXPORTER_STATE_FILE);
	ex->state_fd = exporter_state_open(LOWPROF_FD_OUTDIR);
	if (ex->state_fd < 0) {
		log_warn("%s: %s; samples lost to a restart will not be counted", EXPORTER_STATE_FILE,
			 strerror(-ex->state_fd));
		ex->state_fd = -1;
	}
}

void exporter_restore(struct exporter *ex)
{
	struct exporter_state old;
	uint64_t pos = ex->ring.pos, read_total, now_unix, now_mono, lost = 0, tail = 0;
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
	if (rc == -EINVAL) {
		exporter_state_refused(ex);
		if (ex->state_fd < 0)
			return;
	}
	if (rc == 0 && ex->opt.run_id[0] != '\0' && strcmp(old.run_id, ex->opt.run_id) == 0) {
		ex->state.set_aside = old.set_aside;
		tail = exporter_reload_profile(ex, &old);
		/* The ring moves only after the record naming the new position was
		 * written, so it is at one of the two positions recorded. */
		if (pos == old.pos_after) {
			read_total = old.accepted_after;
		} else if (pos == old.pos_before) {
			read_total = old.accepted_before;
		} else {
			log_warn("restart: ring position %llu matches neither recorded one: lost samples unknown",
				 (unsigned long long)pos);
			read_total = old.written_samples;
		}
		/* Lost: read by the previous exporter, in neither the files nor the checkpoint. */
		if (read_total > old.written_samples + tail)
			lost = read_total - old.written_samples - tail;
		ex->samples_base = old.written_samples + tail + lost;
		ex->state.lost_total = old.lost_total + lost;
		ex->state.flushes = old.flushes;
		ex->state.written_samples = old.written_samples;
		ex->state.window_start_ns = old.window_start_ns;
		ex->state.offcpu_window_start_ns = old.offcpu_window_start_ns;
		if (ex->restored != NULL || ex->restored_tail != NULL) {
			/* The run's clock: durations and the timeline count from its start. */
			now_unix = exporter_unix_ns();
			now_mono = mono_ns();
			if (old.start_unix_ns <= now_unix && now_unix - old.start_unix_ns < now_mono) {
				ex->start_unix_ns = old.start_unix_ns;
				ex->start_mono_ns = now_mono - (now_unix - old.start_unix_ns);
			}
		}
		ex->state.start_unix_ns = ex->start_unix_ns;
		log_info("restart: reloaded %llu samples (%llu of them from the checkpoint); %llu read by the previous exporter were lost",
			 (unsigned long long)ex->reloaded_samples, (unsigned long long)tail,
			 (unsigned long long)lost);
	}
	/* Where earlier versions kept the splits (the memfds are this run's own,
	 * empty at its start, as is the checkpoint's). */
	exporter_remove(WINDOW_SPLIT_FILE);
	exporter_remove(OFFCPU_WINDOW_SPLIT_FILE);
	ex->state.pos_before = ex->state.pos_after = pos;
	ex->state.accepted_before = ex->state.accepted_after = ex->samples_base;
	rc = exporter_state_store(ex->state_fd, &ex->state);
	if (rc != 0)
		log_warn("%s: %s", EXPORTER_STATE_FILE, strerror(-rc));
}

/* *restored (taken) as the window's intervals by *split (taken), or whole as
 * its oldest interval without one; *tail (taken) its newest closed interval. */
static void exporter_window_restore(struct profile_window *w, struct profile **restored,
				    struct window_split **split, struct profile **tail,
				    uint64_t now_unix)
{
	struct profile_window_stats ws;
	uint64_t start, end;
	int rc = -EINVAL;

	if (*restored != NULL && *split != NULL) {
		rc = profile_window_restore(w, *restored, *split);
		if (rc == 0) {
			profile_window_get_stats(w, &ws);
			log_info("restart: the reloaded window's %zu intervals taken back (%zu still in the window): they leave one by one",
				 (*split)->nparts, ws.intervals);
			*restored = NULL;
		} else {
			log_warn("restart: the reloaded window's intervals could not be taken back (%s): it is kept whole",
				 strerror(-rc));
		}
	}
	window_split_free(*split);
	*split = NULL;
	if (*restored != NULL) {
		profile_get_time(*restored, &start, &end);
		if (end < start || end > now_unix)
			end = now_unix;
		if (profile_window_adopt(w, *restored, start, end) != 0)
			log_warn("restart: the reloaded window could not be kept");
		*restored = NULL;
	}
	if (*tail != NULL) {
		profile_get_time(*tail, &start, &end);
		if (profile_window_push_closed(w, *tail, start, end) != 0)
			log_warn("restart: the checkpoint of the last interval could not be kept");
		*tail = NULL;
	}
}

/* A window of the run's shape, the previous exporter's in it. */
static struct profile_window *exporter_new_window(struct exporter *ex, struct profile **restored,
						  struct window_split **split,
						  struct profile **tail, uint64_t now_unix)
{
	struct profile_window *w;
	bool restart = *restored != NULL || *tail != NULL;

	/* A fresh run's window starts with it; a restart's, now, after the one reloaded. */
	w = profile_window_new((uint64_t)ex->opt.window.window_s * NSEC_PER_SEC,
			       (uint64_t)ex->opt.interval_s * NSEC_PER_SEC, ex->opt.window.max_stacks,
			       restart ? now_unix : ex->start_unix_ns);
	if (w == NULL)
		fatal(LOWPROF_EXIT_FAILURE, "out of memory");
	exporter_window_restore(w, restored, split, tail, now_unix);
	return w;
}

void exporter_window_start(struct exporter *ex)
{
	uint64_t now_unix = ex->start_unix_ns + (mono_ns() - ex->start_mono_ns);
	struct profile *no_tail = NULL;
	char err[256];
	int rc;

	ex->window = exporter_new_window(ex, &ex->restored, &ex->restored_split,
					 &ex->restored_tail, now_unix);
	if (ex->opt.off_cpu)
		ex->offcpu_window = exporter_new_window(ex, &ex->offcpu_restored,
							&ex->offcpu_restored_split, &no_tail, now_unix);
	if (ex->opt.window.archive) {
		rc = archive_open(LOWPROF_FD_OUTDIR,
				  (uint64_t)ex->opt.window.archive_max_age_s * NSEC_PER_SEC,
				  (uint64_t)ex->opt.window.archive_max_mb << 20, &ex->archive, err,
				  sizeof(err));
		if (ex->archive == NULL)
			fatal(LOWPROF_EXIT_FAILURE, "%s", err);
		if (rc != 0) {
			/* Kept aside, never overwritten: the files it lists stay on disk. */
			log_error("restart: %s refused (%s); the files it lists are kept, not pruned",
				  ARCHIVE_INDEX_FILE, err);
			if (exporter_set_aside(ex, ARCHIVE_INDEX_FILE) == 0)
				archive_index_moved(ex->archive);
			else
				log_error("%s stays in place: the archive writes no index of its own this run",
					  ARCHIVE_INDEX_FILE);
		}
	}
}
