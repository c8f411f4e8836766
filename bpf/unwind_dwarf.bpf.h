/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The DWARF (.eh_frame) user-stack walker, included by lowprof.bpf.c.
 *
 * The loader writes three things (loader/unwind_maps.c): every cached file's
 * rows into one big array (unwind_rows; each file owns a contiguous range),
 * and per process the sorted list of its executable mappings with the
 * file's row range and load bias (unwind_procs). The walker, per frame:
 * find the mapping, binary-search the row, compute the CFA, read the return
 * address at CFA - 8, restore RBP, continue with the caller (docs/UNWINDING.md).
 *
 * It runs as a bpf_loop() callback: the verifier checks one step, not 128.
 * Two raw tracepoint programs (no tracefs needed) forget a process's mappings at exec and exit and
 * tell the loader, which keeps its file reference counts.
 */
#ifndef LOWPROF_UNWIND_DWARF_BPF_H
#define LOWPROF_UNWIND_DWARF_BPF_H

/* Mirrors of enum unwind_cfa_kind / unwind_rbp_kind (unwind/unwind_table.h);
 * the loader asserts they agree. */
#define UW_CFA_NONE 0
#define UW_CFA_RSP 1
#define UW_CFA_RBP 2
#define UW_CFA_PLT 3
#define UW_CFA_SIGNAL 4
#define UW_CFA_END 5
#define UW_RBP_SAME 0
#define UW_RBP_AT_CFA 1

/* Offsets in the x86_64 rt_sigframe as seen from the RSP of __restore_rt
 * (the return into it has popped pretcode): ucontext, then uc_mcontext at
 * +40 (uc_flags, uc_link, uc_stack), whose rbp, rsp and rip are the 11th,
 * 16th and 17th words (struct sigcontext_64). */
#define UW_SIGFRAME_RBP (40 + 10 * 8)
#define UW_SIGFRAME_RSP (40 + 15 * 8)
#define UW_SIGFRAME_RIP (40 + 16 * 8)

/* A signal frame's saved RSP lies just above the frame (the red zone, the
 * xsave area, the frame itself: tens of KiB at most) on the same stack;
 * further, below, or not 8-byte aligned, it is not believed. */
#define UW_SIGFRAME_MAX_GAP (1ULL << 20)

/* A frame-pointer step trusts RBP only this far above RSP: further is almost
 * surely not a frame pointer but a register used for data. */
#define UW_FP_MAX_FRAME (8ULL << 20)

/* One chunk of rows; mmapable so the loader copies a file's rows with memcpy,
 * not a syscall each. */
struct unwind_rows_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LOWPROF_UNWIND_CHUNK_ROWS);
	/* Sizes, not BTF types: an inner map's value type would be a forward declaration. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct lowprof_unwind_row));
};

/* Row index >> LOWPROF_UNWIND_CHUNK_SHIFT -> its chunk, created by the loader
 * as tables need it; sized before load from --unwind-table-mb. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct unwind_rows_chunk);
} unwind_rows SEC(".maps");

/* tgid -> mappings. Allocated as used (4 KiB each), not preallocated. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct lowprof_unwind_proc);
} unwind_procs SEC(".maps");

/* tgids whose tables the loader should (re)build; it deletes what it reads. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32); /* enum lowprof_unwind_pending_reason */
} unwind_pending SEC(".maps");

/* exec / exit of thread groups, drained by the loader on its timer. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} unwind_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lowprof_unwind_stats);
} unwind_stats SEC(".maps");

/* Per CPU: the walk (its sample's timestamp) that last left a sigaltstack.
 * In a map, not in the walk's state: a flag there would make the verifier
 * check the walk once more per value it can hold. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} unwind_altstack_walk SEC(".maps");

/* Row idx of the whole array, or NULL (its chunk not there, or out of range). */
static __always_inline struct lowprof_unwind_row *dwarf_row(__u32 idx)
{
	__u32 chunk = idx >> LOWPROF_UNWIND_CHUNK_SHIFT, off = idx & (LOWPROF_UNWIND_CHUNK_ROWS - 1);
	void *rows = bpf_map_lookup_elem(&unwind_rows, &chunk);

	if (!rows)
		return NULL;
	return bpf_map_lookup_elem(rows, &off);
}

