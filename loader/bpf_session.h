/*
 * The loader's BPF objects: the sampling program, its maps, and its
 * attachment to one perf event per CPU. Only the loader ever holds these fds.
 */
#ifndef LOWPROF_LOADER_BPF_SESSION_H
#define LOWPROF_LOADER_BPF_SESSION_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/lowprof.h"
#include "ipc/throttle.h"
#include "loader/follow.h"
#include "loader/offcpu.h"
#include "loader/perf_events.h"

struct lowprof_bpf;
struct bpf_link;

struct bpf_session_settings {
	unsigned frequency_hz;
	unsigned ringbuf_kb;   /* power of two, >= page size */
	unsigned max_depth;
	unsigned unwind_mode;  /* enum lowprof_unwind_mode */
	const pid_t *pids;     /* only these thread groups; NULL/0 = all */
	size_t npids;
	const size_t *pid_starts; /* each one's start time in clock ticks (see target_pids.h), or NULL */
	pid_t follow_pid;      /* of pids, the one whose new processes become targets too (a
				* command: loader/follow.h); 0: none */
	__u64 budget_ns_per_window; /* in-BPF guard: per-CPU ns per 100 ms window; 0 = off */
	unsigned unwind_table_mb;   /* size of the DWARF unwind row array (loader/unwind_maps.h) */
	const char *pin_dir;        /* bpffs directory to pin into and adopt from; NULL: no pins */
	struct offcpu_settings offcpu; /* --off-cpu: the sched_switch program (loader/offcpu.h) */
};

struct bpf_session {
	struct lowprof_bpf *skel;
	struct perf_event_set events;
	struct bpf_link **links; /* one per perf event */
	struct bpf_link *offcpu_link; /* sched_switch, NULL without --off-cpu or while throttled */
	struct offcpu_settings offcpu;
	struct follow_links follow; /* sched_process_fork and _exit, only with a follow_pid */
	struct lowprof_config config;
	struct throttle throttle; /* what is in force */
	const volatile __u64 *rb_pos;  /* read-only view of the ring's consumer and producer pages */
	size_t rb_pos_len;
	uint64_t ring_wake_bytes; /* unconsumed bytes past which the program wakes us (a quarter) */
	int ncpus_possible;
	const char *pin_dir;     /* NULL when not pinning */
	unsigned adopted_links;  /* links of a previous loader replaced at start */
};

/* Open, size, load, configure and attach; events enabled on return. 0 or -errno. */
int bpf_session_start(struct bpf_session *s, const struct bpf_session_settings *set,
		      char *err, size_t errlen);
/*
 * The loader's interval is long (a quiet or steady one): this many bytes
 * waiting in the ring wake it (bpf/lowprof.bpf.c, loader_wake_bytes), not
 * only a quarter-full ring; 0: only that. newcomers (at rest): a process's
 * first sample on a CPU wakes it too (loader_wake_newcomers). Stores into
 * the program's mapped .bss.
 */
void bpf_session_set_wake(struct bpf_session *s, uint64_t bytes, bool newcomers);

/*
 * CPU cpu came online (loader/cpu_uevents.h): a new event on it, attached,
 * pinned and enabled unless sampling is paused; one it held is replaced (it
 * died when the CPU went offline). 0, or -errno with a message (nothing
 * held for the CPU then; -ENODEV: it went offline again).
 */
int bpf_session_cpu_online(struct bpf_session *s, int cpu, char *err, size_t errlen);
/* CPU cpu went offline: its link and event go (the kernel removed the
 * event from the CPU already). False when none was held. */
bool bpf_session_cpu_offline(struct bpf_session *s, int cpu);

/* Write the run-time config map (no reload). */
int bpf_session_write_config(struct bpf_session *s, const struct lowprof_config *cfg);
/*
 * Apply new sampling settings without reloading or detaching anything: the
 * config map (unwinding, depth, divisor, and the period each sample carries
 * as its weight), PERF_EVENT_IOC_PERIOD on every event when the frequency
 * changes, PERF_EVENT_IOC_DISABLE / ENABLE when paused changes. The caller
 * has validated t. 0 or -errno (with what failed in err); on failure the
 * session may be partly changed, and s->throttle says what is known to hold.
 */
int bpf_session_apply(struct bpf_session *s, const struct throttle *t,
		      char *err, size_t errlen);
/* A -p target's thread group out of the target_pids map (it exited): its pid,
 * reused, is not sampled. 0 (also when it was not there) or -errno. */
int bpf_session_forget_pid(struct bpf_session *s, pid_t tgid);
/* Sum the per-CPU counters. */
int bpf_session_read_stats(struct bpf_session *s, struct lowprof_cpu_stats *sum);
/* Bytes written to the BPF ring buffer and not yet consumed (0 if unknown). */
uint64_t bpf_session_ringbuf_used(const struct bpf_session *s);
/* fd of the BPF ring buffer map, for ring_buffer__new(). */
int bpf_session_ringbuf_fd(const struct bpf_session *s);
int bpf_session_prog_fd(const struct bpf_session *s);
/*
 * Detach and release everything. unpin: also remove the pins (a clean stop);
 * without it a pinned session stays alive in the kernel for the next loader.
 */
void bpf_session_stop(struct bpf_session *s, bool unpin);

#endif
