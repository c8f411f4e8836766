/* The executable PT_LOAD segments of an ELF file, and where its build id
 * lies, for the unwinder's reply. */
#ifndef LOWPROF_UNWINDER_EXEC_SEGMENTS_H
#define LOWPROF_UNWINDER_EXEC_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/unwinder_proto.h"

/* Bounded pread parsing of the program headers of a 64-bit little-endian
 * x86_64 file. 0 with at least one segment, or -EINVAL with err. *bid is
 * the build id's place (all zero without one, which is no error). */
int unwinder_exec_segments(int fd, struct unwinder_segment *seg, uint32_t *nseg,
			   struct unwinder_build_id *bid, char *err, size_t errlen);

#endif /* LOWPROF_UNWINDER_EXEC_SEGMENTS_H */