/* The walk's state, on the program's stack, handed to every bpf_loop step. */
struct dwarf_walk {
	struct scratch_sample *s;
	struct lowprof_unwind_proc *proc;
	struct lowprof_unwind_stats *st;
	__u64 pc, sp, bp;
	__u32 tgid;
	__u32 base;      /* index of the first user frame in s->frames */
	__u32 n;         /* user frames recorded */
	__u32 max;       /* max_depth */
	__u32 last_map;  /* mapping of the previous frame: the next is often in it too */
	/* The row found for the previous lookup address: recursion (and a loop
	 * calling the same function) returns to the same address frame after
	 * frame, and then skips both binary searches. */
	__u64 cached_lookup;
	__u32 cached_row;
	bool cached;
	bool signal_pc;  /* pc is exact (first frame, or interrupted by a signal) */
	bool bp_valid;
	bool truncated;
	bool pending_sent;
};

/*
 * Ask the loader for (new) tables of this process: sampled without any yet,
 * or at a pc outside every known mapping (dlopen, or tables read just before
 * an exec). Wake it now (its timer may be a second away), so that the stacks
 * are whole from the next samples on. Once per walk; BPF_NOEXIST keeps the
 * first reason, and sends one wake-up, until the loader has read it.
 */
static __always_inline void dwarf_mark_pending(struct dwarf_walk *w, __u32 reason)
{
	struct lowprof_proc_event ev;

	if (w->pending_sent)
		return;
	w->pending_sent = true;
	if (bpf_map_update_elem(&unwind_pending, &w->tgid, &reason, BPF_NOEXIST) != 0)
		return;
	ev.type = LOWPROF_PROC_PENDING;
	ev.pid = w->tgid;
	bpf_ringbuf_output(&unwind_events, &ev, sizeof(ev), BPF_RB_FORCE_WAKEUP);
}

/*
 * Binary searches run as nested bpf_loop() callbacks: as plain loops the
 * verifier follows every combination of branches with exact bounds (the
 * row index becomes a known constant key) and gives up past 1M instructions.
 * A callback is checked once, with lo and hi as unknown scalars.
 */
struct dwarf_search {
	struct lowprof_unwind_proc *proc; /* mapping search */
	__u64 key;
	__u32 first; /* row search: the file's first row */
	__u32 lo, hi;
	__u32 n;     /* row search: the file's rows; its page index follows them */
};

/* Narrows [lo, hi) to the first entry whose start is above key. */
static long dwarf_mapping_search_cb(__u64 i, void *ctx)
{
	struct dwarf_search *q = ctx;
	__u32 mid;

	if (q->lo >= q->hi)
		return 1;
	mid = (q->lo + q->hi) / 2;
	if (q->proc->m[mid & (LOWPROF_UNWIND_MAX_MAPPINGS - 1)].start <= q->key)
		q->lo = mid + 1;
	else
		q->hi = mid;
	return 0;
}

/*
 * Word j of the page index that starts at row slot base (bpf/lowprof.h); -1
 * if unreadable. Two loads at fixed offsets and a choice by j's low bits: a
 * load at a variable offset would make the verifier track j, and through it
 * the pc, precisely, and verify the walk once per pc range.
 */
static __always_inline long dwarf_index_word(__u32 base, __u32 j)
{
	struct lowprof_unwind_row *r = dwarf_row(base + (j >> 2));
	__u64 lo, hi, v;

	if (!r)
		return -1;
	lo = *(volatile __u64 *)r;
	hi = *(volatile __u64 *)((char *)r + 8);
	v = (j & 2) ? hi : lo;
	return (j & 1) ? (long)(v >> 32) : (long)(v & 0xffffffffULL);
}

