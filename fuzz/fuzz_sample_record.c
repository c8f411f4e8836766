/* sample_record_decode: the bytes of one shared-ring record, as a hostile or
 * broken loader could write them. A decoded view must lie inside the input. */
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
	return 0;
}
