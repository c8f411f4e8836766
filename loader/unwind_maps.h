/*
 * unwind_maps: the loader's side of the DWARF unwinding tables in BPF maps.
 *
 * Every file's validated rows, followed by its page index (bpf/lowprof.h),
 * live in one range of the unwind_rows array; ranges come from a first-fit
 * free list over the whole array, whose size is the --unwind-table-mb
 * budget. The array is made of 1 MiB chunks (inner maps, mmapped, written
 * with memcpy) created when a range first reaches them, so the kernel holds
 * what the tables use, not the budget. Files are keyed by the identity the
 * kernel gives them in a VMA (struct lowprof_file_id), shared by every
 * process that maps them, and each has an entry in unwind_files (row range,
 * executable segments, flags) that the BPF walker finds it by. A table stays
 * until its space is needed (then the files the walker used least recently,
 * by the stamp it puts in each entry's last_used, go first, but never one it
 * used in the last half minute: the newcomer waits instead, without rows) or
 * until the walker has not used it for idle_ttl_ns; a chunk left without rows
 * is then freed, so the kernel holds the tables of what runs now, not of every
 * binary the host ever ran (a compiler run once kept its megabytes before).
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

enum unwind_file_state {
	UNWIND_FILE_READY = 0,   /* rows in the map */
	UNWIND_FILE_REFUSED = 1, /* parser refused it, or its table failed our checks */
	UNWIND_FILE_NO_SPACE = 2 /* valid, but over the budget: frame pointers for now */
};

/*
 * What the walker finds in a process's memory before it takes a file's
 * table by content alone (unwind_interp, bpf/lowprof.h): the hash of the
 * file's ELF header (lowprof_ehdr_hash), and 8 bytes of its GNU build id at
 * their ELF virtual address (ipc/unwinder_proto.h). The header alone does
 * not tell builds apart: two programs built from one source with different
 * flags can have the same header byte for byte.
 */
struct unwind_file_mark {
	uint64_t ehdr_hash;
	uint32_t build_id_vaddr;
	uint64_t build_id;
};

struct unwind_file {
	struct lowprof_file_id key;
	enum unwind_file_state state;
	uint32_t first_row, nrows;
	uint32_t nslots;      /* rows + page index: the range held */
	uint64_t first_pc;    /* the first row's pc, and the page index's size */
	uint32_t npages;      /* (its word 0): copied into the walker's entry */
	uint32_t flags;       /* enum lowprof_unwind_file_flags */
	uint64_t last_used;   /* the walker's stamp (or the loader's tick), for eviction */
	uint64_t refused_ns;  /* not READY: when (mono), for the expiry */
	bool adopted;         /* taken over from the previous loader, not yet found mapped */
	struct unwind_file_mark mark; /* all 0: none (no unwind_interp entry) */
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
	uint64_t evictions;
};

struct unwind_maps {
	int rows_fd, files_fd, pending_fd, stats_fd; /* rows_fd: the array of chunks */
	int interp_fd; /* unwind_interp: ELF header hash -> file, for every ready table */
	/* unwind_files_gen: bumped after every change of unwind_files, so that
	 * the walker's per-CPU copies of entries (walk_memos) are dropped before
	 * a deleted entry's rows are reused (UM_REUSE_DELAY_US later). */
	volatile uint64_t *files_gen; /* in the program's mapped .bss; NULL: none */
	struct lowprof_unwind_row **chunk; /* max_chunks, mmapped; NULL until created */
	int *chunk_fd;
	uint32_t nchunks, max_chunks;      /* created, most */
	uint32_t capacity;                 /* rows: max_chunks x LOWPROF_UNWIND_CHUNK_ROWS at most */
	struct unwind_range *free;       /* sorted by start, coalesced */
	size_t nfree, free_cap;
	struct unwind_file **files;
	size_t nfiles, files_cap;
	uint64_t tick;
	uint64_t evictions;
	int ncpus;
	/* The cache's own bounds (its entries; the rows are bounded by capacity):
	 * past max_files an entry goes, least recently used first; refused
	 * files are remembered up to max_refused, for refused_ttl_ns. */
	size_t max_files, max_refused, nrefused;
	uint64_t refused_ttl_ns;
	uint64_t cache_evictions;  /* entries dropped by max_files or max_refused */
	uint64_t refused_expired;  /* refused entries forgotten after refused_ttl_ns */
	/* Tables the walker has not used for idle_ttl_ns go (looked at every
	 * UNWIND_MAPS_IDLE_CHECK_NS), and empty chunks with them. */
	uint64_t idle_ttl_ns, idle_checked_ns;
	uint64_t idle_expired;     /* tables dropped for that */
	uint64_t chunks_released;  /* chunks freed once empty */
	/* Identities of files dropped since the caller last took them (their
	 * tables evicted): the caller audits them and forgets the files. */
	struct lowprof_file_id *dropped;
	size_t ndropped, dropped_cap;
	/* bpffs directory the session's maps are pinned in (NULL: none). Each
	 * chunk is pinned there too, as unwind_chunk_K, so that the next loader
	 * can map it: a chunk's fd cannot be had from its id without
	 * CAP_SYS_ADMIN, which the loader does not hold. */
	char *pin_dir;
};

/* What unwind_maps_adopt found of a previous loader's tables. */
struct unwind_maps_adoption {
	uint32_t chunks;         /* chunks mapped again */
	uint32_t chunks_dropped; /* a slot without its pin, or a pin without its slot */
	uint64_t files, rows;    /* tables taken over, and their rows */
	uint64_t entries_dropped; /* entries refused (no rows, or a range that does not check) */
};