/*
 * The first step of the row search: narrow [lo, hi) to the rows of the key's
 * page (bpf/lowprof.h). Inside the callback, so that the verifier meets the
 * ranges it may choose as unknown numbers rather than as paths of the caller.
 */
static __always_inline long dwarf_page_step(struct dwarf_search *q)
{
	struct lowprof_unwind_row *r0 = dwarf_row(q->first);
	__u32 base = q->first + q->n;
	long npages, a, b;
	__u64 page;

	if (!r0 || q->key < r0->pc) {
		q->lo = 0; /* below the first row: not found */
		return 1;
	}
	npages = dwarf_index_word(base, 0);
	if (npages < 0) {
		q->lo = 0;
		return 1;
	}
	if (npages == 0)
		return 0; /* no index: search all rows */
	page = (q->key >> LOWPROF_UNWIND_PAGE_SHIFT) - (r0->pc >> LOWPROF_UNWIND_PAGE_SHIFT);
	if (page > (__u64)npages)
		page = npages; /* past the last row's page: its bounds give the last row */
	a = dwarf_index_word(base, 1 + (__u32)page);
	b = dwarf_index_word(base, 2 + (__u32)page);
	if (a < 0 || b < a || b >= q->n) {
		q->lo = 0;
		return 1;
	}
	q->lo = (__u32)a;
	q->hi = (__u32)b + 1;
	return 0;
}

static long dwarf_row_search_cb(__u64 i, void *ctx)
{
	struct dwarf_search *q = ctx;
	struct lowprof_unwind_row *r;
	__u32 mid, idx;

	if (i == 0)
		return dwarf_page_step(q);
	if (q->lo >= q->hi)
		return 1;
	mid = (q->lo + q->hi) / 2;
	idx = q->first + mid;
	r = dwarf_row(idx);
	if (!r) {
		q->lo = 0; /* not found */
		return 1;
	}
	if (r->pc <= q->key)
		q->lo = mid + 1;
	else
		q->hi = mid;
	return 0;
}

/* The mapping covering pc, or NULL. Mappings are sorted and disjoint. */
static __always_inline struct lowprof_unwind_mapping *dwarf_find_mapping(struct dwarf_walk *w,
									  __u64 pc)
{
	struct lowprof_unwind_proc *p = w->proc;
	struct lowprof_unwind_mapping *m;
	struct dwarf_search q = {};
	__u32 i;

	i = w->last_map & (LOWPROF_UNWIND_MAX_MAPPINGS - 1);
	m = &p->m[i];
	if (pc >= m->start && pc < m->end)
		return m;
	q.proc = p;
	q.key = pc;
	q.hi = p->nmappings;
	if (q.hi > LOWPROF_UNWIND_MAX_MAPPINGS)
		q.hi = LOWPROF_UNWIND_MAX_MAPPINGS;
	bpf_loop(LOWPROF_UNWIND_MAPPING_STEPS, dwarf_mapping_search_cb, &q, 0);
	if (q.lo == 0)
		return NULL;
	i = (q.lo - 1) & (LOWPROF_UNWIND_MAX_MAPPINGS - 1);
	m = &p->m[i];
	if (pc < m->start || pc >= m->end)
		return NULL;
	w->last_map = i;
	return m;
}

/* The row covering the ELF address pc in [first, first + n) and its index, or NULL. */
static __always_inline struct lowprof_unwind_row *dwarf_find_row(__u32 first, __u32 n, __u64 pc,
								  __u32 *idx)
{
	struct dwarf_search q = {};

	q.key = pc;
	q.first = first;
	q.n = n;
	q.hi = n;
	/* One step for the page index, then the search of the rows it gives. */
	bpf_loop(LOWPROF_UNWIND_ROW_STEPS + 1, dwarf_row_search_cb, &q, 0);
	if (q.lo == 0)
		return NULL;
	*idx = first + q.lo - 1;
	return dwarf_row(*idx);
}

