/* sample_record_decode: the bytes of one shared-ring record, as a hostile or
 * broken loader could write them. A decoded view must lie inside the input,
 * its file list included, and its frames name only entries of that list. */
#include "ipc/sample_record.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample_view v;
	char err[256];

	if (sample_record_decode(data, size, &v, err, sizeof(err)) != 0)
		return 0;
	FUZZ_CHECK((const uint8_t *)v.hdr == data);
	FUZZ_CHECK(strlen(v.comm) <= LOWPROF_COMM_LEN);
	if (v.hdr->kernel_depth > 0)
		FUZZ_CHECK((const uint8_t *)(v.kernel_frames + v.hdr->kernel_depth) <= data + size);
	if (v.hdr->user_depth > 0)
		FUZZ_CHECK((const uint8_t *)(v.user_frames + v.hdr->user_depth) <= data + size);
	/* The file list ends the record exactly, and every frame's kind names
	 * one of its entries, the vDSO, or none. */
	FUZZ_CHECK(v.hdr->nfiles <= LOWPROF_SAMPLE_MAX_FILES);
	FUZZ_CHECK((const uint8_t *)(v.files + v.hdr->nfiles) == data + size);
	FUZZ_CHECK(v.hdr->user_stop < LOWPROF_STOP_REASONS);
	for (size_t i = 0; i < v.hdr->user_depth; i++) {
		unsigned kind = LOWPROF_FRAME_KIND(v.user_frames[i]);

		FUZZ_CHECK(kind == LOWPROF_FRAME_RAW || kind == LOWPROF_FRAME_VDSO ||
			   kind <= v.hdr->nfiles);
	}
	return 0;
}
