/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The DWARF (.eh_frame) user-stack walker, included by lowprof.bpf.c.
 *
 * The loader writes every file's rows into one big array (unwind_rows; each
 * file owns a contiguous range) and, keyed by the file's identity, its row
 * range and executable segments (unwind_files, bpf/unwind_vma.bpf.h). The
 * walker, per frame: the pc's VMA (the previous frame's, or found as
 * bpf/unwind_vma.bpf.h says), the file offset, the ELF address, binary-search
 * the row, compute the CFA, read the return address at CFA - 8, restore RBP,
 * continue with the caller (docs/UNWINDING.md). A frame it cannot place in a
 * file with a table ends the stack with a stop reason: never a guess.
 *
 * It runs as a bpf_loop() callback: the verifier checks one step, not 128.
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

#include "bpf/call_insn.h"
#include "bpf/unwind_vma.bpf.h"

/* Per CPU: the walk (its sample's timestamp) that last left a sigaltstack.
 * In a map, not in the walk's state: a flag there would make the verifier
 * check the walk once more per value it can hold. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} unwind_altstack_walk SEC(".maps");

/*
 * The user stack as the walk reads it, per CPU and walker: a copy of up to
 * UW_WINDOW_BYTES from the lowest address the walk last had to read, never
 * past that address's page (a mapping ends on a page boundary, so the copy
 * does not fail where a small read would not). A walk reads the stack
 * upwards only (every step's CFA is above RSP, a frame-pointer step's RBP
 * too), a few words a frame, and each bpf_probe_read_user costs a helper call and
 * a fault-guarded copy: one copy serves the next frames of a deep stack. In
 * this map only, which no one else reads; the next walk of the CPU writes it
 * over.
 */
#define UW_WINDOW_WORDS 64
#define UW_WINDOW_BYTES (UW_WINDOW_WORDS * 8)

struct dwarf_stack_window {
	__u64 lo;  /* user address of word[0] */
	__u32 len; /* bytes copied; 0: none in this walk */
	__u32 pad;
	__u64 word[UW_WINDOW_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2); /* WALK_SAMPLER, WALK_OFFCPU */
	__type(key, __u32);
	__type(value, struct dwarf_stack_window);
} unwind_stack_window SEC(".maps");

/* A new walk: nothing of the last one's stack is believed. */
static __always_inline void dwarf_window_reset(__u32 which)
{
	struct dwarf_stack_window *win = bpf_map_lookup_elem(&unwind_stack_window, &which);

	if (win)
		win->len = 0;
}

/*
 * The word of the user stack at addr into *lo and, if hi, the next one into
 * *hi: 0, or -1 if unreadable (then neither is written). From the window
 * when it holds them, else from a new copy at addr. A pair across a page
 * boundary is copied as just that pair. Every read goes through the window,
 * so that no caller needs a buffer of its own on the BPF stack (the off-CPU
 * program's calls have 512 bytes in all).
 */
static __always_inline int dwarf_stack_read(struct lowprof_unwind_stats *st, __u32 which, __u64 addr,
					    __u64 *lo, __u64 *hi)
{
	struct dwarf_stack_window *win = bpf_map_lookup_elem(&unwind_stack_window, &which);
	__u64 off, len, i, need = hi ? 16 : 8;

	if (!win)
		return -1;
	st->stack_reads++;
	off = addr - win->lo;
	if (win->len == 0 || addr < win->lo || (off & 7) || off + need > win->len) {
		len = 4096 - (addr & 4095);
		if (len > UW_WINDOW_BYTES)
			len = UW_WINDOW_BYTES;
		if (len < need)
			len = need;
		asm volatile("" : "+r"(len));
		if (len > UW_WINDOW_BYTES)
			return -1;
		st->stack_copies++;
		if (bpf_probe_read_user(win->word, len, (void *)addr) != 0) {
			win->len = 0;
			return -1;
		}
		win->lo = addr;
		win->len = len;
		off = 0;
	}
	/* off + need <= len <= the window: the masks only tell the verifier so. */
	i = off >> 3;
	*lo = win->word[i & (UW_WINDOW_WORDS - 1)];
	if (hi)
		*hi = win->word[(i + 1) & (UW_WINDOW_WORDS - 1)];
	return 0;
}