/*
 * One frame-pointer step (no usable row): the caller's RBP at [RBP], its
 * return address at [RBP + 8], its RSP at RBP + 16. Plausible only if RBP
 * lies a little above RSP: a leaf without a frame leaves the caller's RBP,
 * and that still points into the stack above it.
 */
static __always_inline int dwarf_fp_step(struct dwarf_walk *w)
{
	__u64 pair[2];

	if (!w->bp_valid || w->bp < w->sp || w->bp - w->sp > UW_FP_MAX_FRAME || (w->bp & 7))
		return -1;
	if (bpf_probe_read_user(pair, sizeof(pair), (void *)w->bp) != 0) {
		w->st->read_errors++;
		return -1;
	}
	w->sp = w->bp + 16;
	w->bp = pair[0];
	w->pc = pair[1];
	w->signal_pc = false;
	w->st->fp_fallbacks++;
	return 0;
}

/*
 * May the walk go on at a signal frame's saved sp and pc, the frame being
 * at cur_sp? Only upwards on the same stack (above the frame, by at most
 * UW_SIGFRAME_MAX_GAP, aligned), at a user address, or once per walk (walk:
 * its sample's timestamp) from the thread's sigaltstack, as the kernel has
 * it (not as the frame says), to outside it. Anything else could send the
 * walk anywhere, or round in circles, on a stack the process wrote itself.
 * 1: go on; 0: refused (counted). A global function: the verifier checks it
 * once, and the walk sees one unknown result instead of each path.
 */
__noinline int dwarf_sigframe_check(__u64 cur_sp, __u64 sp, __u64 pc, __u64 walk)
{
	struct lowprof_cpu_stats *cs;
	struct task_struct *task;
	__u64 ss_lo, ss_size, *left;
	__u32 zero = 0;

	if ((sp & 7) || pc < 4096 || pc >= 0x800000000000ULL)
		goto refuse;
	if (sp > cur_sp && sp - cur_sp <= UW_SIGFRAME_MAX_GAP)
		return 1;
	task = bpf_get_current_task_btf();
	ss_lo = task->sas_ss_sp;
	ss_size = task->sas_ss_size;
	left = bpf_map_lookup_elem(&unwind_altstack_walk, &zero);
	if (left && *left != walk && ss_size != 0 && cur_sp - ss_lo < ss_size &&
	    sp - ss_lo >= ss_size) {
		*left = walk;
		return 1;
	}
refuse:
	/* Counted beside the guard's counters: the loader reports them together. */
	cs = bpf_map_lookup_elem(&cpu_stats, &zero);
	if (cs)
		cs->sigframe_refused++;
	return 0;
}

