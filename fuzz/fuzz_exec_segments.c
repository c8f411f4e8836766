/* The unwinder's program-header reader (unwinder/exec_segments.c) on
 * arbitrary files, as a user's binary reaches it: the executable segments,
 * and the build id's place, which the loader reads back and the walker
 * compares with a process's memory. What it claims must be in the input:
 * the build id bytes at the offset given, inside a PT_LOAD segment that
 * loads that offset at the address given. */
#define _GNU_SOURCE
#include "unwinder/exec_segments.h"

#include "fuzz/fuzz_check.h"
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Is [off, off + len) loaded at vaddr by one of the input's PT_LOAD headers? */
static int fuzz_loaded_at(const uint8_t *data, size_t size, uint64_t off, uint64_t len,
			  uint64_t vaddr)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned i;

	if (size < sizeof(eh))
		return 0;
	memcpy(&eh, data, sizeof(eh));
	for (i = 0; i < eh.e_phnum; i++) {
		uint64_t at = eh.e_phoff + (uint64_t)i * sizeof(ph);

		if (at < eh.e_phoff || at > size || size - at < sizeof(ph))
			return 0;
		memcpy(&ph, data + at, sizeof(ph));
		if (ph.p_type == PT_LOAD && off >= ph.p_offset && ph.p_filesz >= len &&
		    off - ph.p_offset <= ph.p_filesz - len && vaddr == ph.p_vaddr + (off - ph.p_offset))
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct unwinder_build_id zero;
	static int fd = -1;
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id bid;
	uint32_t nseg = 0;
	char err[128] = "";
	int rc;

	if (fd < 0)
		fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(ftruncate(fd, 0) == 0);
	FUZZ_CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
	rc = unwinder_exec_segments(fd, seg, &nseg, &bid, err, sizeof(err));
	if (rc != 0) {
		FUZZ_CHECK(rc == -EINVAL && err[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(nseg >= 1 && nseg <= UNWINDER_MAX_SEGMENTS);
	if (memcmp(&bid, &zero, sizeof(bid)) == 0)
		return 0;
	FUZZ_CHECK(bid.offset != 0 && bid.offset <= size && size - bid.offset >= sizeof(bid.bytes));
	FUZZ_CHECK(memcmp(data + bid.offset, bid.bytes, sizeof(bid.bytes)) == 0);
	FUZZ_CHECK(fuzz_loaded_at(data, size, bid.offset, sizeof(bid.bytes), bid.vaddr));
	return 0;
}