/*
 * Rows found lately, per CPU and walker (the sampler's, the off-CPU
 * program's: one may interrupt the other, so they never share an entry).
 * A sample's frames are mostly earlier samples' (the same callers under a
 * changing leaf), and a row search reads a page index word and 3-6 rows
 * scattered through a table the workload has pushed out of the CPU's
 * caches since: one slot read instead, direct-mapped by the file's
 * identity and the ELF address. The key is the identity, not a row index:
 * a file's rows follow from the file alone (the loader builds a table only
 * for the file the identity names), so an entry stays true however the
 * tables are evicted, rebuilt or moved. Fixed size: 8 KiB per CPU each.
 */
#define UW_ROW_CACHE_SLOTS 256
#define UW_ROW_CACHE_SHIFT 56 /* 64 - log2(UW_ROW_CACHE_SLOTS) */

/* 32 bytes: two a cache line, none across one. */
struct dwarf_row_cache_entry {
	struct lowprof_file_id id; /* ino 0: empty */
	__u64 vaddr;
	struct lowprof_unwind_rule rule;
};

struct dwarf_row_cache {
	struct dwarf_row_cache_entry e[UW_ROW_CACHE_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2); /* WALK_SAMPLER, WALK_OFFCPU */
	__type(key, __u32);
	__type(value, struct dwarf_row_cache);
} unwind_row_cache SEC(".maps");

/* The slot of (file, ELF address) in the walker's row cache, or NULL. */
static __always_inline struct dwarf_row_cache_entry *
dwarf_row_cache_slot(__u32 which, const struct lowprof_file_id *id, __u64 vaddr)
{
	struct dwarf_row_cache *c;
	__u64 h;

	if (!id)
		return NULL;
	c = bpf_map_lookup_elem(&unwind_row_cache, &which);
	if (!c)
		return NULL;
	h = (vaddr ^ id->ino * 0x9e3779b97f4a7c15ULL ^ ((__u64)id->dev << 32 | id->gen)) *
	    0xff51afd7ed558ccdULL;
	return &c->e[(h >> UW_ROW_CACHE_SHIFT) & (UW_ROW_CACHE_SLOTS - 1)];
}

static __always_inline bool dwarf_row_cache_holds(const struct dwarf_row_cache_entry *e,
						  const struct lowprof_file_id *id, __u64 vaddr)
{
	return e->id.ino != 0 && e->vaddr == vaddr && e->id.ino == id->ino &&
	       e->id.dev == id->dev && e->id.gen == id->gen;
}

/* Row idx of the whole array, or NULL (its chunk not there, or out of range). */
static __always_inline struct lowprof_unwind_row *dwarf_row(__u32 idx)
{
	__u32 chunk = idx >> LOWPROF_UNWIND_CHUNK_SHIFT, off = idx & (LOWPROF_UNWIND_CHUNK_ROWS - 1);
	void *rows = bpf_map_lookup_elem(&unwind_rows, &chunk);

	if (!rows)
		return NULL;
	return bpf_map_lookup_elem(rows, &off);
}

/*
 * The frame being unwound and the row found last: scalars only, handed by
 * pointer to the global step function (see struct walk_files). The row
 * cache: recursion (and a loop calling the same function) returns to the
 * same address frame after frame, and then skips the search.
 */
struct dwarf_regs {
	__u64 pc, sp, bp;
	__u64 cached_lookup;
	__u32 cached_row;
	__u8 cached;
	__u8 signal_pc; /* pc is exact (first frame, or interrupted by a signal) */
	__u8 bp_valid;
	__u8 pad;
	__u32 which; /* the scratch of the sample (struct walk_files) */
};

/* The walk's state, on the program's stack, handed to every bpf_loop step. */
struct dwarf_walk {
	struct walk_files f; /* the current VMA, the sample's one lookup */
	struct dwarf_regs r;
	struct scratch_sample *s;
	struct lowprof_unwind_stats *st;
	__u32 base;      /* index of the first user frame in s->frames */
	__u32 n;         /* user frames recorded */
	__u32 max;       /* max_depth */
	bool truncated;
	bool fp_only;    /* by frame pointers alone (bpf/unwind_fp.bpf.h) */
	bool raw_only;   /* fp_only, and no file has a table: every frame raw */
};

