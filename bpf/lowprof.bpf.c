// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lowprof's sampling program: runs on every cpu-clock perf event, records the
 * kernel and user stack of the task on CPU into the "samples" ring buffer.
 *
 * It never blocks and wakes user space only when the ring passes a watermark
 * (BPF_RB_FORCE_WAKEUP past ringbuf_wakeup_bytes, BPF_RB_NO_WAKEUP below),
 * or when samples pile up while the loader rests (below): the loader drains
 * the ring on a slow timer otherwise. A full ring costs one counter
 * increment.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/lowprof.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GUARD_WINDOW_NS 100000000ULL /* the budget guard's accounting window: 100 ms */
/*
 * One owner's share of a CPU's guard window: once the samples of an owner's
 * processes on a CPU have cost budget / GUARD_SHARE_DIV in the window,
 * its further samples there go without the user stack until the window ends.
 * A process can make its own samples expensive (stacks 128 frames deep
 * without frame pointers, a row search in every frame): without a share it
 * would spend the whole budget and every other process on that CPU would
 * lose its stacks. Half leaves the other half to everyone else on the CPU,
 * and an owner alone there still gets half of what the budget allows.
 * The owner is a user, or for root's processes a cgroup (guard_owner), not
 * a process: a share per process gave whoever forks k processes k halves.
 */
#define GUARD_SHARE_DIV 2
/* Owners a CPU tells apart per window (a power of two); the last slot is
 * shared by any further ones. A window holds about 100 samples per CPU at
 * -F 999, of a few owners. */
#define GUARD_SHARE_SLOTS 16

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by the loader before load (--ringbuf-kb) */
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lowprof_config);
} run_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lowprof_cpu_stats);
} cpu_stats SEC(".maps");

/* Unconsumed bytes in `samples` past which a sample wakes the loader; 0:
 * never (set by the loader before load). */
const volatile __u64 ringbuf_wakeup_bytes = 0;
/*
 * While the loader's interval is long (ipc/throttle.h: a rest on a quiet
 * host, a steady interval on a busy one) it drains only at the interval's
 * end, and says here how many bytes waiting wake it sooner, through the
 * object's mapped .bss (a store, no syscall: drain state, like the ring's
 * consumer position, not a setting): a few samples at rest (more than the
 * trickle a quiet interval allows), more than the interval's own rate would
 * leave by its end when steady. So load coming to such a host is seen at
 * once, not at the interval's end. 0: only ringbuf_wakeup_bytes. Read once
 * per sample, written twice per long interval: no line bounces.
 */
volatile __u64 loader_wake_bytes = 0;
/*
 * While the loader rests (or, with --no-throttle, runs a steady interval),
 * a process's first sample wakes it too: the exporter reads a process's
 * executable and container while it exists (exporter/otlp/process_info.h),
 * and such an interval ends up to a ping interval later, past a
 * short-lived process's end. A process that execs is new again (its
 * image_id, bpf/lowprof.h), and so is a reused pid: the exporter reads its
 * executable once more, which for a wrapper (nice, env) or a shell's child
 * sampled before its exec would otherwise wait for the drain after a
 * short-lived program ended.
 * "First" as far as the program recalls: the last two (tgid, image_id)
 * sampled in each of RECENT_TGID_SETS sets (by tgid modulo their number),
 * kept at every sample, so that an idle host's daemons, and
 * a busy host's busy processes, sampled again and again, wake nobody when
 * the wake is turned on. One memory for all CPUs: a process the scheduler
 * moves to another CPU is not new there (read-mostly lines: a set is
 * written only when a tgid not first in it is sampled). Two ways, not one,
 * so that two processes of one set (a busy process and a daemon sampled
 * now and then) do not displace each other at every sample, each a wake.
 * 0: off (a busy host's new processes are told at its next drain: a
 * second, two in a throttled steady interval). Set like loader_wake_bytes.
 */
volatile __u32 loader_wake_newcomers = 0;
#define RECENT_TGID_SETS 1024

