/*
 * The process tracker's writes to the unwind maps on the audit record
 * (loader/audit_log.h), at a granularity a busy host can afford:
 *
 *  - unwind_rows: one `map_update` per file table written (rows are copied
 *    into the mmap'd array, thousands per file): the file, its device and
 *    inode, the row range, and how many older tables were evicted for it;
 *  - unwind_procs: updates and deletes are batched per process-tracker tick
 *    (100 ms): one `map_update` per kind per tick, counting them and naming
 *    the first UNWIND_AUDIT_LISTED pids, with the last error if any failed. A
 *    host starting a thousand processes a second writes about ten lines a
 *    second for them, not a thousand.
 */
#ifndef LOWPROF_LOADER_UNWIND_AUDIT_H
#define LOWPROF_LOADER_UNWIND_AUDIT_H

#include <stddef.h>
#include <stdint.h>

/* Pids named in one batch record; the rest are counted. */
#define UNWIND_AUDIT_LISTED 32

struct unwind_audit_batch {
	uint32_t pids[UNWIND_AUDIT_LISTED];
	size_t listed;
	uint64_t count;   /* every update (or delete) in the batch */
	uint64_t failed;  /* of which failed */
	int last_errno;   /* of the last failure */
};

struct unwind_audit {
	struct unwind_audit_batch updates, deletes;
};

/* A file's table copied into unwind_rows at [first_row, first_row + nrows). */
void unwind_audit_rows(const char *path, uint64_t dev, uint64_t ino, uint32_t first_row,
		       uint32_t nrows, uint64_t evicted_files);

/* The table cache's own evictions since the last record (entries past its
 * bounds, refusals expired): one `unwind_cache_evict` record, totals included. */
void unwind_audit_cache(uint64_t evicted, uint64_t expired, uint64_t evicted_total,
			uint64_t expired_total, uint64_t entries);

/* One unwind_procs update (errnum 0: done) or delete, into the current batch. */
void unwind_audit_proc_update(struct unwind_audit *ua, uint32_t pid, int errnum);
void unwind_audit_proc_delete(struct unwind_audit *ua, uint32_t pid);

/* Write the batches' records (none for an empty batch) and start new ones. */
void unwind_audit_flush(struct unwind_audit *ua);

#endif /* LOWPROF_LOADER_UNWIND_AUDIT_H */