/*
 * Binary searches run as nested bpf_loop() callbacks: as plain loops the
 * verifier follows every combination of branches with exact bounds (the
 * row index becomes a known constant key) and gives up past 1M instructions.
 * A callback is checked once, with lo and hi as unknown scalars.
 */
struct dwarf_search {
	__u64 key;
	__u64 first_pc; /* the file's first row's pc (struct lowprof_unwind_file) */
	__u32 first; /* row search: the file's first row */
	__u32 lo, hi;
	__u32 n;     /* row search: the file's rows; its page index follows them */
	__u32 npages; /* the page index's word 0 (struct lowprof_unwind_file) */
};

/* Word k (0..3) of a row slot of the page index, as loaded in lo and hi. */
static __always_inline long dwarf_slot_word(__u64 lo, __u64 hi, __u32 k)
{
	__u64 v = (k & 2) ? hi : lo;

	return (k & 1) ? (long)(v >> 32) : (long)(v & 0xffffffffULL);
}

/*
 * Words j and j + 1 of the page index that starts at row slot base
 * (bpf/lowprof.h): one row read, two where j + 1 starts the next slot.
 * false if unreadable. Loads at fixed offsets and a choice by j's low bits:
 * a load at a variable offset would make the verifier track j, and through
 * it the pc, precisely, and verify the walk once per pc range.
 */
static __always_inline bool dwarf_index_pair(__u32 base, __u32 j, long *a, long *b)
{
	struct lowprof_unwind_row *r = dwarf_row(base + (j >> 2));
	__u64 lo, hi;

	if (!r)
		return false;
	lo = *(volatile __u64 *)r;
	hi = *(volatile __u64 *)((char *)r + 8);
	*a = dwarf_slot_word(lo, hi, j);
	if ((j & 3) != 3) {
		*b = dwarf_slot_word(lo, hi, j + 1);
		return true;
	}
	r = dwarf_row(base + (j >> 2) + 1);
	if (!r)
		return false;
	*b = (long)(*(volatile __u64 *)r & 0xffffffffULL);
	return true;
}

/*
 * The first step of the row search: narrow [lo, hi) to the rows of the key's
 * page (bpf/lowprof.h). The first pc and the index's size come with the
 * file's entry: one row read here, two when the page's bounds straddle a
 * slot. Inside the callback, so that the verifier meets the ranges it may
 * choose as unknown numbers rather than as paths of the caller.
 */