#define UNWIND_MAPS_MAX_FILES LOWPROF_UNWIND_MAX_FILES
#define UNWIND_MAPS_MAX_REFUSED 256
#define UNWIND_MAPS_REFUSED_TTL_NS (600ULL * 1000000000ULL)
#define UNWIND_MAPS_IDLE_TTL_NS (600ULL * 1000000000ULL)
#define UNWIND_MAPS_IDLE_CHECK_NS (30ULL * 1000000000ULL)

/* Rows the array can hold for a budget of table_mb MiB. */
uint32_t unwind_maps_capacity(unsigned table_mb);
/* Between open and load: size the array of chunks for the budget. 0 or -errno. */
int unwind_maps_size(struct lowprof_bpf *skel, unsigned table_mb);
/* After load: take the fds (chunks are created as tables need them, and
 * pinned under pin_dir when it is not NULL). 0 or -1 with err. */
int unwind_maps_init(struct unwind_maps *um, struct lowprof_bpf *skel, const char *pin_dir,
		     char *err, size_t errlen);
/*
 * After init, when the session's maps were pinned by a previous loader of
 * this run (unwind_rows and unwind_files are among them): take its tables
 * over instead of building them again. Every chunk whose pin and slot agree
 * is mapped; every unwind_files entry whose range lies in mapped chunks,
 * inside rows no other entry holds, with a whole page index, becomes a READY
 * file marked adopted; any other entry is deleted (the walker asks for that
 * file again). Chunks left without rows are freed. Returns 0 or -errno.
 */
int unwind_maps_adopt(struct unwind_maps *um, struct unwind_maps_adoption *out);
/* One previous entry as a READY, adopted file, by the rules above (the
 * chunks already mapped). 0, or -EINVAL (nothing changed). For adopt and tests. */
int unwind_maps_adopt_entry(struct unwind_maps *um, const struct lowprof_file_id *key,
			    const struct lowprof_unwind_file *e);
/* Drop the adopted files no running process was found to map (the start-up
 * scan is over): their identities go to dropped, as evicted ones do. Returns
 * how many. */
size_t unwind_maps_drop_unseen(struct unwind_maps *um);
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

struct unwind_file *unwind_maps_find(struct unwind_maps *um, const struct lowprof_file_id *key);
/* Cache a checked table: rows copied into the map (evicting the least
 * recently used files if needed), then its unwind_files entry, and its
 * unwind_interp entry when mark is not NULL (unwind_maps_file_mark of a
 * file interp_trust_fd trusts: the caller's choice).
 * Returns the file (state READY or NO_SPACE), or NULL on ENOMEM. */
struct unwind_file *unwind_maps_add(struct unwind_maps *um, const struct lowprof_file_id *key,
				    const struct unwind_table *t,
				    const struct unwinder_segment *seg, uint32_t nseg,
				    const struct unwind_file_mark *mark);
/* The file's mark: lowprof_ehdr_hash of its first LOWPROF_EHDR_BYTES, and
 * the build id bytes the unwinder placed (bid), read back from the file at
 * the offset it named. 0, or -1: no mark (not an ELF header, a short file,
 * no build id, bytes that differ, an address past 4 GiB). Bytes read, never
 * parsed: the parsing was the unwinder's. */
int unwind_maps_file_mark(int fd, const struct unwinder_build_id *bid,
			  struct unwind_file_mark *mark);
/* A table built ahead of use (the start-up scan): evictable at once (as if
 * last used half a minute ago) until the walker uses it, so that it never
 * keeps a sampled file out. */
void unwind_maps_mark_unused(struct unwind_maps *um, const struct lowprof_file_id *key);
/* Remember a file without a table (refused, unreachable) so that it is not
 * asked for again for ttl_ns: an unwind_files entry without rows. */
struct unwind_file *unwind_maps_add_refused(struct unwind_maps *um,
					    const struct lowprof_file_id *key, uint64_t ttl_ns);
/* Forget entries whose refusal expired (the walker asks for them again);
 * every UNWIND_MAPS_IDLE_CHECK_NS, drop the tables the walker has not used
 * for idle_ttl_ns (their files handed to the caller as evicted ones are) and
 * free the chunks left empty. */
void unwind_maps_expire(struct unwind_maps *um, uint64_t now_ns);

/* The created chunks that hold no row (their whole range free): their
 * indices into out (up to max). Returns how many. */
uint32_t unwind_maps_empty_chunks(const struct unwind_maps *um, uint32_t *out, uint32_t max);

/* The unwind_files value of f (what the walker reads). */
void unwind_maps_entry(const struct unwind_file *f, struct lowprof_unwind_file *e);
/* LOWPROF_UNWIND_FILE_NO_FP when almost no row computes the CFA from RBP;
 * LOWPROF_UNWIND_FILE_FP_CALLS when no row could hold a call made without a
 * frame pointer (and some compute the CFA from RBP); else 0. */
uint32_t unwind_maps_fp_flags(const struct unwind_table *t);

void unwind_maps_usage(const struct unwind_maps *um, struct unwind_maps_usage *u);
/* Sum the BPF walker's per-CPU counters. 0 or -errno. */
int unwind_maps_read_stats(struct unwind_maps *um, struct lowprof_unwind_stats *sum);

#endif
