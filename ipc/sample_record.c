#include "ipc/sample_record.h"
#include "ipc/loader_stats.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define KNOWN_FLAGS (LOWPROF_SAMPLE_USER_TRUNCATED | LOWPROF_SAMPLE_KERNEL_TRUNCATED | \
		     LOWPROF_SAMPLE_USER_SKIPPED | LOWPROF_SAMPLE_NO_USER_STACK)

int sample_record_decode(const void *buf, size_t len, struct sample_view *out,
			 char *err, size_t errlen)
{
	const struct lowprof_sample *s = buf;
	size_t frames;

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
	frames = (size_t)s->kernel_depth + s->user_depth;
	if (len != LOWPROF_SAMPLE_HEADER_SIZE + frames * sizeof(__u64)) {
		snprintf(err, errlen, "sample length %zu does not match its %zu frames", len, frames);
		return -EINVAL;
	}
	if (s->flags & ~KNOWN_FLAGS) {
		snprintf(err, errlen, "sample has unknown flags 0x%x", s->flags);
		return -EINVAL;
	}
	out->hdr = s;
	out->kernel_frames = s->frames;
	out->user_frames = s->frames + s->kernel_depth;
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
	return 0;
}