static __always_inline long dwarf_page_step(struct dwarf_search *q)
{
	long a, b;
	__u64 page;

	if (q->key < q->first_pc) {
		q->lo = 0; /* below the first row: not found */
		return 1;
	}
	if (q->npages == 0)
		return 0; /* no index: search all rows */
	page = (q->key >> LOWPROF_UNWIND_PAGE_SHIFT) - (q->first_pc >> LOWPROF_UNWIND_PAGE_SHIFT);
	if (page > (__u64)q->npages)
		page = q->npages; /* past the last row's page: its bounds give the last row */
	if (!dwarf_index_pair(q->first + q->n, 1 + (__u32)page, &a, &b) || b < a || b >= q->n) {
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

/* The row of table t covering the ELF address pc, and its index; or NULL. */
static __always_inline struct lowprof_unwind_row *dwarf_find_row(const struct lowprof_unwind_file *t,
								  __u64 pc, __u32 *idx)
{
	struct dwarf_search q = {};
	__u32 first = t->first_row;

	q.key = pc;
	q.first = first;
	q.n = t->nrows;
	q.hi = t->nrows;
	q.first_pc = t->first_pc;
	q.npages = t->npages;
	/* One step for the page index, then the search of the rows it gives. */
	bpf_loop(LOWPROF_UNWIND_ROW_STEPS + 1, dwarf_row_search_cb, &q, 0);
	if (q.lo == 0)
		return NULL;
	*idx = first + q.lo - 1;
	return dwarf_row(*idx);
}

/*
 * The frame-pointer rule: the caller's RBP at [RBP], its return address at
 * [RBP + 8], its RSP at RBP + 16. Plausible only if RBP lies a little above
 * RSP: a leaf without a frame leaves the caller's RBP, and that still points
 * into the stack above it. 0, UW_FP_IMPLAUSIBLE or UW_FP_UNREADABLE; the
 * caller counts a failed read (the walker's inline step leaves it to the row
 * step that follows, which reads the same words).
 */
#define UW_FP_IMPLAUSIBLE (-1)
#define UW_FP_UNREADABLE (-2)
static __always_inline int dwarf_fp_frame(struct dwarf_regs *w, struct lowprof_unwind_stats *st)
{
	__u64 frame = w->bp;

	if (!w->bp_valid || w->bp < w->sp || w->bp - w->sp > UW_FP_MAX_FRAME || (w->bp & 7))
		return UW_FP_IMPLAUSIBLE;
	if (dwarf_stack_read(st, w->which, frame, &w->bp, &w->pc) != 0)
		return UW_FP_UNREADABLE;
	w->sp = frame + 16;
	w->signal_pc = false;
	return 0;
}

/* The process's entry point without a row (the dynamic loader's _start, or
 * the program's before its table is built): RBP 0 as the kernel left it (or
 * _start cleared it), RSP at argc. */
static __always_inline bool dwarf_at_entry(const struct dwarf_regs *w, __u64 start_stack)
{
	return w->bp_valid && w->bp == 0 && w->sp <= start_stack && start_stack - w->sp <= 64;
}

/*
 * Does pc follow a call instruction, as a return address does
 * (bpf/call_insn.h)? Text the process just ran is resident; a failed read
 * is a no.
 */
static __always_inline bool dwarf_after_call(__u64 pc)
{
	__u64 code;

	if (pc < LOWPROF_CALL_WINDOW ||
	    bpf_probe_read_user(&code, sizeof(code), (void *)(pc - LOWPROF_CALL_WINDOW)) != 0)
		return false;
	return lowprof_code_ends_in_call(code);
}

/* What a frame-pointer step must show, past a plausible RBP, to be believed. */
enum dwarf_fp_trust {
	DWARF_FP_RBP,          /* nothing more: a file that keeps frame pointers, the vDSO */
	DWARF_FP_BEFORE_TABLE, /* a return address: a file whose table is not built yet */
	DWARF_FP_FROM_ANON,    /* a return address, unless it stays in the same anonymous code */
};

/*
 * One frame-pointer step where no usable row is: 0 on, 1 at the process's
 * entry point, -1 not possible. f: the frame's VMA.
 *
 * DWARF_FP_BEFORE_TABLE: the frame is in a file whose table is not built yet
 * (its first samples, about the first 10 ms of a new program). Most
 * distributions now build with frame pointers, but whether a file keeps them
 * is the table's to say, so the step is believed only if it lands where a
 * return address can: RBP plausible (dwarf_fp_frame) and the word found there
 * just after a call instruction. A file without frame pointers leaves RBP to
 * anything: such a stack ends with `[no unwind table]`.
 *
 * DWARF_FP_FROM_ANON: the frame is in anonymous code (a JIT's), which has no
 * table at all. A JIT that keeps no frame pointers leaves RBP to anything
 * too, a stack address among them, and the word found there is data: placing
 * it cost a failed bpf_find_vma every sample (in a VM, the irq_work that
 * releases the lookup's lock is an interrupt of its own) and then ended the
 * stack with `[no mapping]`. So a step that leaves the code must land just
 * after a call; one that stays in it is believed as before (a JIT calling
 * its own code, no read). A JIT that keeps frame pointers pays one 8-byte
 * read a frame that leaves its code; one that keeps none ends its stacks
 * with `[anonymous code]`.
 */
static __always_inline int dwarf_fp_step(struct dwarf_regs *w, const struct walk_files *f,
					 struct lowprof_unwind_stats *st, __u64 start_stack,
					 enum dwarf_fp_trust trust)
{
	int rc;

	if (dwarf_at_entry(w, start_stack))
		return 1;
	rc = dwarf_fp_frame(w, st);
	if (rc == UW_FP_UNREADABLE)
		st->read_errors++;
	if (rc != 0)
		return -1;
	if (trust == DWARF_FP_BEFORE_TABLE && !dwarf_after_call(w->pc))
		return -1;
	if (trust == DWARF_FP_FROM_ANON && !walk_in_current(f, w->pc - 1) &&
	    !dwarf_after_call(w->pc))
		return -1;
	st->fp_fallbacks++;
	if (trust == DWARF_FP_BEFORE_TABLE)
		st->fp_before_table++;
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

/* Tells walks apart for dwarf_sigframe_check: the timestamp of the sample being built. */
static __always_inline __u64 dwarf_walk_id(struct dwarf_regs *w)
{
	struct scratch_sample *s = walk_scratch(w->which);

	return s ? s->hdr.timestamp_ns : 0;
}

/* A frame-pointer step's result (0 on, 1 outermost) or the stop reason given. */
static __always_inline int dwarf_fp_or(struct dwarf_regs *w, const struct walk_files *f,
				       struct lowprof_unwind_stats *st, int stop,
				       enum dwarf_fp_trust trust)
{
	struct scratch_sample *s = walk_scratch(w->which);
	int rc = dwarf_fp_step(w, f, st, s ? s->mm.start_stack : 0, trust);

	return rc >= 0 ? rc : stop;
}

/*
 * One step from the frame at w->pc, whose VMA (for lookup) is f's current
 * one. Returns 0 to go on with w->pc, 1 at the outermost frame, or minus a
 * stop reason. A global function: verified once, on its own.
 */
__noinline int lowprof_dwarf_step(struct dwarf_regs *w, struct walk_files *f, __u64 lookup)
{
	struct lowprof_unwind_stats *st = walk_stats();
	struct lowprof_unwind_file *t;
	const struct lowprof_unwind_rule *r = NULL;
	struct lowprof_unwind_row *row = NULL;
	struct dwarf_row_cache_entry *e;
	const struct lowprof_file_id *id;
	__u64 pc, vaddr, cfa;
	__u32 idx;
	__u8 kind;

	if (!w || !f || !st)
		return -LOWPROF_STOP_UNWIND_FAILED;
	t = &f->v.tab;
	pc = w->pc;
	if (w->cached && lookup == w->cached_lookup)
		row = dwarf_row(w->cached_row);
	if (row) {
		r = &row->rule;
		goto found;
	}
	if (!f->v.has_tab) {
		/* The vDSO and anonymous code have no table: frame pointers, if any. */
		if (f->v.vdso)
			return dwarf_fp_or(w, f, st, -LOWPROF_STOP_UNWIND_FAILED, DWARF_FP_RBP);
		if (f->v.flags & LOWPROF_VMA_ANON)
			return dwarf_fp_or(w, f, st, -LOWPROF_STOP_ANON, DWARF_FP_FROM_ANON);
		/* Requested: the next samples have it. */
		return dwarf_fp_or(w, f, st, -LOWPROF_STOP_NO_TABLE, DWARF_FP_BEFORE_TABLE);
	}
	if (t->nrows == 0 || walk_vaddr(t, lookup - f->v.start + f->v.off, &vaddr) != 0)
		return dwarf_fp_or(w, f, st, -LOWPROF_STOP_UNWIND_FAILED, DWARF_FP_RBP);
	id = walk_file_of_kind(walk_scratch(w->which), f->v.kind);
	e = dwarf_row_cache_slot(w->which, id, vaddr);
	if (e && id && dwarf_row_cache_holds(e, id, vaddr)) {
		st->rows_cached++;
		r = &e->rule;
		goto found;
	}
	st->rows_searched++;
	row = dwarf_find_row(t, vaddr, &idx);
	if (!row)
		return dwarf_fp_or(w, f, st, -LOWPROF_STOP_UNWIND_FAILED, DWARF_FP_RBP);
	r = &row->rule;
	if (e && id) {
		e->id = *id;
		e->vaddr = vaddr;
		e->rule = *r;
	}
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
			return -LOWPROF_STOP_UNWIND_FAILED;
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
			st->read_errors++;
			return -LOWPROF_STOP_UNWIND_FAILED;
		}
		if (!dwarf_sigframe_check(w->sp, block[5], block[6], dwarf_walk_id(w)))
			return -LOWPROF_STOP_UNWIND_FAILED;
		w->bp = block[0];
		w->sp = block[5];
		w->pc = block[6];
		w->bp_valid = true;
		w->signal_pc = true;
		st->frames++;
		return 0;
	}
	default: /* NONE, UNSUPPORTED */
		return dwarf_fp_or(w, f, st, -LOWPROF_STOP_UNWIND_FAILED, DWARF_FP_RBP);
	}
	/* The stack grows down: a caller's frame is above its callee's. */
	if (cfa <= w->sp)
		return -LOWPROF_STOP_UNWIND_FAILED;
	if (r->rbp_kind == UW_RBP_AT_CFA && r->rbp_off == -16) {
		/* The saved RBP next to the return address (every function that
		 * keeps a frame pointer): one read of both, not one each. */
		if (dwarf_stack_read(st, w->which, cfa - 16, &w->bp, &w->pc) != 0) {
			st->read_errors++;
			return -LOWPROF_STOP_UNWIND_FAILED;
		}
		w->bp_valid = true;
		goto next;
	}
	/* The saved RBP first: it lies below the return address, and the
	 * window is copied upwards from the lower of the two. A failed read
	 * ends the walk, so a register written before it does not matter. */
	if (r->rbp_kind == UW_RBP_AT_CFA) {
		if (dwarf_stack_read(st, w->which, cfa + r->rbp_off, &w->bp, NULL) != 0) {
			st->read_errors++;
			return -LOWPROF_STOP_UNWIND_FAILED;
		}
		w->bp_valid = true;
	} else if (r->rbp_kind != UW_RBP_SAME) {
		w->bp_valid = false;
	}
	if (dwarf_stack_read(st, w->which, cfa - 8, &w->pc, NULL) != 0) {
		st->read_errors++;
		return -LOWPROF_STOP_UNWIND_FAILED;
	}
next:
	w->sp = cfa;
	w->signal_pc = false;
	st->frames++;
	return 0;
}

