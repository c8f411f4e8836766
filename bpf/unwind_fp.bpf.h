/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The frame-pointer walk: the user stack of the throttle's cheaper tiers (and
 * of --unwind fp), included by bpf/unwind_dwarf.bpf.h, whose stack window and
 * frame-pointer step it shares.
 *
 * The kernel's own walk (bpf_get_stack with BPF_F_USER_STACK) reads each
 * frame's two words with a fault-guarded user copy of its own, and the
 * frames then took a second pass to be placed in their files: together more
 * than the DWARF walk of the same stack built with frame pointers (3.6 against
 * 2.8 us a sample on bench_deep35 at 99 Hz), so the tiers meant to cost less
 * cost more. This walk steps RBP through the walker's window (one copy per
 * 512 bytes of stack) and places each frame as it goes.
 *
 * What it keeps of the kernel's walk: the frames are the interrupted pc, then
 * the return address found at [RBP + 8] frame after frame; a frame whose file
 * is not known cheaply stays a raw address (the exporter names it through the
 * process's maps), and a frame in a file known to keep no frame pointers is
 * the last one that can be trusted (the stack ends after it, with a marker).
 * What it adds: a step is believed only with RBP above RSP, 8-byte aligned and
 * less than UW_FP_MAX_FRAME above it (dwarf_fp_frame), so that a register
 * used for data ends the stack instead of sending the walk through memory.
 * A 32-bit (compat) process's frames are 4 bytes, which neither this walk
 * nor the DWARF walk reads: its stack is the kernel's walk (fp_walk_compat),
 * in every mode.
 */
#ifndef LOWPROF_UNWIND_FP_BPF_H
#define LOWPROF_UNWIND_FP_BPF_H

/* Only the cheap sources place a frame here: the throttle falls back to
 * these tiers under load. No bpf_find_vma, no search of the dynamic
 * loader's list: the frames they would place, the exporter names anyway. */
static __always_inline void fp_walk_cheap_sources(struct dwarf_walk *w)
{
	__u32 zero = 0;

	w->f.lookup_used = 1;
	w->f.dl_searches = UW_DL_SEARCHES;
	/* No chunk of rows: no file has a table (--unwind fp builds none), so
	 * no source can place a frame: every one stays raw, no call per frame. */
	w->raw_only = !bpf_map_lookup_elem(&unwind_rows, &zero);
}

/* Is lookup worth a call of the resolver? Not once no source but the vDSO
 * can place anything more in this walk. */
static __always_inline bool fp_walk_may_place(const struct dwarf_walk *w, __u64 lookup)
{
	if (w->raw_only)
		return false;
	if (!w->f.exhausted)
		return true;
	return lookup >= w->s->mm.vdso_start && lookup < w->s->mm.vdso_end;
}

/* __USER32_CS: the code segment a 32-bit process's user registers hold. */
#define UW_USER32_CS 0x23

/* Do user registers saved with code segment cs belong to 32-bit code? */
static __always_inline bool fp_walk_is_compat_cs(__u64 cs)
{
	return (cs & 0xffff) == UW_USER32_CS;
}

/*
 * A 32-bit process's stack by the kernel's walk (bpf_get_task_stack of the
 * current task with BPF_F_USER_STACK: perf's 32-bit callchain, 4-byte frame
 * pointers, from the user registers it saved) into s->frames[base...], every
 * frame raw (the exporter names it through the process's maps). No tables
 * are built for 32-bit files, and a walk of 8-byte words would read two
 * frames as one: without this the stack was its first frame and
 * "[unwind failed]". Returns the number of frames. By task, not by the
 * program's context: the off-CPU program's walk fills its frame to the
 * verifier's 512 bytes, and keeping the context live for this took more.
 */
static __always_inline long fp_walk_compat(struct task_struct *task, struct scratch_sample *s,
					   __u32 base, __u32 max)
{
	long ret;

	/* base <= LOWPROF_MAX_KERNEL_DEPTH and max <= LOWPROF_MAX_USER_DEPTH:
	 * the frames fit after the kernel's. */
	ret = bpf_get_task_stack(task, &s->frames[base & (LOWPROF_MAX_KERNEL_DEPTH * 2 - 1)],
				 max * sizeof(__u64), BPF_F_USER_STACK);
	if (ret <= 0)
		return 0;
	if (ret / sizeof(__u64) >= max)
		s->hdr.flags |= LOWPROF_SAMPLE_USER_TRUNCATED;
	return ret / sizeof(__u64);
}

static long fp_loop_cb(__u64 i, void *ctx)
{
	struct dwarf_walk *w = ctx;
	__u64 pc = w->r.pc, lookup, frame = pc;
	bool placed = false;

	if (w->n >= w->max) {
		w->truncated = true;
		return 1;
	}
	/* The first pc is exact; a return address may be just past a call
	 * ending its function. */
	lookup = w->r.signal_pc ? pc : pc - 1;
	if (walk_in_current(&w->f, lookup)) {
		frame = walk_encode(&w->f, pc);
	} else if (fp_walk_may_place(w, lookup)) {
		if (lowprof_walk_resolve(&w->f, lookup) == 0) {
			frame = walk_encode(&w->f, pc);
			placed = true;
		} else if (w->n == 0 && walk_first_pc_unplaced() == LOWPROF_STOP_IN_EXECVE) {
			walk_stop(w->s, w->st, LOWPROF_STOP_IN_EXECVE);
			return 1;
		}
	}
	if (!dwarf_walk_record(w, frame))
		return 1;
	/* A file keeping no frame pointers left RBP to anything: its frame was
	 * reached through a frame pointer, the next one would not be, so the
	 * stack ends here, said so unless RBP is 0 (the outermost frame: _start
	 * and a thread's entry clear it). Once such a file's VMA is current the
	 * stack has ended, so only a newly placed frame can be in one. */
	if (placed && w->f.v.has_tab && (w->f.v.tab.flags & LOWPROF_UNWIND_FILE_NO_FP)) {
		if (w->r.bp != 0)
			walk_stop(w->s, w->st, LOWPROF_STOP_NO_FRAME_POINTERS);
		return 1;
	}
	/* The chain ends where RBP is no frame pointer (0 past a thread's
	 * entry, data in a leaf without a frame) or cannot be read, and at a
	 * "return address" in the first page: as the kernel's walk ends, no
	 * stop reason. */
	if (dwarf_fp_frame(&w->r, w->st) != 0 || w->r.pc < 4096)
		return 1;
	/* No user address: read from a broken chain. It ends before it, and no
	 * frame kind is forged from its top byte. */
	if (w->r.pc > LOWPROF_FRAME_VALUE_MASK) {
		walk_stop(w->s, w->st, LOWPROF_STOP_UNWIND_FAILED);
		return 1;
	}
	return 0;
}

#endif /* LOWPROF_UNWIND_FP_BPF_H */
