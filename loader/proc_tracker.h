/*
 * proc_tracker: which processes need unwind tables, and building them.
 *
 * Lazy: a process gets tables once the BPF walker samples it without any
 * (it puts the tgid in unwind_pending) or sees a pc outside its known
 * mappings (a dlopen: refreshed at most once a second). exec and exit come
 * from the sched_process_exec / _exit tracepoints (unwind_events ring); the
 * BPF side has already forgotten the mappings, the tracker drops its file
 * references. A sweep every few seconds catches exits the ring lost.
 *
 * Per process: /proc/PID/maps, each executable file mapping opened through
 * /proc/PID/root (checked against the device and inode the maps line names,
 * else /proc/PID/map_files), looked up in the file cache by dev, inode,
 * mtime and size; a file not yet cached goes to lowprof-unwinder and what
 * comes back is checked before it is written. A file refused, or over the
 * budget, leaves its mappings without rows: frame pointers there.
 *
 * All work happens in proc_tracker_tick(), bounded in time per call.
 */
#ifndef LOWPROF_LOADER_PROC_TRACKER_H
#define LOWPROF_LOADER_PROC_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "loader/unwind_audit.h"
#include "loader/unwind_maps.h"
#include "loader/unwinder_client.h"

struct lowprof_bpf;
struct ring_buffer;
struct bpf_link;
struct proc_entry;
struct bpf_session;

#define PROC_TRACKER_BUCKETS 1024
#define PROC_TRACKER_QUEUE 4096

struct proc_tracker_stats {
	uint64_t procs_loaded;   /* unwind_procs entries written */
	uint64_t procs_gone;     /* exited while or before being read */
	uint64_t files_parsed;   /* tables built by the unwinder and cached */
	uint64_t files_refused;
	uint64_t files_unavailable; /* the unwinder did not answer */
	uint64_t cache_hits;
	uint64_t exec_events, exit_events;
	uint64_t work_ns;        /* time spent in ticks */
	uint64_t deferred_ticks; /* ticks that stopped at the time budget */
};

struct proc_tracker {
	struct unwind_maps maps;
	struct unwinder_client client;
	struct ring_buffer *events;
	struct bpf_link *exec_link, *exit_link;
	struct proc_entry *buckets[PROC_TRACKER_BUCKETS];
	size_t nprocs;
	pid_t queue[PROC_TRACKER_QUEUE];
	size_t qhead, qlen;
	uint64_t tick_budget_ns;
	uint64_t last_sweep_ns, last_report_ns;
	uint64_t reported_rows;
	struct proc_tracker_stats st;
	struct unwind_audit audit; /* unwind_procs writes, audited per tick */
	unsigned choice;  /* enum loader_unwind_choice */
	bool active;      /* tables in use (DWARF possible) */
	bool busy;        /* the last tick found work: tick again soon */
	bool have_client;
	uint64_t audited_evictions, audited_expired; /* the cache's, as last audited */
};

/* Before bpf_session_start: remember --unwind (enum loader_unwind_choice). */
void proc_tracker_configure(struct proc_tracker *pt, unsigned choice);
/* The unwind mode to put in force when the throttle wants `wanted`: --unwind
 * fp or dwarf pin it, and without working tables it is always FP. */
unsigned proc_tracker_unwind_mode(const struct proc_tracker *pt, unsigned wanted);
/*
 * After bpf_session_start: map the tables, start (or adopt) the parser,
 * attach the exec/exit tracepoints. On failure the session is switched to
 * frame pointers and sampling goes on; nothing to do for --unwind=fp.
 */
void proc_tracker_start(struct proc_tracker *pt, struct bpf_session *sess);
/* The parts of start, for tests. 0, or -1 with err. */
int proc_tracker_init(struct proc_tracker *pt, struct lowprof_bpf *skel, char *err,
		      size_t errlen);
int proc_tracker_attach(struct proc_tracker *pt, struct lowprof_bpf *skel, char *err,
			size_t errlen);
/* Events, pending pids, then table building until the tick's time budget.
 * Call once per drain tick; nothing when inactive. Sets pt->busy when it
 * found work (events, pending pids, a queue left): the next tick should come
 * at the fast drain period, not the idle one. */
void proc_tracker_tick(struct proc_tracker *pt);
/* Readable (poll) when the BPF program saw a process without tables; -1 when inactive. */
int proc_tracker_wakeup_fd(const struct proc_tracker *pt);
/* Build the tables of one process now (tests, the benchmark). 0 or -errno. */
int proc_tracker_load_pid(struct proc_tracker *pt, pid_t pid);
void proc_tracker_log_usage(struct proc_tracker *pt);
void proc_tracker_fini(struct proc_tracker *pt);

#endif