/* The walk's next user frame into the sample: false when it has no room. */
static __always_inline bool dwarf_walk_record(struct dwarf_walk *w, __u64 frame)
{
	__u32 idx = w->base + w->n;

	/* Keep clang from folding the bound check away from the use. */
	asm volatile("" : "+r"(idx));
	if (idx >= LOWPROF_MAX_FRAMES)
		return false;
	w->s->frames[idx] = frame;
	w->n++;
	return true;
}

static long dwarf_loop_cb(__u64 i, void *ctx)
{
	struct dwarf_walk *w = ctx;
	__u64 lookup;
	int rc;

	if (w->n >= w->max) {
		w->truncated = true;
		return 1;
	}
	/* A return address may be just past a call ending its function (noreturn). */
	lookup = w->r.signal_pc ? w->r.pc : w->r.pc - 1;
	if (!walk_in_current(&w->f, lookup) && lowprof_walk_resolve(&w->f, lookup) != 0) {
		walk_stop(w->s, w->st,
			  w->n == 0 ? walk_first_pc_unplaced() : LOWPROF_STOP_NO_MAPPING);
		return 1;
	}

	if (!dwarf_walk_record(w, walk_encode(&w->f, w->r.pc)))
		return 1;
	/* A return address in a file whose every call is made with a frame
	 * pointer: the row there is the frame-pointer rule, so the step is the
	 * frame-pointer one, without the row (and inline: no call of the step).
	 * The first pc and a signal's interrupted one may be anywhere (a
	 * prologue, a leaf without a frame), and an RBP below RSP (0 past
	 * _start) is for the rows to judge: those take the rows, as does a
	 * frame-pointer step that fails. */
	if (!w->r.signal_pc && w->f.v.has_tab && (w->f.v.tab.flags & LOWPROF_UNWIND_FILE_FP_CALLS) &&
	    w->r.bp_valid && w->r.bp >= w->r.sp && dwarf_fp_frame(&w->r, w->st) == 0) {
		w->st->rows_skipped++;
		rc = 0;
	} else {
		rc = lowprof_dwarf_step(&w->r, &w->f, lookup);
	}
	if (rc > 0) {
		w->st->complete++;
		return 1;
	}
	if (rc < 0) {
		walk_stop(w->s, w->st, -rc);
		return 1;
	}
	/* A "return address" in the first page: the outermost frame, whose CFI
	 * does not say so (0 past a thread entry, argc past the dynamic
	 * loader's _start); a kernel address: a bad frame. Neither is recorded. */
	if (w->r.pc < 4096) {
		w->st->complete++;
		return 1;
	}
	if (w->r.pc >= 0x800000000000ULL) {
		walk_stop(w->s, w->st, LOWPROF_STOP_UNWIND_FAILED);
		return 1;
	}
	return 0;
}

