#include "exporter/ingest.h"

#include <errno.h>
#include <string.h>

#include "bpf/offcpu.h"
#include "exporter/otlp/process_info.h"
#include "exporter/profile/frame.h"
#include "exporter/profile/profile.h"
#include "exporter/symbols/stack_cache.h"
#include "exporter/symbols/symbolizer.h"

/*
 * Every frame but the leaf holds a return address: the instruction after the
 * call. Looking up address - 1 names the caller even when the call was the
 * last instruction of its function (a noreturn call, for instance).
 */
static uint64_t ingest_lookup_address(uint64_t addr, size_t index_from_leaf)
{
	return index_from_leaf == 0 || addr == 0 ? addr : addr - 1;
}

/* The two tables agree on the reasons' numbering; the exporter's own follow BPF's. */
_Static_assert(PROFILE_STOP_USER_SKIPPED == LOWPROF_STOP_REASONS, "one marker per stop reason");

bool ingest_uses_maps(const struct sample_view *sv)
{
	size_t i;

	for (i = 0; i < sv->hdr->user_depth; i++) {
		if (LOWPROF_FRAME_KIND(sv->user_frames[i]) == LOWPROF_FRAME_RAW)
			return true;
	}
	return false;
}

/*
 * One user frame by its kind: an offset in a file of the sample's list, in
 * the vDSO, or a raw address. 0 (named), 1 (named, but not to be cached: its
 * file or mapping could not be had yet), -ENOMEM.
 */
static int ingest_user_frame(struct symbolizer *sym, const struct sample_view *sv, uint64_t word,
			     size_t n, struct frame *out)
{
	unsigned kind = LOWPROF_FRAME_KIND(word);
	uint64_t v = ingest_lookup_address(LOWPROF_FRAME_VALUE(word), n);
	int rc;

	if (kind == LOWPROF_FRAME_VDSO)
		return symbolizer_vdso_frame(sym, v, out);
	if (kind != LOWPROF_FRAME_RAW) /* 1..nfiles: sample_record_decode checked it */
		return symbolizer_file_frame(sym, &sv->files[kind - 1], v, out);
	rc = symbolizer_user_frame(sym, sv->hdr->pid, v, out);
	/* In no known mapping: the symbolizer reads the maps again for it, which
	 * a cached stack would skip. */
	return rc == 0 && out->module == NULL ? 1 : rc;
}

/* Symbolize every frame, and end a stack cut early with the marker that says
 * why; *cacheable false when a frame is provisional (ingest_user_frame). */
static size_t ingest_symbolize(struct symbolizer *sym, const struct sample_view *sv,
			       struct frame *frames, bool *cacheable)
{
	const struct lowprof_sample *h = sv->hdr;
	const char *marker = NULL;
	size_t n = 0, i;
	int rc;

	*cacheable = true;
	for (i = 0; i < h->kernel_depth; i++) {
		if (symbolizer_kernel_frame(sym, ingest_lookup_address(sv->kernel_frames[i], n),
					    &frames[n]) == 0)
			n++;
	}
	for (i = 0; i < h->user_depth; i++) {
		rc = ingest_user_frame(sym, sv, sv->user_frames[i], n, &frames[n]);
		if (rc >= 0)
			n++;
		if (rc == 1)
			*cacheable = false;
	}
	if (h->user_stop != LOWPROF_STOP_NONE)
		marker = profile_stop_names[h->user_stop];
	else if (h->flags & LOWPROF_SAMPLE_USER_SKIPPED)
		marker = profile_stop_names[PROFILE_STOP_USER_SKIPPED];
	else if (n == 0)
		marker = profile_stop_names[PROFILE_STOP_NO_STACK];
	if (marker != NULL) {
		/* Outermost: the stack goes on beyond it, unknown, rather than guessed. */
		memset(&frames[n], 0, sizeof(frames[n]));
		frames[n].function = marker;
		n++;
	}
	return n;
}

/* Cache key words beyond the frames: the skipped flag, the stop reason and
 * file count, then
 * two words per file of the list (frames name files by their place in it). */
#define INGEST_KEY_MAX (1 + LOWPROF_MAX_FRAMES + 1 + 2 * LOWPROF_SAMPLE_MAX_FILES)

/* The frames of the sample (*out): from the cache when this stack was seen before
 * (then *hit holds the entry, its memos among it; else hit->frames is NULL),
 * else symbolized into frames. */
static size_t ingest_frames(struct stack_cache *cache, struct symbolizer *sym,
			    const struct sample_view *sv, struct frame *frames, const struct frame **out,
			    struct stack_cache_hit *hit)
{
	const struct lowprof_sample *h = sv->hdr;
	uint64_t key[INGEST_KEY_MAX], gen;
	size_t nkey = 0, n, i;
	bool cacheable, raw;
	uint32_t pid;