/* Does the current task have a user address space (not a kernel thread)?
 * Global, verified once: a load of a pointer through the task's trusted
 * pointer makes the verifier search the kernel's BTF by name, and inlined
 * where a walk starts it was checked for every state reaching it. */
__noinline int lowprof_current_has_mm(void)
{
	return bpf_get_current_task_btf()->mm != NULL;
}

/* The current task's image_id (bpf/lowprof.h): its exec count, and its
 * thread group's start time through a multiplicative hash, its top 16
 * bits. Two loads from the task, one from its group leader. */
static __always_inline __u16 current_image_id(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 start = task->group_leader->start_time;

	return (__u16)task->self_exec_id ^ (__u16)((start * 0x9e3779b97f4a7c15ULL) >> 48);
}

/* The processes a set recalls, the more recently sampled first: each
 * image_id << 32 | tgid (0: none). */
struct recent_tgid_set {
	__u64 image[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RECENT_TGID_SETS);
	__type(key, __u32);
	__type(value, struct recent_tgid_set);
} recent_tgids SEC(".maps");

/* Is tgid, running the program of image_id, new to the program while the
 * loader wants to hear of new processes (loader_wake_newcomers)? Remembers
 * it either way, first in its set: the one it displaces moves second, the
 * second is forgotten. Two CPUs at one set at once may each see a new one
 * (one wake too many) or forget one (a wake later): a hint, no more. */
static __always_inline bool newcomer_to_wake_for(__u32 tgid, __u16 image_id)
{
	__u32 key = tgid & (RECENT_TGID_SETS - 1);
	__u64 image = (__u64)image_id << 32 | tgid;
	struct recent_tgid_set *set;
	__u64 first, second;

	if (tgid == 0)
		return false;
	set = bpf_map_lookup_elem(&recent_tgids, &key);
	if (!set)
		return false;
	first = set->image[0];
	if (first == image)
		return false;
	second = set->image[1];
	set->image[0] = image;
	set->image[1] = first;
	return second != image && loader_wake_newcomers;
}

/* The wake flag of a record of size bytes going into `samples` (a sample or
 * an off-CPU record alike: either may fill the ring): the loader is woken
 * only when the ring fills up or, in a long interval, more waits than it
 * expects; its timer drains the rest. */