#include "bpf/unwind_fp.bpf.h"

/*
 * The two ends every walk shares. begin: the per-CPU statistics, or -1.
 * run: once w->pc, sp and bp hold the task's user registers, the frames into
 * s->frames[base...] and the sample's file list; their number, or -1 without
 * a user pc.
 */
static __always_inline int dwarf_walk_begin(struct dwarf_walk *w, __u32 tgid, __u32 which)
{
	w->st = walk_stats();
	if (!w->st)
		return -1;
	w->f.tgid = tgid;
	w->f.which = which;
	return 0;
}

/* The user registers a task saved when it entered the kernel: where a walk of
 * a task interrupted (or switched out) in kernel mode starts. Returns 0, 1
 * when they are a 32-bit process's (fp_walk_compat), or -1. */
static __always_inline int dwarf_walk_saved_regs(struct dwarf_walk *w, struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	if (!regs)
		return -1;
	w->r.pc = regs->ip;
	w->r.sp = regs->sp;
	w->r.bp = regs->bp;
	return fp_walk_is_compat_cs(regs->cs);
}

static __always_inline long dwarf_walk_run(struct dwarf_walk *w, struct scratch_sample *s,
					   __u32 base, __u32 max)
{
	if (w->r.pc == 0)
		return -1;
	w->s = s;
	w->base = base;
	w->max = max;
	w->r.which = w->f.which;
	w->r.bp_valid = 1;
	w->r.signal_pc = 1;
	dwarf_window_reset(w->r.which);
	/* One more iteration than frames, to tell a cut stack from a complete
	 * one. The statistics of walks are the DWARF walk's ("with the tables"). */
	if (w->fp_only) {
		fp_walk_cheap_sources(w);
		bpf_loop(LOWPROF_MAX_USER_DEPTH + 1, fp_loop_cb, w, 0);
	} else {
		w->st->samples++;
		bpf_loop(LOWPROF_MAX_USER_DEPTH + 1, dwarf_loop_cb, w, 0);
		if (w->truncated)
			w->st->truncated++;
		if (s->hdr.user_stop != LOWPROF_STOP_NONE)
			w->st->stopped++;
	}
	if (w->truncated)
		s->hdr.flags |= LOWPROF_SAMPLE_USER_TRUNCATED;
	return w->n;
}