/* Returns 0 to go on with w->pc, 1 at the outermost frame, -1 when stuck. */
static __always_inline int dwarf_step(struct dwarf_walk *w)
{
	struct lowprof_unwind_mapping *m;
	struct lowprof_unwind_row *r = NULL;
	__u64 pc = w->pc, lookup, cfa, ra, bp;
	__u32 idx;
	__u8 kind;

	/* A return address may be just past a call ending its function (noreturn). */
	lookup = w->signal_pc ? pc : pc - 1;
	if (w->cached && lookup == w->cached_lookup)
		r = dwarf_row(w->cached_row);
	if (r)
		goto found;
	m = dwarf_find_mapping(w, lookup);
	if (!m) {
		w->st->missing_mapping++;
		dwarf_mark_pending(w, LOWPROF_UNWIND_PENDING_MAPPING);
		return dwarf_fp_step(w);
	}
	if (m->nrows == 0) {
		w->st->missing_table++;
		return dwarf_fp_step(w);
	}
	r = dwarf_find_row(m->first_row, m->nrows, lookup - m->bias, &idx);
	if (!r)
		return dwarf_fp_step(w);
	w->cached_lookup = lookup;
	w->cached_row = idx;
	w->cached = true;
found:
	kind = r->cfa_kind;
	switch (kind) {
	case UW_CFA_END:
		return 1;
	case UW_CFA_RSP:
		cfa = w->sp + r->cfa_off;
		break;
	case UW_CFA_RBP:
		if (!w->bp_valid)
			return -1;
		cfa = w->bp + r->cfa_off;
		break;
	case UW_CFA_PLT:
		/* The rule uses the runtime pc: PLT entries are 16-byte aligned either way. */
		cfa = w->sp + r->cfa_off + ((pc & 15) >= (__u64)r->rbp_off ? 8 : 0);
		break;
	case UW_CFA_SIGNAL: {
		/* rbp, then 5 words later rsp and rip: one read of the 7 words. */
		__u64 block[7];

		if (bpf_probe_read_user(block, sizeof(block), (void *)(w->sp + UW_SIGFRAME_RBP)) != 0) {
			w->st->read_errors++;
			return -1;
		}
		if (!dwarf_sigframe_check(w->sp, block[5], block[6], w->s->hdr.timestamp_ns))
			return -1;
		w->bp = block[0];
		w->sp = block[5];
		w->pc = block[6];
		w->bp_valid = true;
		w->signal_pc = true;
		w->st->frames++;
		return 0;
	}
	default: /* NONE, UNSUPPORTED */
		return dwarf_fp_step(w);
	}
	/* The stack grows down: a caller's frame is above its callee's. */
	if (cfa <= w->sp)
		return -1;
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)) != 0) {
		w->st->read_errors++;
		return -1;
	}
	if (r->rbp_kind == UW_RBP_AT_CFA) {
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + r->rbp_off)) != 0) {
			w->st->read_errors++;
			return -1;
		}
		w->bp = bp;
		w->bp_valid = true;
	} else if (r->rbp_kind != UW_RBP_SAME) {
		w->bp_valid = false;
	}
	w->sp = cfa;
	w->pc = ra;
	w->signal_pc = false;
	w->st->frames++;
	return 0;
}

static long dwarf_loop_cb(__u64 i, void *ctx)
{
	struct dwarf_walk *w = ctx;
	__u32 idx;
	int rc;

	if (w->n >= w->max) {
		w->truncated = true;
		return 1;
	}
	idx = w->base + w->n;
	if (idx >= LOWPROF_MAX_FRAMES)
		return 1;
	w->s->frames[idx] = w->pc;
	w->n++;
	rc = dwarf_step(w);
	if (rc > 0) {
		w->st->complete++;
		return 1;
	}
	if (rc < 0) {
		w->st->stopped++;
		return 1;
	}
	/* Address 0 or a kernel address as return address: the stack has ended. */
	if (w->pc < 4096 || w->pc >= 0x800000000000ULL) {
		w->st->stopped++;
		return 1;
	}
	return 0;
}

/*
 * The two ends every walk shares. begin: the per-CPU statistics and the
 * process's mappings, or -1 (no tables yet: the loader is told once, the
 * caller takes the frame-pointer stack). run: once w->pc, sp and bp hold the
 * task's user registers, the frames into s->frames[base...]; their number,
 * or -1 without a user pc.
 */
static __always_inline int dwarf_walk_begin(struct dwarf_walk *w, __u32 tgid)
{
	__u32 zero = 0;

	w->st = bpf_map_lookup_elem(&unwind_stats, &zero);
	if (!w->st)
		return -1;
	w->tgid = tgid;
	w->proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	if (!w->proc) {
		w->st->missing_proc++;
		dwarf_mark_pending(w, LOWPROF_UNWIND_PENDING_NEW);
		return -1;
	}
	return 0;
}