static __always_inline __u64 samples_wakeup(__u64 size)
{
	__u64 wake_bytes = loader_wake_bytes, avail;

	if (ringbuf_wakeup_bytes == 0 && wake_bytes == 0)
		return BPF_RB_NO_WAKEUP;
	avail = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) + size;
	if (ringbuf_wakeup_bytes > 0 && avail >= ringbuf_wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	if (wake_bytes > 0 && avail >= wake_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* What a walk knows of the task's address space, read once per sample
 * (bpf/unwind_vma.bpf.h). */
/* Room for the executable's program headers (at most 16 of 56 bytes) and,
 * later, its first 48 dynamic entries (16 bytes each). */
#define WALK_DL_BUF_WORDS 112

struct walk_mm {
	__u64 text_start, text_end; /* mm->start_code/end_code: the executable's text */
	__u64 vdso_start, vdso_end;
	__u64 mm, seq, start_time;  /* a cached VMA's validity */
	__u64 start_stack;          /* mm->start_stack: where argc lies */
	struct lowprof_file_id exe; /* mm->exe_file */
	/* Its table entry, copied at the first frame in the text: a walk that
	 * returns to the executable (main, then _start) looks it up once. */
	struct lowprof_unwind_file exe_tab;
	__u32 exe_slot;
	__u32 exe_state;            /* 0: not looked up, 1: exe_tab valid, 2: none */
	__u32 have_validity;        /* seq and start_time read (they are read when needed) */
	/* The dynamic loader (lowprof_ehdr_hash): its load address (AT_BASE),
	 * its identity and table, read at the first pc no cheaper source placed. */
	__u64 interp_base;
	struct lowprof_file_id interp;
	struct lowprof_unwind_file interp_tab;
	__u32 interp_slot;          /* its slot in the file list; 0 until a frame is in it */
	__u32 interp_state;         /* 0: not read, 1: interp_tab valid, 2: none */
	/* The 64 bytes at AT_BASE (then 8 of its build id), read here rather
	 * than onto the stack: the off-CPU program's calls leave the resolver
	 * no room for them. */
	__u64 interp_ehdr[LOWPROF_EHDR_BYTES / 8];
	/* The dynamic loader's list of loaded objects (r_debug.r_map), found
	 * through the executable's DT_DEBUG at the first pc no cheaper source
	 * placed; dl_buf holds what is read on the way (program headers, then
	 * dynamic entries, then an ELF header and a build id). */
	__u64 dl_map;
	__u32 dl_state;             /* 0: not read, 1: dl_map valid, 2: none */
	__u32 dl_reserved;
	__u64 dl_buf[WALK_DL_BUF_WORDS];
	struct lowprof_vma found;   /* what the list or the lookup found, as the cache keeps it */
};

/* The file list's words after the frames: two per struct lowprof_file_id. */
#define SCRATCH_FILE_WORDS (LOWPROF_SAMPLE_MAX_FILES * 2)

/* Where a sample is built before bpf_ringbuf_output() copies its real length:
 * reserving the maximum size per sample would waste ring space. */
struct scratch_sample {
	struct lowprof_sample hdr; /* its frames[] runs into the array below */
	__u64 frames[LOWPROF_MAX_FRAMES + SCRATCH_FILE_WORDS]; /* then the file list */
	/* Built by the walk, copied after the frames when the sample is recorded. */
	struct lowprof_file_id files[LOWPROF_SAMPLE_MAX_FILES];
	struct walk_mm mm;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch_sample);
} scratch SEC(".maps");

/* What one owner's samples cost on this CPU in the current guard window. */
struct guard_share {
	__u64 window_start_ns; /* the window it counts; another one's: a free slot */
	__u64 run_ns;
	__u64 owner; /* guard_owner */
};

/* Slots are taken in order within a window and all fall free when it ends,
 * so the window's owners are a prefix: a lookup stops at the first free.
 * The last slot counts every owner past the others, together. */
struct guard_shares {
	struct guard_share slot[GUARD_SHARE_SLOTS];
	/* 1 + the slot the running sample is charged to at its end; 0: none.
	 * Kept here, not in a variable: a pointer or index alive across the walk
	 * would make the verifier check the walk once per value it can take. */
	__u32 charge;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct guard_shares);
} guard_shares SEC(".maps");

/* Thread group ids to profile when config.filter_pids is set (-p, and a
 * command with its new processes: bpf/follow.bpf.h), each with its start
 * time in clock ticks after boot (0: not known), and LOWPROF_TARGET_FOLLOW
 * for a process whose children become targets. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LOWPROF_TARGET_PIDS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} target_pids SEC(".maps");

/* The current thread group's start time in clock ticks after boot, as
 * /proc/PID/stat shows it in the loader's time namespace. Global, verified
 * once (a load through the task's trusted pointer; see
 * lowprof_current_has_mm). */
__noinline __u64 lowprof_current_start_ticks(__u64 ns_per_tick, __s64 boottime_offset_ns)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (ns_per_tick == 0)
		return 0;
	return (task->group_leader->start_boottime + boottime_offset_ns) / ns_per_tick;
}

/*
 * Is tgid a -p target, and the very process that was given, not one that
 * got its pid after it exited? The supervisor read the target's start time
 * when it checked the command line; here the current thread group's is
 * compared with it, at every sample, so no moment lets a reused pid through:
 * not the one before the loader holds the target, not a loader's restart
 * while its pinned program runs on.
 */
