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

/* Symbolize every frame; *cacheable false when a user address fell in no known mapping
 * (the symbolizer reads the maps again for it, which a cached stack would skip). */
static size_t ingest_symbolize(struct symbolizer *sym, const struct sample_view *sv,
			       struct frame *frames, bool *cacheable)
{
	const struct lowprof_sample *h = sv->hdr;
	size_t n = 0, i;

	*cacheable = true;
	for (i = 0; i < h->kernel_depth; i++) {
		if (symbolizer_kernel_frame(sym, ingest_lookup_address(sv->kernel_frames[i], n),
					    &frames[n]) == 0)
			n++;
	}
	for (i = 0; i < h->user_depth; i++) {
		if (symbolizer_user_frame(sym, h->pid, ingest_lookup_address(sv->user_frames[i], n),
					  &frames[n]) == 0) {
			if (frames[n].module == NULL)
				*cacheable = false;
			n++;
		}
	}
	return n;
}

/* The frames of the sample (*out): from the cache when this stack was seen before,
 * else symbolized into frames. */
static size_t ingest_frames(struct stack_cache *cache, struct symbolizer *sym,
			    const struct sample_view *sv, struct frame *frames, const struct frame **out)
{
	const struct lowprof_sample *h = sv->hdr;
	uint64_t key[1 + LOWPROF_MAX_FRAMES], gen;
	size_t nkey = 0, n, i;
	bool cacheable;

	*out = frames;
	if (cache == NULL)
		return ingest_symbolize(sym, sv, frames, &cacheable);
	/* The kernel depth first: which addresses are kernel ones is part of the stack. */
	key[nkey++] = h->kernel_depth;
	for (i = 0; i < h->kernel_depth && nkey < sizeof(key) / sizeof(key[0]); i++)
		key[nkey++] = sv->kernel_frames[i];
	for (i = 0; i < h->user_depth && nkey < sizeof(key) / sizeof(key[0]); i++)
		key[nkey++] = sv->user_frames[i];
	gen = symbolizer_stack_generation(sym, h->pid);
	*out = stack_cache_get(cache, h->pid, key, nkey, gen, &n);
	if (*out != NULL)
		return n;
	*out = frames;
	n = ingest_symbolize(sym, sv, frames, &cacheable);
	/* Symbolizing may have read the pid's maps: the generation after it is the one. */
	if (cacheable)
		(void)stack_cache_put(cache, h->pid, key, nkey, symbolizer_stack_generation(sym, h->pid),
				      frames, n);
	return n;
}

/* An off-CPU record: its own profile, its weight (ns) as time, the count in
 * microseconds (exporter/formats/offcpu_outputs.h). */
static int ingest_offcpu(const struct ingest_targets *t, const struct sample_view *sv,
			 const struct frame *frames, size_t n, struct ingest_stats *st)
{
	const struct lowprof_sample *h = sv->hdr;
	uint64_t us = h->period_ns / 1000;
	int rc;

	if (t->offcpu == NULL)
		return 0;
	rc = profile_add_sample(t->offcpu, h->pid, h->tid, sv->comm, frames, n,
				(h->flags & LOWPROF_SAMPLE_USER_TRUNCATED) != 0, us ? us : 1,
				h->period_ns);
	if (rc == 0)
		st->offcpu++;
	if (rc == 0 && t->offcpu_interval != NULL &&
	    profile_add_sample(t->offcpu_interval, h->pid, h->tid, sv->comm, frames, n,
			       (h->flags & LOWPROF_SAMPLE_USER_TRUNCATED) != 0, us ? us : 1,
			       h->period_ns) != 0)
		st->interval_refused++;
	return rc;
}

int ingest_sample(const struct ingest_targets *t, struct symbolizer *sym,
		  const struct sample_view *sv, struct ingest_stats *st)
{
	struct frame buf[LOWPROF_MAX_FRAMES];
	const struct lowprof_sample *h = sv->hdr;
	const struct frame *frames;
	size_t n;
	int rc;

	n = ingest_frames(t->stacks, sym, sv, buf, &frames);
	if (h->flags & LOWPROF_SAMPLE_USER_TRUNCATED)
		st->truncated++;
	if (h->flags & LOWPROF_SAMPLE_NO_USER_STACK)
		st->no_user_stack++;
	/* First sight of a pid reads /proc/PID/exe and /proc/PID/cgroup now, while
	 * the process still exists; the cache keeps them after it exits. */
	if (t->procs != NULL)
		(void)process_info_lookup(t->procs, h->pid);
	if (h->flags & LOWPROF_SAMPLE_OFF_CPU)
		return ingest_offcpu(t, sv, frames, n, st);
	rc = profile_add_sample(t->cumulative, h->pid, h->tid, sv->comm, frames, n,
				(h->flags & LOWPROF_SAMPLE_USER_TRUNCATED) != 0, 1, h->period_ns);
	if (rc == 0)
		st->samples++;
	if (rc == 0 && t->interval != NULL &&
	    profile_add_sample(t->interval, h->pid, h->tid, sv->comm, frames, n,
			       (h->flags & LOWPROF_SAMPLE_USER_TRUNCATED) != 0, 1, h->period_ns) != 0)
		st->interval_refused++;
	return rc;
}