/* The user registers a task saved when it entered the kernel: where a walk of
 * a task interrupted (or switched out) in kernel mode starts. */
static __always_inline int dwarf_walk_saved_regs(struct dwarf_walk *w, struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	if (!regs)
		return -1;
	w->pc = regs->ip;
	w->sp = regs->sp;
	w->bp = regs->bp;
	return 0;
}

static __always_inline long dwarf_walk_run(struct dwarf_walk *w, struct scratch_sample *s,
					   __u32 base, __u32 max)
{
	if (w->pc == 0)
		return -1;
	w->s = s;
	w->base = base;
	w->max = max;
	w->bp_valid = true;
	w->signal_pc = true;
	w->st->samples++;
	/* One more iteration than frames, to tell a cut stack from a complete one. */
	bpf_loop(LOWPROF_MAX_USER_DEPTH + 1, dwarf_loop_cb, w, 0);
	if (w->truncated) {
		w->st->truncated++;
		s->hdr.flags |= LOWPROF_SAMPLE_USER_TRUNCATED;
	}
	return w->n;
}

/*
 * Walk the user stack of the current task with the tables into
 * s->frames[base...]. Returns the number of frames, or -1 when the process
 * has no tables (the caller takes the frame-pointer stack instead) or no
 * user context.
 */
static __always_inline long unwind_dwarf_user(struct bpf_perf_event_data *ctx,
					      struct scratch_sample *s, __u32 base, __u32 max,
					      __u32 tgid)
{
	struct task_struct *task;
	struct dwarf_walk w = {};
	__u64 cs;

	if (dwarf_walk_begin(&w, tgid) != 0)
		return -1;
	task = bpf_get_current_task_btf();
	if (!task->mm)
		return -1; /* a kernel thread: no user stack */
	/* ctx accepts only 8-byte loads: cs is a u16 followed by padding in its word.
	 * Load everything from ctx first so that clang cannot merge the two register
	 * sources into one pointer (the verifier refuses a moved ctx pointer). */
	cs = *(volatile __u64 *)((char *)&ctx->regs + offsetof(struct pt_regs, cs));
	w.pc = ctx->regs.ip;
	w.sp = ctx->regs.sp;
	w.bp = ctx->regs.bp;
	/* A sample taken in kernel mode: start from the registers saved at entry. */
	if ((cs & 3) != 3 && dwarf_walk_saved_regs(&w, task) != 0)
		return -1;
	return dwarf_walk_run(&w, s, base, max);
}

/* A new program image: the old mappings are wrong from now on. */
SEC("raw_tp/sched_process_exec")
int lowprof_proc_exec(void *ctx)
{
	struct lowprof_proc_event ev;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (bpf_map_delete_elem(&unwind_procs, &tgid) != 0)
		return 0; /* no tables for it: nothing to rebuild */
	ev.type = LOWPROF_PROC_EXEC;
	ev.pid = tgid;
	bpf_ringbuf_output(&unwind_events, &ev, sizeof(ev), BPF_RB_NO_WAKEUP);
	return 0;
}

/* The thread group is gone once its leader exits (sched_process_exit fires per thread). */
SEC("raw_tp/sched_process_exit")
int lowprof_proc_exit(void *ctx)
{
	struct lowprof_proc_event ev;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if ((__u32)id != tgid)
		return 0;
	if (!bpf_map_lookup_elem(&unwind_procs, &tgid))
		return 0; /* the loader never built tables for it: nothing to release */
	bpf_map_delete_elem(&unwind_procs, &tgid);
	ev.type = LOWPROF_PROC_EXIT;
	ev.pid = tgid;
	bpf_ringbuf_output(&unwind_events, &ev, sizeof(ev), BPF_RB_NO_WAKEUP);
	return 0;
}

#endif /* LOWPROF_UNWIND_DWARF_BPF_H */