static __always_inline bool target_pid_matches(const struct lowprof_config *cfg, __u32 tgid)
{
	__u64 *v = bpf_map_lookup_elem(&target_pids, &tgid), start;

	if (!v)
		return false;
	start = *v & ~LOWPROF_TARGET_FOLLOW;
	return start == 0 || cfg->ns_per_tick == 0 ||
	       lowprof_current_start_ticks(cfg->ns_per_tick, cfg->boottime_offset_ns) == start;
}

#include "bpf/unwind_dwarf.bpf.h"

/* Keep one sample in `divisor`, per CPU, without locks: each CPU counts its own. */
static __always_inline bool divisor_keeps(struct lowprof_cpu_stats *st, __u32 divisor)
{
	__u64 n;

	if (divisor <= 1)
		return true;
	n = st->divisor_counter++;
	return (n % divisor) == 0;
}

/* The per-CPU budget guard: true while this CPU's BPF time in the current
 * window is within its share of the budget. Holds even if user space is stuck. */
static __always_inline bool guard_allows_unwind(struct lowprof_cpu_stats *st,
						 const struct lowprof_config *cfg, __u64 now)
{
	if (now - st->window_start_ns >= GUARD_WINDOW_NS) {
		st->window_start_ns = now;
		st->window_run_ns = 0;
	}
	if (cfg->budget_ns_per_window == 0)
		return true;
	return st->window_run_ns < cfg->budget_ns_per_window;
}

struct guard_share_search {
	struct guard_shares *t;
	__u64 window_start_ns;
	__u64 owner;
	__u32 idx; /* the owner's slot, or the first free one */
};

/* A bpf_loop step: the verifier checks it once, not once per slot. */
static long guard_share_search_cb(__u64 i, void *ctx)
{
	struct guard_share_search *q = ctx;
	struct guard_share *e = &q->t->slot[i & (GUARD_SHARE_SLOTS - 1)];

	if (e->window_start_ns != q->window_start_ns || e->owner == q->owner) {
		q->idx = i;
		return 1;
	}
	return 0;
}

/* guard_owner's kinds, in the owner's top two bits above its id: a tgid or
 * a uid is 32 bits, a cgroup id a 64-bit kernfs id whose top half is a
 * generation count that never reaches them. */
#define GUARD_OWNER_USER (1ULL << 62)
#define GUARD_OWNER_CGROUP (2ULL << 62)
/* The id of the cgroup v2 hierarchy's root: processes there (or where no v2
 * hierarchy is used) are told apart by process. */
#define GUARD_ROOT_CGROUP_ID 1

/*
 * Whose share of the guard the current task's samples are charged to. A
 * user's processes share one, whatever their number: the real uid, which an
 * unprivileged process cannot change (a setuid program keeps its caller's;
 * a user namespace maps only its creator's own uid, unless newuidmap grants
 * it subordinate ones). Root's processes share one per cgroup (v2): a
 * service, a login session, a container whose root is the host's, which
 * its runtime gives a read-only cgroup file system so that it cannot split
 * itself. Root's processes in the root cgroup (kernel threads; every
 * process of a host without a cgroup v2 tree) have a share each.
 */
static __always_inline __u64 guard_owner(__u32 tgid)
{
	__u32 uid = (__u32)bpf_get_current_uid_gid();
	__u64 cgroup;

	if (uid)
		return GUARD_OWNER_USER | uid;
	cgroup = bpf_get_current_cgroup_id();
	if (cgroup > GUARD_ROOT_CGROUP_ID)
		return GUARD_OWNER_CGROUP | cgroup;
	return tgid;
}

/*
 * 1 while the current task's owner (guard_owner; tgid is its process) has
 * spent less than share_ns of this CPU's window (which guard_allows_unwind
 * started at window_start_ns), else 0; 1 without a share (no guard). The
 * sample's cost is then charged to that owner by guard_share_charge. Global
 * functions, not inlined: the verifier checks each once on its own, and its
 * callers see one unknown result, not each path.
 */