/*
 * Walk the user stack of the current task into s->frames[base...]: with the
 * tables, or fp_only by frame pointers alone (the frame-pointer tiers).
 * Returns the number of frames, or -1 without a user context (a kernel
 * thread).
 */
static __always_inline long unwind_user(struct bpf_perf_event_data *ctx, struct scratch_sample *s,
					__u32 base, __u32 max, __u32 tgid, bool fp_only)
{
	struct task_struct *task;
	struct dwarf_walk w = {};
	int compat;
	__u64 cs;

	w.fp_only = fp_only;
	if (dwarf_walk_begin(&w, tgid, WALK_SAMPLER) != 0)
		return -1;
	if (!lowprof_current_has_mm())
		return -1; /* a kernel thread: no user stack */
	task = bpf_get_current_task_btf();
	/* ctx accepts only 8-byte loads: cs is a u16 followed by padding in its word.
	 * Load everything from ctx first so that clang cannot merge the two register
	 * sources into one pointer (the verifier refuses a moved ctx pointer). */
	cs = *(volatile __u64 *)((char *)&ctx->regs + offsetof(struct pt_regs, cs));
	w.r.pc = ctx->regs.ip;
	w.r.sp = ctx->regs.sp;
	w.r.bp = ctx->regs.bp;
	/* A sample taken in kernel mode: start from the registers saved at entry. */
	if ((cs & 3) != 3) {
		compat = dwarf_walk_saved_regs(&w, task);
		if (compat < 0)
			return -1;
	} else {
		compat = fp_walk_is_compat_cs(cs);
	}
	if (compat)
		return fp_walk_compat(task, s, base, max);
	return dwarf_walk_run(&w, s, base, max);
}

#endif /* LOWPROF_UNWIND_DWARF_BPF_H */
