/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The off-CPU program, included at the end of lowprof.bpf.c (it uses the
 * scratch layout, the budget guard and the DWARF walker defined before it).
 *
 * At every context switch (raw tracepoint sched_switch, which runs in the
 * task going out):
 *  - the task coming in (next): if its switch-out was recorded (since the
 *    program was last attached), the blocked time is now known; at least
 *    min_ns, its stack goes to the samples ring with weight blocked /
 *    the probability the switch-out was taken with; either way the entry
 *    goes;
 *  - the task going out (prev, the current task): with probability prob_ppm,
 *    and while the budget guard (and its owner's share of it) allows it,
 *    its kernel and user stacks, the time and the probability are stashed
 *    under its tid.
 * The stack must be taken at switch-out: only then is the task current (its
 * user memory readable). The loader attaches this program only with --off-cpu.
 */
#ifndef LOWPROF_OFFCPU_BPF_H
#define LOWPROF_OFFCPU_BPF_H

#include <bpf/bpf_core_read.h>

#include "bpf/offcpu.h"

#define OFFCPU_SKIP_KERNEL_FRAMES 2

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lowprof_offcpu_config);
} offcpu_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lowprof_offcpu_stats);
} offcpu_stats SEC(".maps");

/* tid -> the stack and time of its last recorded switch-out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LOWPROF_OFFCPU_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct scratch_sample);
} offcpu_stash SEC(".maps");

/* The walk of a task in the kernel (with the tables, or fp_only by frame
 * pointers): from the registers saved at its kernel entry (the sampler's
 * entry reads them from a perf context); a 32-bit process's by the kernel's
 * walk. */
static __always_inline long offcpu_unwind_user(struct scratch_sample *s, __u32 base, __u32 max,
					       __u32 tgid, bool fp_only)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct dwarf_walk w = {};
	int compat;

	w.fp_only = fp_only;
	if (dwarf_walk_begin(&w, tgid, WALK_OFFCPU) != 0 || !lowprof_current_has_mm())
		return -1;
	compat = dwarf_walk_saved_regs(&w, task);
	if (compat < 0)
		return -1;
	if (compat)
		return fp_walk_compat(task, s, base, max);
	return dwarf_walk_run(&w, s, base, max);
}

/* The task coming in: charge its blocked time to the stack it left with.
 * Returns whether it had a stashed switch-out (work beyond the floor). */
static __always_inline bool offcpu_switch_in(struct task_struct *next,
					     const struct lowprof_offcpu_config *oc,
					     struct lowprof_offcpu_stats *os, __u64 now)
{
	struct scratch_sample *e;
	__u64 blocked, size;
	__u32 tid;

	tid = BPF_CORE_READ(next, pid);
	if (tid == 0)
		return false;
	e = bpf_map_lookup_elem(&offcpu_stash, &tid);
	if (!e)
		return false;
	/* Stashed before the last attach: what it did while we were detached is
	 * unknown, the blocked time may not be one period. */
	if (e->hdr.timestamp_ns < oc->attached_ns) {
		os->stale_dropped++;
		goto drop;
	}
	blocked = now - e->hdr.timestamp_ns;
	/* period_ns holds, until now, the probability it was taken with (ppm). */
	if (blocked < oc->min_ns || e->hdr.period_ns == 0) {
		os->short_dropped++;
		goto drop;
	}
	e->hdr.period_ns = blocked * LOWPROF_OFFCPU_PPM_ONE / e->hdr.period_ns;
	size = sizeof(struct lowprof_sample) +
	       ((__u64)e->hdr.kernel_depth + e->hdr.user_depth) * sizeof(__u64) +
	       (__u64)e->hdr.nfiles * sizeof(struct lowprof_file_id);
	asm volatile("" : "+r"(size));
	if (size > sizeof(*e))
		size = sizeof(*e);
	/* It wakes the loader as a sample does: a host where few CPUs are busy
	 * but many threads block (few samples, many records) filled the ring
	 * between two of the loader's timed drains, unseen. */
	if (bpf_ringbuf_output(&samples, e, size, samples_wakeup(size)) == 0)
		os->submitted++;
	else
		os->reserve_failures++;
drop:
	bpf_map_delete_elem(&offcpu_stash, &tid);
	return true;
}

/* The task going out (current): record its stacks, maybe. Returns whether
 * it went as far as taking them (work beyond the floor); *capped tells a
 * refusal by the owner's share. */