__noinline int guard_share_allows(__u64 window_start_ns, __u64 share_ns, __u32 tgid)
{
	struct guard_share_search q = {};
	struct guard_share *e;
	__u32 zero = 0;

	if (share_ns == 0)
		return 1;
	q.t = bpf_map_lookup_elem(&guard_shares, &zero);
	if (!q.t)
		return 1;
	q.window_start_ns = window_start_ns;
	q.owner = guard_owner(tgid);
	q.idx = GUARD_SHARE_SLOTS - 1;
	bpf_loop(GUARD_SHARE_SLOTS - 1, guard_share_search_cb, &q, 0);
	q.idx &= GUARD_SHARE_SLOTS - 1;
	e = &q.t->slot[q.idx];
	if (e->window_start_ns != window_start_ns) {
		e->window_start_ns = window_start_ns;
		e->run_ns = 0;
		e->owner = q.owner;
	}
	q.t->charge = q.idx + 1;
	return e->run_ns < share_ns;
}

/* Add the sample's BPF time to the owner guard_share_allows looked up. */
__noinline int guard_share_charge(__u64 elapsed)
{
	struct guard_shares *t;
	__u32 zero = 0;

	t = bpf_map_lookup_elem(&guard_shares, &zero);
	if (!t || t->charge == 0)
		return 0;
	t->slot[(t->charge - 1) & (GUARD_SHARE_SLOTS - 1)].run_ns += elapsed;
	t->charge = 0;
	return 0;
}

/*
 * The sample's file list after its frames (their number from its header):
 * the record's size in bytes, or -1 when the header's depths do not fit.
 * The sampler's and the off-CPU program's walks end in many states: a
 * global function is checked by the verifier once, where inlined it was
 * checked again for each of them.
 */
__noinline int sample_put_files(struct scratch_sample *s)
{
	__u64 nframes;

	if (!s)
		return -1;
	nframes = (__u64)s->hdr.kernel_depth + s->hdr.user_depth;
	if (nframes > LOWPROF_MAX_FRAMES)
		return -1;
	return sizeof(struct lowprof_sample) + nframes * sizeof(__u64) + walk_put_files(s, nframes);
}

/*
 * The sample, its file list after its frames, into the ring: 0 when the
 * ring took it. Global for the same reason (inlined, this and
 * sample_put_files were about 9,000 of the 75,000 instructions the verifier
 * processed, a tenth of the program's load time).
 */
__noinline int sample_submit(struct scratch_sample *s)
{
	__u64 size;
	int put;

	if (!s)
		return -1;
	put = sample_put_files(s);
	if (put < 0)
		return -1;
	size = put;
	/* Keep clang from folding the bound check away from the use the verifier sees. */
	asm volatile("" : "+r"(size));
	if (size > sizeof(*s))
		size = sizeof(*s);
	return bpf_ringbuf_output(&samples, s, size,
				  newcomer_to_wake_for(s->hdr.pid, s->hdr.image_id) ?
					  BPF_RB_FORCE_WAKEUP : samples_wakeup(size)) == 0 ? 0 : -1;
}

