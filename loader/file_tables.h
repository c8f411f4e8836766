/*
 * file_tables: the files the BPF walker asks for, opened once each and
 * turned into unwind tables keyed by their identity.
 *
 * The walker finds each frame's file from the kernel's VMA; a file without
 * an unwind_files entry goes to unwind_pending (its identity, a pid and the
 * VMA) and wakes the loader. Per pending file: open it through
 * /proc/PID/map_files/START-END (CAP_CHECKPOINT_RESTORE; reaches a deleted
 * or replaced file), /proc/PID/exe (the executable, even replaced or
 * deleted), the path in /proc/PID/maps resolved in the process's root
 * (loader/mapped_file.h), or, on overlayfs, that path within the overlay's
 * layers (loader/overlay_file.h: the VMA names the layer's file, not the
 * overlay's); whichever way, the file's device, inode and (where
 * the file system reports it, FS_IOC_GETVERSION) generation must be exactly
 * the reported ones. The open file goes to the file registry (the exporter
 * symbolizes from it), its table is built by lowprof-unwinder, checked,
 * written keyed by identity (loader/unwind_maps.h): every later process of
 * that file unwinds from its first sample. No per-process state.
 *
 * At start the files mapped by running processes are queued, the most
 * shared first (libc and the dynamic loader lead), so that their tables
 * exist before processes started later are sampled.
 *
 * All work happens in file_tables_tick(), bounded in time per call.
 */
#ifndef LOWPROF_LOADER_FILE_TABLES_H
#define LOWPROF_LOADER_FILE_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/lowprof.h"
#include "loader/unwind_maps.h"
#include "loader/unwinder_client.h"

struct lowprof_bpf;
struct ring_buffer;
struct bpf_session;
struct file_registry;
struct ft_scan_item;

struct file_tables_stats {
	uint64_t pending;        /* pending files handled */
	uint64_t files_parsed;   /* tables built by the unwinder and cached */
	uint64_t files_refused;
	uint64_t files_unreachable; /* not opened, or not the reported file */
	uint64_t files_unavailable; /* the unwinder did not answer */
	uint64_t scanned;        /* start-up: files of running processes */
	uint64_t work_ns;        /* time spent in ticks */
	/* This loader's own CPU on the files the walker asked for, after the
	 * start-up tables (opening them, having their tables built; the
	 * unwinder's is its process's): a cost new executables bring. */
	uint64_t work_cpu_ns;
	uint64_t deferred_ticks; /* ticks that stopped at the time budget */
	uint64_t adopted;        /* tables taken over from the previous loader */
	uint64_t adopted_found;  /* of those, found mapped by the start-up scan */
	uint64_t adopted_dropped; /* of those, mapped by no running process: dropped */
};

/* Files that could not be opened lately, with how often. */
#define FT_MISSES 64
#define FT_MISSES_BEFORE_REFUSAL 16

struct ft_miss {
	struct lowprof_file_id id;
	uint32_t n;
	uint64_t last_ns;
};

struct file_tables {
	struct unwind_maps maps;
	struct unwinder_client client;
	struct ring_buffer *events;
	struct file_registry *reg; /* not owned; NULL: tables only */
	struct ft_scan_item *scan; /* start-up queue, most shared first */
	size_t nscan, scan_at;
	uint64_t scan_start_ns;    /* monotonic: when the start-up queue was made */
	uint64_t tick_budget_ns;
	uint64_t last_report_ns, last_expire_ns, reported;
	struct file_tables_stats st;
	unsigned choice; /* enum loader_unwind_choice */
	bool active;     /* tables in use (DWARF possible) */
	bool busy;       /* the last tick found work: tick again soon */
	bool have_client;
	bool adopting;   /* tables taken over, the start-up scan not over yet */
	uint64_t audited_evictions, audited_expired; /* the cache's, as last audited */
	struct ft_miss miss[FT_MISSES];
};

/* The start-up tables (of the processes running at start) are being built. */
bool file_tables_starting(const struct file_tables *ft);

/* Before bpf_session_start: remember --unwind (enum loader_unwind_choice). */
void file_tables_configure(struct file_tables *ft, unsigned choice);
/* The unwind mode to put in force when the throttle wants `wanted`: --unwind
 * fp or dwarf pin it, and without working tables it is always FP. */
unsigned file_tables_unwind_mode(const struct file_tables *ft, unsigned wanted);
/*
 * After bpf_session_start: map the tables, start (or adopt) the parser,
 * queue the running processes' files: of every process, or with npids > 0
 * (-p) of those alone, the only ones sampled. reg (may be NULL) receives
 * every file opened. On failure the session is switched to frame pointers
 * and sampling goes on; nothing to do for --unwind=fp.
 */
void file_tables_start(struct file_tables *ft, struct bpf_session *sess,
		       struct file_registry *reg, const pid_t *pids, size_t npids);
/* The parts of start, for tests. pin_dir: the session's pin directory
 * (NULL: none), where a previous loader's tables are taken over from and
 * this one's chunks are pinned. The start-up queue: as file_tables_start's.
 * 0, or -1 with err. */
int file_tables_init(struct file_tables *ft, struct lowprof_bpf *skel, struct file_registry *reg,
		     const char *pin_dir, const pid_t *pids, size_t npids, char *err, size_t errlen);
/* Pending files, then the start-up queue, until the tick's time budget.
 * Sets ft->busy when work is left. */
void file_tables_tick(struct file_tables *ft);
/* Readable (poll) when the BPF program asked for a file; -1 when inactive. */
int file_tables_wakeup_fd(const struct file_tables *ft);
/*
 * Open the file with identity id that pid maps at [start, end) from file
 * offset off, checked to be exactly that file; its path for display in path.
 * The fd, or -errno (-ESTALE: something else is there now).
 */
int file_tables_open(const char *proc_root, pid_t pid, const struct lowprof_file_id *id,
		     uint64_t start, uint64_t end, char *path, size_t pathlen);
/* Build (or refuse) the table of an open file now; fd stays the caller's. */
void file_tables_build(struct file_tables *ft, const struct lowprof_file_id *id, int fd,
		       const char *path);
void file_tables_log_usage(struct file_tables *ft);
void file_tables_fini(struct file_tables *ft);

#endif
