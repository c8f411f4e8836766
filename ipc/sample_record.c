#include "ipc/sample_record.h"
#include "ipc/loader_stats.h"
#include "bpf/offcpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define KNOWN_FLAGS (LOWPROF_SAMPLE_USER_TRUNCATED | LOWPROF_SAMPLE_KERNEL_TRUNCATED | \
		     LOWPROF_SAMPLE_USER_SKIPPED | LOWPROF_SAMPLE_NO_USER_STACK | \
		     LOWPROF_SAMPLE_OFF_CPU)

int sample_record_decode(const void *buf, size_t len, struct sample_view *out,
			 char *err, size_t errlen)
{
	const struct lowprof_sample *s = buf;
	size_t frames, i;

	if (len < LOWPROF_SAMPLE_HEADER_SIZE) {
		snprintf(err, errlen, "sample of %zu bytes is shorter than its header (%zu)",
			 len, (size_t)LOWPROF_SAMPLE_HEADER_SIZE);
		return -EINVAL;
	}
	if (s->kernel_depth > LOWPROF_MAX_KERNEL_DEPTH || s->user_depth > LOWPROF_MAX_USER_DEPTH) {
		snprintf(err, errlen, "sample depth out of range (kernel %u, user %u)",
			 s->kernel_depth, s->user_depth);
		return -EINVAL;
	}
	if (s->nfiles > LOWPROF_SAMPLE_MAX_FILES) {
		snprintf(err, errlen, "sample names %u files (at most %u)", s->nfiles,
			 LOWPROF_SAMPLE_MAX_FILES);
		return -EINVAL;
	}
	frames = (size_t)s->kernel_depth + s->user_depth;
	if (len != LOWPROF_SAMPLE_HEADER_SIZE + frames * sizeof(__u64) +
			   (size_t)s->nfiles * sizeof(struct lowprof_file_id)) {
		snprintf(err, errlen, "sample length %zu does not match its %zu frames and %u files",
			 len, frames, s->nfiles);
		return -EINVAL;
	}
	if (s->flags & ~KNOWN_FLAGS) {
		snprintf(err, errlen, "sample has unknown flags 0x%x", s->flags);
		return -EINVAL;
	}
	if (s->user_stop >= LOWPROF_STOP_REASONS) {
		snprintf(err, errlen, "sample has unknown stop reason %u", s->user_stop);
		return -EINVAL;
	}
	out->hdr = s;
	out->kernel_frames = s->frames;
	out->user_frames = s->frames + s->kernel_depth;
	out->files = (const struct lowprof_file_id *)(s->frames + frames);
	/* A frame naming no entry of the list would index past it downstream. */
	for (i = 0; i < s->user_depth; i++) {
		unsigned kind = LOWPROF_FRAME_KIND(out->user_frames[i]);

		if (kind != LOWPROF_FRAME_RAW && kind != LOWPROF_FRAME_VDSO && kind > s->nfiles) {
			snprintf(err, errlen, "user frame %zu names file %u of %u", i, kind, s->nfiles);
			return -EINVAL;
		}
	}
	memcpy(out->comm, s->comm, LOWPROF_COMM_LEN);
	out->comm[LOWPROF_COMM_LEN] = '\0';
	return 0;
}

int loader_stats_decode(const void *buf, size_t len, struct lowprof_loader_stats *out)
{
	if (len != sizeof(*out))
		return -EINVAL;
	memcpy(out, buf, sizeof(*out));
	if (out->version != LOWPROF_LOADER_STATS_VERSION)
		return -EINVAL;
	/* The off-CPU state in force: a probability and a flag. */
	if (out->offcpu_prob_ppm > LOWPROF_OFFCPU_PPM_ONE || out->offcpu_attached > 1)
		return -EINVAL;
	return 0;
}

#define TIMELINE_KNOWN_FLAGS (LOWPROF_TIMELINE_FAILSAFE | LOWPROF_TIMELINE_HOST_VALID)

int timeline_entry_decode(const void *buf, size_t len, struct lowprof_timeline_entry *out)
{
	if (len != sizeof(*out))
		return -EINVAL;
	memcpy(out, buf, sizeof(*out));
	if (out->version != LOWPROF_TIMELINE_VERSION || (out->flags & ~TIMELINE_KNOWN_FLAGS) != 0 ||
	    out->reserved != 0)
		return -EINVAL;
	/* Tier 0..2, unwind 0..1: the values the loader can be in. */
	if (out->tier > 2 || out->unwind > LOWPROF_UNWIND_DWARF || out->paused > 1)
		return -EINVAL;
	if (out->frequency_hz == 0 || out->max_depth == 0 || out->max_depth > LOWPROF_MAX_USER_DEPTH ||
	    out->sample_divisor == 0 || out->online_cpus == 0 || out->interval_ns == 0)
		return -EINVAL;
	if (out->host_cpu_centipct > 10000 || out->cpu_budget_centipct > 10000)
		return -EINVAL;
	if (out->offcpu_prob_ppm > LOWPROF_OFFCPU_PPM_ONE || out->offcpu_attached > 1)
		return -EINVAL;
	return 0;
}