	*out = frames;
	hit->frames = NULL;
	raw = ingest_uses_maps(sv);
	/* A pid that runs another program (or is another process) since its maps
	 * were read (bpf/lowprof.h, image_id) has them read again before its
	 * addresses are named, and before its stacks' generation is taken. */
	if (raw)
		symbolizer_note_image(sym, h->pid, h->image_id);
	if (cache == NULL)
		return ingest_symbolize(sym, sv, frames, &cacheable);
	/* The kernel depth first: which addresses are kernel ones is part of the stack. */
	key[nkey++] = h->kernel_depth;
	for (i = 0; i < h->kernel_depth; i++)
		key[nkey++] = sv->kernel_frames[i];
	for (i = 0; i < h->user_depth; i++)
		key[nkey++] = sv->user_frames[i];
	key[nkey++] = ((uint64_t)!!(h->flags & LOWPROF_SAMPLE_USER_SKIPPED) << 16) |
		      ((uint64_t)h->nfiles << 8) | h->user_stop;
	for (i = 0; i < h->nfiles; i++) {
		key[nkey++] = sv->files[i].ino;
		key[nkey++] = ((uint64_t)sv->files[i].dev << 32) | sv->files[i].gen;
	}
	/* Without raw addresses the frames depend on no pid: one entry serves
	 * every process of the same binaries (a churn of short-lived ones). */
	pid = raw ? h->pid : 0;
	gen = raw ? symbolizer_stack_generation(sym, pid)
		  : symbolizer_files_generation(sym, h->kernel_depth > 0);
	if (stack_cache_lookup(cache, pid, key, nkey, gen, hit)) {
		*out = hit->frames;
		return hit->nframes;
	}
	hit->frames = NULL;
	n = ingest_symbolize(sym, sv, frames, &cacheable);
	/* Symbolizing may have read the pid's maps: the generation after it is the one. */
	gen = raw ? symbolizer_stack_generation(sym, pid)
		  : symbolizer_files_generation(sym, h->kernel_depth > 0);
	if (cacheable)
		(void)stack_cache_put(cache, pid, key, nkey, gen, frames, n);
	return n;
}

/*
 * Which of a cached stack's memos (stack_cache.h) each profile uses. A
 * record is on-CPU or off-CPU, never both, so the two kinds share them: a
 * stack seen both ways (rare: an off-CPU stack ends in the scheduler) only
 * fills its memos again.
 */
enum ingest_memo {
	INGEST_MEMO_RUN,      /* the cumulative profile, or the off-CPU one */
	INGEST_MEMO_INTERVAL, /* the OTLP interval's (on- or off-CPU) */
};

/* Adds the sample to p: through the cached stack's memo for p when there is one. */
static int ingest_add(struct profile *p, const struct stack_cache_hit *hit, enum ingest_memo which,
		      uint64_t epoch, const struct sample_view *sv, const struct frame *frames,
		      size_t n, uint64_t count)
{
	const struct lowprof_sample *h = sv->hdr;
	bool truncated = (h->flags & LOWPROF_SAMPLE_USER_TRUNCATED) != 0;

	if (hit->frames != NULL)
		return profile_add_sample_memo(p, epoch, &hit->memo[which], h->pid, h->tid, sv->comm,
					       frames, n, truncated, count, h->period_ns);
	return profile_add_sample_epoch(p, epoch, h->pid, h->tid, sv->comm, frames, n, truncated,
					count, h->period_ns);
}

/* The sample into the run's profile and, when exporting OTLP, the interval's. */
static int ingest_add_both(struct profile *run, struct profile *interval,
			   const struct stack_cache_hit *hit, uint64_t epoch,
			   const struct sample_view *sv, const struct frame *frames, size_t n,
			   uint64_t count, struct ingest_stats *st)
{
	int rc = ingest_add(run, hit, INGEST_MEMO_RUN, epoch, sv, frames, n, count);

	if (rc == 0 && interval != NULL &&
	    ingest_add(interval, hit, INGEST_MEMO_INTERVAL, epoch, sv, frames, n, count) != 0)
		st->interval_refused++;
	return rc;
}

int ingest_sample(const struct ingest_targets *t, struct symbolizer *sym,
		  const struct sample_view *sv, struct ingest_stats *st)
{
	struct frame buf[LOWPROF_MAX_FRAMES + 1]; /* and a stop marker */
	const struct lowprof_sample *h = sv->hdr;
	struct stack_cache_hit hit;
	const struct frame *frames;
	uint64_t epoch, us;
	size_t n;
	int rc;

	n = ingest_frames(t->stacks, sym, sv, buf, &frames, &hit);
	if (h->flags & LOWPROF_SAMPLE_USER_TRUNCATED)
		st->truncated++;
	if (h->flags & LOWPROF_SAMPLE_NO_USER_STACK)
		st->no_user_stack++;
	/* First sight of a pid (and of another image of it) reads /proc/PID/exe
	 * and /proc/PID/cgroup now, while the process still exists; the cache
	 * keeps them after it exits. */
	if (t->procs != NULL)
		(void)process_info_observe(t->procs, h->pid, h->image_id);
	/* The frames' strings are the symbolizer's (cached ones too: the stack
	 * cache drops what a rebuilt string table invalidated) or constants. */
	epoch = symbolizer_strings_epoch(sym);
	/* An off-CPU record: its own profile, its weight (ns) as time, the count
	 * in microseconds (exporter/formats/offcpu_outputs.h). */
	if (h->flags & LOWPROF_SAMPLE_OFF_CPU) {
		if (t->offcpu == NULL)
			return 0;
		us = h->period_ns / 1000;
		rc = ingest_add_both(t->offcpu, t->offcpu_interval, &hit, epoch, sv, frames, n,
				     us ? us : 1, st);
		if (rc == 0)
			st->offcpu++;
		return rc;
	}
	/* A cached stack keeps its locations and its stack in each profile: the
	 * next sample of it is added without a lookup per frame. */
	rc = ingest_add_both(t->cumulative, t->interval, &hit, epoch, sv, frames, n, 1, st);
	if (rc == 0)
		st->samples++;
	return rc;
}