static __always_inline bool offcpu_switch_out(void *ctx, const struct lowprof_config *cfg,
					      const struct lowprof_offcpu_config *oc,
					      struct lowprof_cpu_stats *st,
					      struct lowprof_offcpu_stats *os, __u64 now,
					      bool *capped)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), kdepth = 0, udepth = 0;
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0, depth;
	struct scratch_sample *s;
	long ret;

	if (tid == 0)
		return false;
	if (cfg->filter_pids && !target_pid_matches(cfg, tgid))
		return false;
	if (oc->prob_ppm < LOWPROF_OFFCPU_PPM_ONE &&
	    bpf_get_prandom_u32() % LOWPROF_OFFCPU_PPM_ONE >= oc->prob_ppm)
		return false;
	os->sampled++;
	if (!guard_allows_unwind(st, cfg, now)) {
		os->guard_skipped++;
		return false;
	}
	/* The sampler's per-owner share covers switch-outs too (a switch storm
	 * with deep stacks is one more way to spend the window). */
	if (!guard_share_allows(st->window_start_ns, cfg->budget_ns_per_window / GUARD_SHARE_DIV,
				tgid)) {
		st->guard_proc_capped++;
		*capped = true;
		return false;
	}
	s = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!s)
		return true;
	s->hdr.timestamp_ns = now;
	/* The probability this switch-out was taken with: its weight's divisor
	 * at switch-in, whatever the controller sets meanwhile. */
	s->hdr.period_ns = oc->prob_ppm;
	s->hdr.pid = tgid;
	s->hdr.tid = tid;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.flags = LOWPROF_SAMPLE_OFF_CPU;
	s->hdr.nfiles = 0;
	s->hdr.user_stop = LOWPROF_STOP_NONE;
	s->hdr.image_id = current_image_id();
	bpf_get_current_comm(s->hdr.comm, sizeof(s->hdr.comm));

	/* Skip this program's own frames (the program, bpf_trace_run4): the stack
	 * starts at __schedule. */
	ret = bpf_get_stack(ctx, s->frames, LOWPROF_MAX_KERNEL_DEPTH * sizeof(__u64),
			    OFFCPU_SKIP_KERNEL_FRAMES & BPF_F_SKIP_FIELD_MASK);
	if (ret > 0)
		kdepth = ret / sizeof(__u64);
	if (kdepth >= LOWPROF_MAX_KERNEL_DEPTH) {
		kdepth = LOWPROF_MAX_KERNEL_DEPTH;
		s->hdr.flags |= LOWPROF_SAMPLE_KERNEL_TRUNCATED;
	}
	depth = cfg->max_depth;
	if (depth < 1 || depth > LOWPROF_MAX_USER_DEPTH)
		depth = LOWPROF_MAX_USER_DEPTH;
	ret = offcpu_unwind_user(s, kdepth, depth, tgid, cfg->unwind_mode != LOWPROF_UNWIND_DWARF);
	udepth = ret > 0 ? ret : 0;
	if (udepth == 0 && s->hdr.user_stop == LOWPROF_STOP_NONE)
		s->hdr.flags |= LOWPROF_SAMPLE_NO_USER_STACK;
	s->hdr.kernel_depth = kdepth;
	s->hdr.user_depth = udepth;
	/* The file list after the frames now: the stash keeps the sample as recorded. */
	sample_put_files(s);
	if (bpf_map_update_elem(&offcpu_stash, &tid, s, BPF_ANY) == 0)
		os->stashed++;
	return true;
}

SEC("raw_tp/sched_switch")
int lowprof_offcpu_switch(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 start = bpf_ktime_get_ns(), elapsed;
	struct lowprof_offcpu_config *oc;
	struct lowprof_offcpu_stats *os;
	struct lowprof_config *cfg;
	struct lowprof_cpu_stats *st;
	__u32 zero = 0;
	bool worked, capped = false;

	oc = bpf_map_lookup_elem(&offcpu_config, &zero);
	os = bpf_map_lookup_elem(&offcpu_stats, &zero);
	cfg = bpf_map_lookup_elem(&run_config, &zero);
	st = bpf_map_lookup_elem(&cpu_stats, &zero);
	if (!oc || !os || !cfg || !st || !oc->enabled)
		return 0;
	os->switches++;
	/* args: preempt, prev, next, prev_state */
	worked = offcpu_switch_in((struct task_struct *)ctx->args[2], oc, os, start);
	worked |= offcpu_switch_out(ctx, cfg, oc, st, os, start, &capped);
	/* Measured like the sampler: the controller and the guard see it. */
	elapsed = bpf_ktime_get_ns() - start;
	os->run_time_ns += elapsed;
	/* The floor: what being attached costs at a switch that takes no stack
	 * and charges no blocked time, at any probability (the guard's refusals
	 * count: a storm at 100% is mostly those). The controller keeps the
	 * program detached while the host's switch rate times this would alone
	 * exceed off-CPU's share of the budget. */
	if (!worked) {
		os->floor_runs++;
		os->floor_run_ns += elapsed;
	}
	st->run_time_ns += elapsed;
	/* As the sampler: a switch-out its owner's share refused does not
	 * spend the other processes' half of the window. */
	if (!capped)
		st->window_run_ns += elapsed;
	if (cfg->budget_ns_per_window) /* as the sampler: no guard, nothing to charge */
		guard_share_charge(elapsed);
	return 0;
}

#endif /* LOWPROF_OFFCPU_BPF_H */
