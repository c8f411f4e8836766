/*
 * unwind_maps: the loader's side of the DWARF unwinding tables in BPF maps.
 *
 * Every file's validated rows, followed by its page index (bpf/lowprof.h),
 * live in one range of the unwind_rows array; ranges come from a first-fit
 * free list over the whole array, whose size is the --unwind-table-mb
 * budget. The array is made of 1 MiB chunks (inner maps, mmapped, written
 * with memcpy) created when a range first reaches them, so the kernel holds
 * what the tables use, not the budget. Files
 * are cached by device, inode, mtime and size, shared by every process that
 * maps them, reference counted, and kept after their last user exits until
 * the space is needed (short-lived processes re-exec the same binaries).
 * Per process, unwind_procs holds its executable mappings (sorted) with
 * each file's row range and load bias.
 */
#ifndef LOWPROF_LOADER_UNWIND_MAPS_H
#define LOWPROF_LOADER_UNWIND_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/lowprof.h"
#include "ipc/unwinder_proto.h"
#include "unwind/unwind_table.h"

struct lowprof_bpf;

/* Identity of a file's content as the cache sees it. */
struct unwind_file_key {
	uint64_t dev;
	uint64_t ino;
	int64_t mtime_ns;
	int64_t size;
};

enum unwind_file_state {
	UNWIND_FILE_READY = 0,   /* rows in the map */
	UNWIND_FILE_REFUSED = 1, /* parser refused it, or its table failed our checks */
	UNWIND_FILE_NO_SPACE = 2 /* valid, but over the budget: frame pointers for now */
};

struct unwind_file {
	struct unwind_file_key key;
	enum unwind_file_state state;
	uint32_t first_row, nrows;
	uint32_t nslots;      /* rows + page index: the range held */
	uint32_t refs;        /* processes whose unwind_procs entry points at it */
	uint64_t last_used;   /* tick of the last reference, for eviction */
	uint64_t refused_ns;  /* UNWIND_FILE_REFUSED: when (mono), for the expiry */
	uint32_t nsegments;
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
};

struct unwind_range {
	uint32_t start, len;
};

/* Reported (log, benchmark): what the tables cost. */
struct unwind_maps_usage {
	uint64_t budget_bytes;   /* --unwind-table-mb: the most unwind_rows may grow to */
	uint64_t allocated_bytes; /* unwind_rows' chunks created so far */
	uint64_t rows_used;      /* rows of cached files */
	uint64_t rows_capacity;
	uint64_t files_ready, files_refused, files_no_space;
	uint64_t procs;          /* unwind_procs entries */
	uint64_t procs_bytes;    /* their kernel memory (value size each) */
	uint64_t evictions;
};

struct unwind_maps {
	int rows_fd, procs_fd, pending_fd, stats_fd; /* rows_fd: the array of chunks */
	struct lowprof_unwind_row **chunk; /* max_chunks, mmapped; NULL until created */
	int *chunk_fd;
	uint32_t nchunks, max_chunks;      /* created, most */
	uint32_t capacity;                 /* rows: max_chunks x LOWPROF_UNWIND_CHUNK_ROWS at most */
	struct unwind_range *free;       /* sorted by start, coalesced */
	size_t nfree, free_cap;
	struct unwind_file **files;
	size_t nfiles, files_cap;
	uint64_t tick;
	uint64_t procs;   /* unwind_procs entries: kept by proc_tracker */
	uint64_t evictions;
	int ncpus;
	/* The cache's own bounds (its entries; the rows are bounded by capacity):
	 * past max_files an unreferenced entry goes, least recently used first;
	 * refused files are remembered up to max_refused, for refused_ttl_ns. */
	size_t max_files, max_refused, nrefused;
	uint64_t refused_ttl_ns;
	uint64_t cache_evictions;  /* entries dropped by max_files or max_refused */
	uint64_t refused_expired;  /* refused entries forgotten after refused_ttl_ns */
};

#define UNWIND_MAPS_MAX_FILES 4096
#define UNWIND_MAPS_MAX_REFUSED 256
#define UNWIND_MAPS_REFUSED_TTL_NS (600ULL * 1000000000ULL)

/* Rows the array can hold for a budget of table_mb MiB. */
uint32_t unwind_maps_capacity(unsigned table_mb);
/* Between open and load: size the array of chunks for the budget. 0 or -errno. */
int unwind_maps_size(struct lowprof_bpf *skel, unsigned table_mb);
/* After load: take the fds (chunks are created as tables need them). 0 or -1 with err. */
int unwind_maps_init(struct unwind_maps *um, struct lowprof_bpf *skel, char *err, size_t errlen);
/* The same over a plain buffer of capacity rows, its chunks all there, without
 * BPF (unit tests): fds -1. */
int unwind_maps_init_mem(struct unwind_maps *um, struct lowprof_unwind_row *rows,
			 uint32_t capacity);
void unwind_maps_fini(struct unwind_maps *um);
/* Set up (by unwind_maps_init or _init_mem) and not finished. */
bool unwind_maps_ready(const struct unwind_maps *um);

/*
 * The page index of rows[0..n) (sorted by pc) into words (bpf/lowprof.h),
 * room for max of them. Returns the words written: 1 (npages 0, no index)
 * when the rows span more pages than max allows or than a few per row.
 */
size_t unwind_maps_page_index(const struct unwind_row *rows, size_t n, uint32_t *words, size_t max);

/*
 * The loader's own check of a table an unprivileged parser built, before
 * anything reaches a map: unwind_table_validate, then every row that is not
 * a NONE gap lies inside the file's executable segments' span.
 */
int unwind_maps_check_table(const struct unwind_table *t, const struct unwinder_segment *seg,
			    uint32_t nseg, char *err, size_t errlen);

struct unwind_file *unwind_maps_find(struct unwind_maps *um, const struct unwind_file_key *key);
/* Cache a checked table: rows copied into the map (evicting unused files if
 * needed). Returns the file (state READY or NO_SPACE), or NULL on ENOMEM. */
struct unwind_file *unwind_maps_add(struct unwind_maps *um, const struct unwind_file_key *key,
				    const struct unwind_table *t,
				    const struct unwinder_segment *seg, uint32_t nseg);
/* Remember a refused file so that it is not parsed again. */
struct unwind_file *unwind_maps_add_refused(struct unwind_maps *um,
					    const struct unwind_file_key *key);
void unwind_maps_ref(struct unwind_maps *um, struct unwind_file *f);
void unwind_maps_unref(struct unwind_maps *um, struct unwind_file *f);

/*
 * The load bias of a mapping of f at [start, end) from file offset pgoff:
 * runtime address - ELF virtual address, through the executable segment
 * that holds pgoff. -1 if no segment does.
 */
int unwind_maps_bias(const struct unwind_file *f, uint64_t start, uint64_t pgoff,
		     uint64_t *bias);

int unwind_maps_proc_write(struct unwind_maps *um, uint32_t tgid,
			   const struct lowprof_unwind_proc *p);
void unwind_maps_proc_delete(struct unwind_maps *um, uint32_t tgid);

void unwind_maps_usage(const struct unwind_maps *um, struct unwind_maps_usage *u);
/* Sum the BPF walker's per-CPU counters. 0 or -errno. */
int unwind_maps_read_stats(struct unwind_maps *um, struct lowprof_unwind_stats *sum);

#endif