SEC("perf_event")
int lowprof_sample(struct bpf_perf_event_data *ctx)
{
	__u64 start = bpf_ktime_get_ns();
	struct lowprof_config *cfg;
	struct lowprof_cpu_stats *st;
	struct scratch_sample *s;
	__u32 zero = 0, tgid, tid, depth;
	__u64 pid_tgid, elapsed, kdepth = 0, udepth = 0, cs;
	bool capped = false;
	long ret;

	st = bpf_map_lookup_elem(&cpu_stats, &zero);
	cfg = bpf_map_lookup_elem(&run_config, &zero);
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!st || !cfg || !s)
		return 0;
	st->events++;

	pid_tgid = bpf_get_current_pid_tgid();
	tgid = pid_tgid >> 32;
	tid = (__u32)pid_tgid;
	if (tid == 0) {
		/* The idle task: counted, not recorded (it has no stack worth showing). */
		st->idle++;
		goto out;
	}
	if (cfg->filter_pids && !target_pid_matches(cfg, tgid)) {
		st->filtered++;
		goto out;
	}
	if (!divisor_keeps(st, cfg->sample_divisor)) {
		st->divisor_skipped++;
		goto out;
	}

	s->hdr.timestamp_ns = start;
	s->hdr.period_ns = cfg->period_ns * (cfg->sample_divisor ? cfg->sample_divisor : 1);
	s->hdr.pid = tgid;
	s->hdr.tid = tid;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.flags = 0;
	s->hdr.nfiles = 0;
	s->hdr.user_stop = LOWPROF_STOP_NONE;
	s->hdr.image_id = current_image_id();
	bpf_get_current_comm(s->hdr.comm, sizeof(s->hdr.comm));

	/* A sample taken in user mode has no kernel stack (the kernel's own
	 * callchain skips it then): no call, and none of the zeroing of the
	 * buffer's unused part that bpf_get_stack does, cache lines the
	 * workload had taken (~0.7 us a sample here). ctx accepts only 8-byte
	 * loads: cs is a u16 followed by padding in its word. */
	cs = *(volatile __u64 *)((char *)&ctx->regs + offsetof(struct pt_regs, cs));
	ret = (cs & 3) == 3 ? 0 :
	      bpf_get_stack(ctx, s->frames, LOWPROF_MAX_KERNEL_DEPTH * sizeof(__u64), 0);
	if (ret > 0)
		kdepth = ret / sizeof(__u64);
	if (kdepth >= LOWPROF_MAX_KERNEL_DEPTH) {
		kdepth = LOWPROF_MAX_KERNEL_DEPTH;
		s->hdr.flags |= LOWPROF_SAMPLE_KERNEL_TRUNCATED;
	}

	if (!guard_allows_unwind(st, cfg, start)) {
		st->guard_skipped++;
		s->hdr.flags |= LOWPROF_SAMPLE_USER_SKIPPED;
	} else if (!guard_share_allows(st->window_start_ns,
				       cfg->budget_ns_per_window / GUARD_SHARE_DIV, tgid)) {
		st->guard_proc_capped++;
		capped = true;
		s->hdr.flags |= LOWPROF_SAMPLE_USER_SKIPPED;
	} else {
		depth = cfg->max_depth;
		if (depth < 1 || depth > LOWPROF_MAX_USER_DEPTH)
			depth = LOWPROF_MAX_USER_DEPTH;
		ret = unwind_user(ctx, s, kdepth, depth, tgid, cfg->unwind_mode != LOWPROF_UNWIND_DWARF);
		udepth = ret > 0 ? ret : 0;
		/* No frame at all, and no reason given: there was no user stack. */
		if (udepth == 0 && s->hdr.user_stop == LOWPROF_STOP_NONE)
			s->hdr.flags |= LOWPROF_SAMPLE_NO_USER_STACK;
	}
	s->hdr.kernel_depth = kdepth;
	s->hdr.user_depth = udepth;
	if (sample_submit(s) == 0)
		st->submitted++;
	else
		st->reserve_failures++;
out:
	elapsed = bpf_ktime_get_ns() - start;
	st->run_time_ns += elapsed;
	/* A sample its owner's share refused is not charged to the window:
	 * it would spend the other processes' half (a few us each, its kernel
	 * stack and record, taken as often as the attacker is sampled). Like a
	 * sample taken once the window is spent, its cost is bounded by the
	 * sampling rate, which the controller sets from run_time_ns. */
	if (!capped)
		st->window_run_ns += elapsed;
	/* Without a guard no owner was looked up to charge (guard_share_allows
	 * sets the charge only with a share): no call, no map line touched. */
	if (cfg->budget_ns_per_window)
		guard_share_charge(elapsed);
	return 0;
}

#include "bpf/offcpu.bpf.h"
#include "bpf/follow.bpf.h"
