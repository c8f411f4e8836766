/*
 * Decoding a struct lowprof_sample received from another process (the shared
 * memory ring): the bytes are untrusted until sample_record_decode() accepts them.
 */
#ifndef LOWPROF_IPC_SAMPLE_RECORD_H
#define LOWPROF_IPC_SAMPLE_RECORD_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/lowprof.h"

/* A validated sample: points into the caller's buffer (no copy). */
struct sample_view {
	const struct lowprof_sample *hdr;
	const __u64 *kernel_frames; /* kernel_depth entries, leaf first */
	const __u64 *user_frames;   /* user_depth entries, leaf first (LOWPROF_FRAME_MAKE) */
	/* hdr->nfiles entries, after the frames: user frame kind k in 1..nfiles
	 * is an offset in files[k - 1] */
	const struct lowprof_file_id *files;
	char comm[LOWPROF_COMM_LEN + 1]; /* NUL-terminated copy */
};

/*
 * Check that buf[0..len) is one well-formed sample: header present, depths
 * within limits, nfiles <= LOWPROF_SAMPLE_MAX_FILES, length exactly header +
 * frames + file list, known flags only, user_stop a known reason, every
 * user frame's kind raw, the vDSO, or an entry of the file list (any image_id
 * is one).
 * Returns 0 and fills *out, or -EINVAL with a reason in err.
 */
int sample_record_decode(const void *buf, size_t len, struct sample_view *out,
			 char *err, size_t errlen);

#endif
