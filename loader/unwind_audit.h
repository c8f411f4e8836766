/*
 * The file tables' writes to the unwind maps on the audit record
 * (loader/audit_log.h):
 *
 *  - unwind_rows / unwind_files: one `map_update` per file table written
 *    (rows are copied into the mmap'd array, thousands per file): the file,
 *    its identity (device, inode, generation), the row range, and how many
 *    older tables were evicted for it;
 *  - one `unwind_evict` record per file whose table (and open file) went:
 *    the least recently used when the budget or the entry bound is reached,
 *    or a refusal that expired;
 *  - the cache's eviction totals (`unwind_cache_evict`) once per tick that
 *    had any;
 *  - `unwind_adopt` once when a restarted loader takes over the tables its
 *    predecessor left pinned (how many files, rows and chunks; what it refused).
 * Files arrive at the rate of new binaries, not of new processes: a host
 * starting a thousand processes a second of the same few programs writes
 * nothing for them once their tables are built.
 */
#ifndef LOWPROF_LOADER_UNWIND_AUDIT_H
#define LOWPROF_LOADER_UNWIND_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/lowprof.h"

/* A file's table copied into unwind_rows at [first_row, first_row + nrows). */
void unwind_audit_rows(const char *path, const struct lowprof_file_id *id, uint32_t first_row,
		       uint32_t nrows, uint64_t evicted_files);

/* A file's table (and the loader's open file) dropped. */
void unwind_audit_evict(const struct lowprof_file_id *id, const char *why);

/* The table cache's own evictions since the last record (entries past its
 * bounds, refusals expired): one `unwind_cache_evict` record, totals included. */
void unwind_audit_cache(uint64_t evicted, uint64_t expired, uint64_t evicted_total,
			uint64_t expired_total, uint64_t entries);

struct unwind_maps_adoption;

/* The previous loader's tables taken over (loader/unwind_maps.h). */
void unwind_audit_adopt(const struct unwind_maps_adoption *ad);

#endif /* LOWPROF_LOADER_UNWIND_AUDIT_H */
