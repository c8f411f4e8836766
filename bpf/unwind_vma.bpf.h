/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which file a user pc lies in, from the kernel's own VMAs, and the sample's
 * file list: included by unwind_dwarf.bpf.h, shared by the DWARF walk and
 * the frame-pointer tiers (docs/UNWINDING.md).
 *
 * bpf_find_vma in a perf event handler (interrupts off) only trylocks the
 * mmap lock and defers its release to a per-CPU irq_work: a second lookup in
 * the same handler finds that irq_work busy and fails with -EBUSY, and so
 * does a contended lock. So a sample looks up at most one VMA, and never
 * waits. Everything else comes without a lookup: the executable's text from
 * mm->start_code/end_code and mm->exe_file (once its table says where that
 * text lies in the file), the vDSO from mm->context.vdso, the dynamic
 * loader from AT_BASE and the ELF header there (bpf/lowprof.h), a library
 * from the dynamic loader's list (r_debug), the previous frame's VMA, and
 * the VMAs earlier samples of the process looked up (unwind_vma_cache). A
 * frame whose VMA none of them gives ends the walk.
 */
#ifndef LOWPROF_UNWIND_VMA_BPF_H
#define LOWPROF_UNWIND_VMA_BPF_H

#include <bpf/bpf_core_read.h>

#define UW_VM_EXEC 0x4ULL /* VM_EXEC */
#define UW_PAGE_SHIFT 12

/* Tables by file identity: row range, executable segments, flags. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LOWPROF_UNWIND_MAX_FILES);
	__type(key, struct lowprof_file_id);
	__type(value, struct lowprof_unwind_file);
} unwind_files SEC(".maps");

/* Files the loader should build a table for (and open for the exporter);
 * it deletes what it has handled. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct lowprof_file_id);
	__type(value, struct lowprof_unwind_pending);
} unwind_pending SEC(".maps");

/* tgid -> the VMAs its samples looked up. At most one insertion per sample:
 * the map's churn follows the sample rate, not the rate of forks. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LOWPROF_VMA_CACHE_PROCS);
	__type(key, __u32);
	__type(value, struct lowprof_vma_cache);
} unwind_vma_cache SEC(".maps");

/* lowprof_ehdr_hash of a file's ELF header -> the file (bpf/lowprof.h):
 * the dynamic loader found at AT_BASE, a library at its base in the dynamic
 * loader's list, once its build id is there too. Written by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LOWPROF_UNWIND_MAX_FILES);
	__type(key, __u64);
	__type(value, struct lowprof_file_id);
} unwind_interp SEC(".maps");

/* Wakes the loader for a new pending file (it drains on its timer otherwise). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} unwind_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lowprof_unwind_stats);
} unwind_stats SEC(".maps");

/* Where a new cache entry is built (a map value cannot be created in place). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lowprof_vma_cache);
} vma_cache_scratch SEC(".maps");

/*
 * The VMA frames are currently resolved in, and a copy of its file's table
 * entry. Copies, not map pointers: a pointer that may be NULL, kept across
 * bpf_loop iterations, becomes an unknown number to the verifier (it widens
 * imprecise scalars between iterations) and can no longer be dereferenced.
 */
struct walk_vma {
	__u64 start, end, off;
	struct lowprof_unwind_file tab;
	__u32 kind;   /* LOWPROF_FRAME_* kind of its frames */
	__u32 flags;  /* enum lowprof_vma_flags; 0: none yet */
	bool vdso;
	bool has_tab; /* tab holds its file's entry */
};

/*
 * The state every walk shares (the DWARF walk adds its registers): scalars
 * only, so that the global functions below take it by pointer. They are
 * verified once each, on their own, instead of inside every path of the
 * walk's loop (which exceeds the verifier's budget); after a call every
 * field is an unknown number to the caller, which keeps its states few.
 */
struct walk_files {
	struct walk_vma v;
	__u32 tgid;
	__u32 which;  /* the scratch the sample is built in: WALK_SAMPLER or WALK_OFFCPU */
	__u8 have_mm, lookup_used;
	__u8 no_cache; /* the process has no cache entry (known since this walk's first miss) */
	__u8 dl_searches; /* searches of the dynamic loader's list so far */
	/* No source but the vDSO can place any further pc of this walk (the
	 * lookup spent, no cache entry, no executable's text, no dynamic
	 * loader): the frame-pointer walk leaves the rest raw without a call
	 * per frame. */
	__u8 exhausted;
};

#define WALK_SAMPLER 0
#define WALK_OFFCPU 1

/*
 * Per CPU and walker: the file VMAs of the process sampled last, each with
 * a copy of its file's table entry. A CPU busy with one process samples it
 * again and again, and each sample's VMAs then cost a range compare instead
 * of the sources below (the executable's identity through four pointers, a
 * hash lookup of the process's cache, one of the file's entry: ~0.5-1 us
 * each, cold). Valid while four things hold, checked at every resolution:
 * the same address space, unchanged (mm, its mmap lock sequence and the
 * leader's start time, as unwind_vma_cache); unwind_files unchanged
 * (unwind_files_gen, which the loader bumps after every change and before
 * it reuses a deleted entry's rows); and the same second of the sample
 * clock, so that each table in use is still looked up, and stamped for the
 * eviction, once a second.
 */
#define WALK_MEMO_SLOTS 4

struct walk_memo_vma {
	__u64 start, end, off;
	struct lowprof_file_id id;
	struct lowprof_unwind_file tab;
};

struct walk_memo {
	struct lowprof_addr_space space;
	__u64 gen;                 /* unwind_files_gen */
	__u64 stamp;               /* the sample's timestamp >> 30 */
	__u32 n, next;
	struct walk_memo_vma v[WALK_MEMO_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2); /* WALK_SAMPLER, WALK_OFFCPU: one may interrupt the other */
	__type(key, __u32);
	__type(value, struct walk_memo);
} walk_memos SEC(".maps");

/* Bumped by the loader after every change of unwind_files (through the
 * skeleton's mapped .bss: no syscall for it, no map key on this side). */
volatile __u64 unwind_files_gen = 0;

/* The switch-out's stack is built here (a map value cannot be created in
 * place); not the sampler's scratch: the two programs never share a buffer. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch_sample);
} offcpu_scratch SEC(".maps");

static __always_inline struct scratch_sample *walk_scratch(__u32 which)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(which == WALK_OFFCPU ? (void *)&offcpu_scratch : (void *)&scratch,
				   &zero);
}

static __always_inline struct lowprof_unwind_stats *walk_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&unwind_stats, &zero);
}

/* Direct loads through the BTF pointers (each a single load the JIT guards),
 * not bpf_probe_read_kernel calls: the sample reads about fifteen fields. */
static __always_inline void walk_id_of_inode(struct lowprof_file_id *id, struct inode *inode)
{
	id->ino = inode->i_ino;
	id->dev = inode->i_sb->s_dev;
	id->gen = inode->i_generation;
}

/* Cheap mix of an entry's fields: a slot torn by two CPUs writing it fails it. */
static __always_inline __u32 walk_vma_tag(const struct lowprof_vma *v)
{
	__u64 h = v->start * 0x9e3779b97f4a7c15ULL ^ v->end ^ (v->off << 7) ^ v->id.ino * 31 ^
		  ((__u64)v->id.dev << 32 | v->id.gen) ^ v->flags;

	return (__u32)(h ^ (h >> 32)) | 1;
}

/* Read the task's mm once: text and vDSO ranges. What only some frames need
 * (the executable's identity, the cache's validity) is read when first
 * needed: each is a few more cache lines the sample may not touch. */
static __always_inline int walk_mm_read(struct walk_files *f, struct scratch_sample *s,
					struct task_struct *task)
{
	struct walk_mm *m = &s->mm;
	struct mm_struct *mm = task->mm;
	const struct vdso_image *img;

	if (!mm)
		return -1;
	m->mm = (__u64)mm;
	m->text_start = mm->start_code;
	m->start_stack = mm->start_stack;
	m->text_end = mm->end_code;
	m->vdso_start = (__u64)mm->context.vdso;
	img = mm->context.vdso_image;
	m->vdso_end = img ? m->vdso_start + img->size : 0;
	m->exe_state = 0;
	m->have_validity = 0;
	m->interp_state = 0;
	m->dl_state = 0;
	f->have_mm = 1;
	return 0;
}

/* The executable's identity (mm->exe_file): 0, or -1 without one. Global,
 * verified once, as lowprof_walk_mm_validity below and for its reason. */
__noinline int lowprof_walk_mm_exe(struct walk_mm *m)
{
	struct mm_struct *mm = bpf_get_current_task_btf()->mm;
	struct file *exe;

	if (!m || !mm)
		return -1;
	exe = mm->exe_file;
	if (!exe)
		return -1;
	walk_id_of_inode(&m->exe, exe->f_inode);
	return m->exe.ino ? 0 : -1;
}

/*
 * What a cache entry is checked against: the mmap lock's sequence and the
 * leader's start time (the mm's address is read with the ranges). A global
 * function, verified once. Inlined into the resolver it was checked again
 * for each of the ~40 states reaching it, and each load of a pointer
 * through the task's trusted pointer (mm, group_leader) makes the verifier
 * ask whether the field keeps the trust: a search of the kernel's BTF by
 * type name, one type after the other (125,851 here). Returns 0.
 */
__noinline int lowprof_walk_mm_validity(struct walk_mm *m)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct *mm = task->mm;

	if (!m)
		return 0;
	m->seq = 0;
	if (mm && bpf_core_field_exists(mm->mm_lock_seq))
		m->seq = mm->mm_lock_seq.sequence;
	m->start_time = task->group_leader->start_time;
	m->have_validity = 1;
	return 0;
}

static __always_inline void walk_mm_validity(struct walk_mm *m)
{
	if (!m->have_validity)
		lowprof_walk_mm_validity(m);
}

static __always_inline void walk_space_take(struct lowprof_addr_space *a, const struct walk_mm *m)
{
	a->mm = m->mm;
	a->seq = m->seq;
	a->start_time = m->start_time;
}

/* Does a recorded address space (a VMA cache's, a memo's) still describe
 * this sample's? If not, it becomes this sample's, and the caller empties
 * what it had learned of the old one. */
static __always_inline bool walk_space_same(struct lowprof_addr_space *a, struct walk_mm *m)
{
	walk_mm_validity(m);
	if (a->mm == m->mm && a->seq == m->seq && a->start_time == m->start_time)
		return true;
	walk_space_take(a, m);
	return false;
}

struct walk_slot_search {
	struct scratch_sample *s;
	const struct lowprof_file_id *id;
	__u32 n, found;
};

static long walk_slot_cb(__u64 i, void *ctx)
{
	struct walk_slot_search *q = ctx;
	struct lowprof_file_id *e;

	if (i >= q->n || i >= LOWPROF_SAMPLE_MAX_FILES)
		return 1;
	e = &q->s->files[i];
	if (e->ino == q->id->ino && e->dev == q->id->dev && e->gen == q->id->gen) {
		q->found = i + 1;
		return 1;
	}
	return 0;
}

/* The slot (1..15) of a file in the sample's list, added if new;
 * LOWPROF_FRAME_RAW when the list is full. A bpf_loop: the verifier checks
 * one comparison, not fifteen inside every path of the walk. */
static __always_inline __u32 walk_file_slot(struct scratch_sample *s,
					    const struct lowprof_file_id *id)
{
	struct walk_slot_search q = {.s = s, .id = id, .n = s->hdr.nfiles};
	__u32 n = q.n;

	if (n > 0)
		bpf_loop(LOWPROF_SAMPLE_MAX_FILES, walk_slot_cb, &q, 0);
	if (q.found)
		return q.found;
	if (n >= LOWPROF_SAMPLE_MAX_FILES)
		return LOWPROF_FRAME_RAW;
	s->files[n] = *id;
	s->hdr.nfiles = n + 1;
	return n + 1;
}

/* The identity behind a frame kind: the sample's file list at that slot, or
 * NULL for a kind that names no file (raw: the list was full; the vDSO). */
static __always_inline const struct lowprof_file_id *walk_file_of_kind(struct scratch_sample *s,
									__u32 kind)
{
	if (!s || kind == LOWPROF_FRAME_RAW || kind > LOWPROF_SAMPLE_MAX_FILES)
		return NULL;
	return &s->files[(kind - 1) & 15];
}

/*
 * Ask the loader for a file's table: once (BPF_NOEXIST keeps the first
 * request until the loader has handled it, and only that one wakes it).
 */
static __always_inline void walk_request_table(struct walk_files *f,
					       struct lowprof_unwind_stats *st,
					       const struct lowprof_file_id *id, __u64 start,
					       __u64 end, __u64 off)
{
	struct lowprof_unwind_pending p = {};
	struct lowprof_proc_event ev;

	if (start == 0)
		return; /* no VMA to reach it by (the text path): the lookup sends it */
	p.pid = f->tgid;
	p.start = start;
	p.end = end;
	p.off = off;
	if (bpf_map_update_elem(&unwind_pending, id, &p, BPF_NOEXIST) != 0)
		return;
	st->pending++;
	ev.type = LOWPROF_PROC_PENDING;
	ev.pid = f->tgid;
	bpf_ringbuf_output(&unwind_events, &ev, sizeof(ev), BPF_RB_FORCE_WAKEUP);
}

/* The current VMA's table from its entry, whose use is stamped for the
 * loader's eviction (a write only when the second changed) with the time
 * of the sample: no clock read per file. */
static __always_inline void walk_take_table(struct walk_files *f, struct scratch_sample *s,
					    struct lowprof_unwind_file *t)
{
	__u32 now = (__u32)(s->hdr.timestamp_ns >> 30);

	f->v.tab = *t;
	f->v.has_tab = true;
	if (t->last_used != now)
		t->last_used = now;
}

/* Make a file VMA the current one: its slot, its table (or a request for one). */
static __always_inline void walk_set_file(struct walk_files *f, struct scratch_sample *s,
					  struct lowprof_unwind_stats *st, const struct lowprof_vma *v)
{
	struct lowprof_unwind_file *t;

	f->v.start = v->start;
	f->v.end = v->end;
	f->v.off = v->off;
	f->v.vdso = false;
	f->v.flags = v->flags;
	f->v.has_tab = false;
	if (v->flags & LOWPROF_VMA_ANON) {
		f->v.kind = LOWPROF_FRAME_RAW;
		return;
	}
	f->v.kind = walk_file_slot(s, &v->id);
	t = bpf_map_lookup_elem(&unwind_files, &v->id);
	if (!t) {
		walk_request_table(f, st, &v->id, v->start, v->end, v->off);
		return;
	}
	walk_take_table(f, s, t);
}

/* The lookup's result is written into the scratch (walk_mm's found), not
 * onto the stack: the off-CPU program's calls leave the resolver no room. */
struct walk_found {
	struct lowprof_vma *v;
	bool exec;
};

static long walk_find_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct walk_found *w = ctx;
	struct lowprof_vma *v = w->v;
	/* The file and its inode by bpf_probe_read_kernel, not loads: a load of
	 * a pointer through the trusted VMA is a search of the kernel's BTF by
	 * name at each of the ~16 times the verifier checks this callback (the
	 * resolver's states); this runs only when no cache knew the address,
	 * beside a VMA lookup that costs far more than these six reads. */
	struct file *file = BPF_CORE_READ(vma, vm_file);
	struct inode *inode;

	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->off = (__u64)vma->vm_pgoff << UW_PAGE_SHIFT;
	w->exec = (vma->vm_flags & UW_VM_EXEC) != 0;
	if (!file) {
		v->flags = LOWPROF_VMA_ANON;
		return 0;
	}
	inode = BPF_CORE_READ(file, f_inode);
	v->id.ino = BPF_CORE_READ(inode, i_ino);
	v->id.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	v->id.gen = BPF_CORE_READ(inode, i_generation);
	v->flags = LOWPROF_VMA_FILE;
	return 0;
}

/*
 * The process's cache entry if it describes this address space (reset in
 * place when it does not: exec, a reused pid, a changed address space), or
 * NULL. Looked up again at each VMA change rather than kept: see walk_vma.
 */
static __always_inline struct lowprof_vma_cache *walk_cache_get(struct walk_files *f,
								 struct scratch_sample *s)
{
	struct lowprof_vma_cache *c = bpf_map_lookup_elem(&unwind_vma_cache, &f->tgid);
	struct walk_mm *m = &s->mm;

	if (!c)
		return NULL;
	if (!walk_space_same(&c->space, m)) {
		c->n = 0;
		c->next = 0;
	}
	return c;
}

/* Remember a looked-up VMA in the process's cache (one insertion at most). */
static __always_inline void walk_cache_put(struct walk_files *f, struct scratch_sample *s,
					   struct lowprof_unwind_stats *st, struct lowprof_vma *v)
{
	struct lowprof_vma_cache *c = walk_cache_get(f, s);
	struct walk_mm *m = &s->mm;
	__u32 zero = 0, slot;

	v->tag = walk_vma_tag(v);
	if (c) {
		slot = c->next & (LOWPROF_VMA_CACHE_SLOTS - 1);
		c->v[slot] = *v;
		c->next = slot + 1;
		if (c->n < LOWPROF_VMA_CACHE_SLOTS)
			c->n++;
		return;
	}
	c = bpf_map_lookup_elem(&vma_cache_scratch, &zero);
	if (!c)
		return;
	walk_mm_validity(m);
	__builtin_memset(c, 0, sizeof(*c));
	walk_space_take(&c->space, m);
	c->n = 1;
	c->next = 1;
	c->v[0] = *v;
	if (bpf_map_update_elem(&unwind_vma_cache, &f->tgid, c, BPF_ANY) == 0) {
		st->cache_inserts++;
		f->no_cache = 0;
	}
}

struct walk_cache_search {
	struct lowprof_vma_cache *c;
	__u64 addr;
	__u32 n, found; /* found: slot + 1 */
};

static long walk_cache_cb(__u64 i, void *ctx)
{
	struct walk_cache_search *q = ctx;
	struct lowprof_vma *v;

	if (i >= q->n || i >= LOWPROF_VMA_CACHE_SLOTS)
		return 1;
	v = &q->c->v[i];
	if (q->addr >= v->start && q->addr < v->end && v->tag == walk_vma_tag(v)) {
		q->found = i + 1;
		return 1;
	}
	return 0;
}

static __always_inline bool walk_cache_find(struct walk_files *f, struct scratch_sample *s,
					   struct lowprof_unwind_stats *st, __u64 addr)
{
	struct walk_cache_search q = {};
	struct lowprof_vma *v;

	if (f->no_cache)
		return false;
	q.c = walk_cache_get(f, s);
	if (!q.c) {
		f->no_cache = 1;
		return false;
	}
	q.addr = addr;
	q.n = q.c->n;
	bpf_loop(LOWPROF_VMA_CACHE_SLOTS, walk_cache_cb, &q, 0);
	if (q.found == 0 || q.found > LOWPROF_VMA_CACHE_SLOTS)
		return false;
	v = &q.c->v[q.found - 1];
	walk_set_file(f, s, st, v);
	st->vma_cached++;
	return true;
}

/*
 * The executable's text without a lookup: [start_code, end_code) is its
 * lowest executable segment's p_vaddr up to the end of its last one, plus
 * the load bias. Only for a file whose table has one executable segment:
 * then start_code is that segment's first byte, at file offset seg.off.
 */
static __always_inline bool walk_text_find(struct walk_files *f, struct scratch_sample *s,
					  struct lowprof_unwind_stats *st, __u64 addr)
{
	struct walk_mm *m = &s->mm;
	struct lowprof_unwind_file *t;

	if (addr < m->text_start || addr >= m->text_end || m->exe_state == 2)
		return false;
	if (m->exe_state == 0) {
		if (lowprof_walk_mm_exe(m) != 0) {
			m->exe_state = 2;
			return false;
		}
		t = bpf_map_lookup_elem(&unwind_files, &m->exe);
		if (!t || t->nsegs != 1) {
			m->exe_state = 2;
			return false;
		}
		walk_take_table(f, s, t);
		m->exe_tab = f->v.tab;
		m->exe_slot = walk_file_slot(s, &m->exe);
		m->exe_state = 1;
	} else {
		f->v.tab = m->exe_tab;
		f->v.has_tab = true;
	}
	f->v.start = m->text_start;
	f->v.end = m->text_end;
	f->v.off = m->exe_tab.seg[0].off;
	f->v.flags = LOWPROF_VMA_FILE;
	f->v.vdso = false;
	f->v.kind = m->exe_slot;
	st->vma_text++;
	return true;
}

/* An entry of the auxiliary vector the kernel saved at exec (AT_BASE,
 * AT_PHDR, ...): 0 when absent. Pairs of (type, value), AT_NULL last. */
static __always_inline __u64 walk_mm_auxv(struct mm_struct *mm, __u64 want)
{
	__u32 i;

	for (i = 0; i + 1 < sizeof(mm->saved_auxv) / sizeof(mm->saved_auxv[0]); i += 2) {
		__u64 type = mm->saved_auxv[i];

		if (type == 0)
			break;
		if (type == want)
			return mm->saved_auxv[i + 1];
	}
	return 0;
}

/* Is t's build id (8 bytes of it) in memory at its address from base? The
 * check after an ELF header's hash named t (bpf/lowprof.h): the header
 * alone does not tell two builds apart. buf: 8 bytes of scratch. */
static __always_inline bool walk_same_build(const struct lowprof_unwind_file *t, __u64 base,
					    __u64 *buf)
{
	return t->build_id_vaddr != 0 &&
	       bpf_probe_read_user(buf, sizeof(*buf), (const void *)(base + t->build_id_vaddr)) == 0 &&
	       *buf == t->build_id;
}

/* The dynamic loader of the task's mm, once per sample: its load address,
 * and its table when the ELF header mapped there names a file that has
 * one (bpf/lowprof.h). No VMA lookup, no lock: a read of the process's
 * memory that fails (the page not present) leaves it unknown. A global
 * function, verified once on its own (as lowprof_walk_mm_dl). Returns 0. */
__noinline int lowprof_walk_mm_interp(struct walk_mm *m)
{
	struct mm_struct *mm = bpf_get_current_task_btf()->mm;
	struct lowprof_file_id *id;
	struct lowprof_unwind_file *t;
	__u64 *w, h;

	if (!m)
		return 0;
	w = m->interp_ehdr;
	m->interp_state = 2;
	if (!mm)
		return 0;
	m->interp_base = walk_mm_auxv(mm, LOWPROF_AT_BASE);
	if (m->interp_base == 0 ||
	    bpf_probe_read_user(w, sizeof(m->interp_ehdr), (const void *)m->interp_base) != 0)
		return 0;
	h = lowprof_ehdr_hash(w);
	id = bpf_map_lookup_elem(&unwind_interp, &h);
	if (!id)
		return 0;
	m->interp = *id;
	t = bpf_map_lookup_elem(&unwind_files, &m->interp);
	if (!t || t->ehdr_hash != h || t->nsegs == 0 || t->nsegs > LOWPROF_UNWIND_FILE_SEGS ||
	    !walk_same_build(t, m->interp_base, w))
		return 0;
	m->interp_tab = *t;
	m->interp_slot = 0;
	m->interp_state = 1;
	return 0;
}

/*
 * The dynamic loader's code without a lookup: an executable segment of its
 * table, at AT_BASE plus the segment's address.
 */
static __always_inline bool walk_interp_find(struct walk_files *f, struct scratch_sample *s,
					    struct lowprof_unwind_stats *st, __u64 addr)
{
	struct walk_mm *m = &s->mm;
	const struct lowprof_unwind_seg *g;
	struct lowprof_unwind_file *t;
	__u64 rel;

	if (m->interp_state == 0)
		lowprof_walk_mm_interp(m);
	if (m->interp_state != 1 || addr < m->interp_base)
		return false;
	rel = addr - m->interp_base;
	g = &m->interp_tab.seg[0];
	if (!(rel >= g->vaddr && rel - g->vaddr < g->size)) {
		g = &m->interp_tab.seg[1];
		if (m->interp_tab.nsegs < 2 || !(rel >= g->vaddr && rel - g->vaddr < g->size))
			return false;
	}
	if (m->interp_slot == 0) {
		m->interp_slot = walk_file_slot(s, &m->interp);
		/* Its use stamped for the eviction, once per sample. */
		t = bpf_map_lookup_elem(&unwind_files, &m->interp);
		if (t)
			walk_take_table(f, s, t);
	}
	f->v.tab = m->interp_tab;
	f->v.has_tab = true;
	f->v.start = m->interp_base + g->vaddr;
	f->v.end = f->v.start + g->size;
	f->v.off = g->off;
	f->v.flags = LOWPROF_VMA_FILE;
	f->v.vdso = false;
	f->v.kind = m->interp_slot;
	st->vma_interp++;
	return true;
}

/*
 * The dynamic loader's list of the objects it loaded, as a debugger finds
 * it: the executable's DT_DEBUG entry holds the address of the loader's
 * struct r_debug, whose r_map heads a list of struct link_map (<link.h>:
 * l_addr, l_name, l_ld, l_next, l_prev; a stable ABI). Read once per
 * sample, from the program headers at AT_PHDR: dl_map and dl_state 1, or
 * dl_state 2 (a static executable, no DT_DEBUG yet, the list being changed).
 */
#define UW_AT_PHDR 3
#define UW_AT_PHNUM 5
#define UW_PT_DYNAMIC 2
#define UW_PT_PHDR 6
#define UW_DT_DEBUG 21
#define UW_PHDR_WORDS 7    /* sizeof(Elf64_Phdr) / 8 */
#define UW_MAX_PHDRS 16
#define UW_MAX_DYN 48      /* dynamic entries searched for DT_DEBUG */
#define UW_DL_LIST_MAX 32  /* link_map entries followed per pc */
#define UW_DL_SEARCHES 4   /* pcs searched for in the list per sample */

/* A global function, verified once on its own: inlined, its loops (program
 * headers, dynamic entries, the auxiliary vector twice) were walked again
 * for every state lowprof_walk_resolve reached them in, and were 58% of the
 * sampler's verification. Returns 0. */
__noinline int lowprof_walk_mm_dl(struct walk_mm *m)
{
	struct mm_struct *mm = bpf_get_current_task_btf()->mm;
	__u64 phdr, phnum, bias = 0, dyn = 0, dynsz = 0, rdebug = 0, n;
	bool have_phdr = false;
	__u32 i;

	if (!m)
		return 0;
	m->dl_state = 2;
	if (!mm)
		return 0;
	phdr = walk_mm_auxv(mm, UW_AT_PHDR);
	phnum = walk_mm_auxv(mm, UW_AT_PHNUM);
	if (phdr == 0 || phnum == 0 || phnum > UW_MAX_PHDRS)
		return 0;
	n = phnum * UW_PHDR_WORDS * 8;
	/* Keep clang from folding the bound check away from the use. */
	asm volatile("" : "+r"(n));
	if (n == 0 || n > UW_MAX_PHDRS * UW_PHDR_WORDS * 8)
		return 0;
	if (bpf_probe_read_user(m->dl_buf, n, (const void *)phdr) != 0)
		return 0;
	for (i = 0; i < UW_MAX_PHDRS; i++) {
		const __u64 *ph = &m->dl_buf[i * UW_PHDR_WORDS];

		if (i >= phnum)
			break;
		if ((__u32)ph[0] == UW_PT_PHDR) {
			bias = phdr - ph[2]; /* AT_PHDR minus its p_vaddr */
			have_phdr = true;
		} else if ((__u32)ph[0] == UW_PT_DYNAMIC) {
			dyn = ph[2];
			dynsz = ph[5]; /* p_memsz */
		}
	}
	if (!have_phdr || dyn == 0 || dynsz < 16)
		return 0;
	n = dynsz < UW_MAX_DYN * 16 ? dynsz & ~15ULL : UW_MAX_DYN * 16;
	asm volatile("" : "+r"(n));
	if (n == 0 || n > UW_MAX_DYN * 16)
		return 0;
	if (bpf_probe_read_user(m->dl_buf, n, (const void *)(bias + dyn)) != 0)
		return 0;
	for (i = 0; i < UW_MAX_DYN; i++) {
		__u64 tag = m->dl_buf[2 * i];

		if (i >= n / 16 || tag == 0)
			break;
		if (tag == UW_DT_DEBUG) {
			rdebug = m->dl_buf[2 * i + 1];
			break;
		}
	}
	/* struct r_debug: int r_version; struct link_map *r_map; r_brk; r_state
	 * (RT_CONSISTENT: 0, not being changed). Into dl_buf: the walk's
	 * calls leave no stack for it. */
	if (rdebug == 0 || bpf_probe_read_user(m->dl_buf, 32, (const void *)rdebug) != 0)
		return 0;
	if ((__s32)m->dl_buf[0] < 1 || (__s32)m->dl_buf[3] != 0 || m->dl_buf[1] == 0)
		return 0;
	m->dl_map = m->dl_buf[1];
	m->dl_state = 1;
	return 0;
}

struct walk_dl_search {
	__u64 *lm;  /* where an entry is read: l_addr, l_name, l_ld, l_next */
	__u64 addr;
	__u64 next; /* the entry to read */
	__u64 base; /* the entry found: its l_addr */
};

/* One link_map entry a step: the object whose [l_addr, l_ld) holds addr
 * (its code lies below its dynamic section, in the usual layout). An object
 * loaded at 0 (a non-PIE executable: its text is found from the mm) is
 * passed over. */
static long walk_dl_cb(__u64 i, void *ctx)
{
	struct walk_dl_search *q = ctx;
	__u64 *lm = q->lm;

	if (q->next == 0 || bpf_probe_read_user(lm, 4 * sizeof(__u64), (const void *)q->next) != 0)
		return 1;
	if (lm[0] != 0 && q->addr >= lm[0] && q->addr < lm[2]) {
		q->base = lm[0];
		return 1;
	}
	q->next = lm[3];
	return 0;
}

/*
 * A library's code without a lookup: the entry of the dynamic loader's list
 * whose range holds addr, whose ELF header and build id (from its l_addr)
 * name a file in unwind_interp as for the dynamic loader itself, and one of whose
 * executable segments holds addr. A process's first samples then spend no
 * lookup on libc. What it finds goes into the process's cache, as a
 * lookup's result does.
 */
static __always_inline bool walk_dl_find(struct walk_files *f, struct scratch_sample *s,
					 struct lowprof_unwind_stats *st, __u64 addr)
{
	struct walk_dl_search q = {};
	struct walk_mm *m = &s->mm;
	const struct lowprof_unwind_seg *g;
	struct lowprof_unwind_file *t;
	struct lowprof_vma *v = &m->found;
	struct lowprof_file_id *id;
	__u64 h, rel;

	/* Bounded per sample as the lookup is: a stack through more libraries
	 * than the memo and the cache hold costs a search each. */
	if (f->dl_searches >= UW_DL_SEARCHES)
		return false;
	f->dl_searches++;
	if (m->dl_state == 0)
		lowprof_walk_mm_dl(m);
	if (m->dl_state != 1)
		return false;
	q.lm = m->dl_buf;
	q.addr = addr;
	q.next = m->dl_map;
	bpf_loop(UW_DL_LIST_MAX, walk_dl_cb, &q, 0);
	if (q.base == 0 ||
	    bpf_probe_read_user(m->dl_buf, LOWPROF_EHDR_BYTES, (const void *)q.base) != 0)
		return false;
	h = lowprof_ehdr_hash(m->dl_buf);
	id = bpf_map_lookup_elem(&unwind_interp, &h);
	if (!id)
		return false;
	v->id = *id;
	t = bpf_map_lookup_elem(&unwind_files, &v->id);
	if (!t || t->ehdr_hash != h || t->nsegs == 0 || t->nsegs > LOWPROF_UNWIND_FILE_SEGS ||
	    !walk_same_build(t, q.base, m->dl_buf))
		return false;
	rel = addr - q.base;
	g = &t->seg[0];
	if (!(rel >= g->vaddr && rel - g->vaddr < g->size)) {
		g = &t->seg[1];
		if (t->nsegs < 2 || !(rel >= g->vaddr && rel - g->vaddr < g->size))
			return false;
	}
	v->start = q.base + g->vaddr;
	v->end = v->start + g->size;
	v->off = g->off;
	v->flags = LOWPROF_VMA_FILE;
	walk_cache_put(f, s, st, v);
	f->v.start = v->start;
	f->v.end = v->end;
	f->v.off = v->off;
	f->v.flags = LOWPROF_VMA_FILE;
	f->v.vdso = false;
	f->v.kind = walk_file_slot(s, &v->id);
	walk_take_table(f, s, t);
	st->vma_dl++;
	return true;
}

/* The walker's memo if it still describes this sample's address space and
 * tables (reset in place when not), or NULL. */
static __always_inline struct walk_memo *walk_memo_get(struct walk_files *f,
						       struct scratch_sample *s)
{
	struct walk_memo *mo = bpf_map_lookup_elem(&walk_memos, &f->which);
	struct walk_mm *m = &s->mm;
	__u64 gen = unwind_files_gen;
	__u64 stamp = s->hdr.timestamp_ns >> 30;

	if (!mo)
		return NULL;
	if (!walk_space_same(&mo->space, m) || mo->gen != gen || mo->stamp != stamp) {
		mo->gen = gen;
		mo->stamp = stamp;
		mo->n = 0;
		mo->next = 0;
	}
	return mo;
}

/* addr's VMA from the memo: made current with its table. */
static __always_inline bool walk_memo_find(struct walk_files *f, struct scratch_sample *s,
					  struct lowprof_unwind_stats *st, __u64 addr)
{
	struct walk_memo *mo = walk_memo_get(f, s);
	struct walk_memo_vma *v = NULL;
	__u32 i;

	if (!mo)
		return false;
	for (i = 0; i < WALK_MEMO_SLOTS; i++) {
		if (i >= mo->n)
			return false;
		if (addr >= mo->v[i].start && addr < mo->v[i].end) {
			v = &mo->v[i];
			break;
		}
	}
	if (!v)
		return false;
	f->v.start = v->start;
	f->v.end = v->end;
	f->v.off = v->off;
	f->v.flags = LOWPROF_VMA_FILE;
	f->v.vdso = false;
	f->v.tab = v->tab;
	f->v.has_tab = true;
	f->v.kind = walk_file_slot(s, &v->id);
	st->vma_memo++;
	return true;
}

/* Remember the current VMA, a file's with its table, in the memo (which
 * walk_memo_find has made this sample's, as it runs first). */
static __always_inline void walk_memo_put(struct walk_files *f, struct scratch_sample *s,
					  const struct lowprof_file_id *id)
{
	struct walk_memo *mo = bpf_map_lookup_elem(&walk_memos, &f->which);
	struct walk_memo_vma *v;

	if (!mo || !id || !f->v.has_tab || mo->space.mm != s->mm.mm ||
	    mo->stamp != s->hdr.timestamp_ns >> 30)
		return;
	v = &mo->v[mo->next & (WALK_MEMO_SLOTS - 1)];
	v->start = f->v.start;
	v->end = f->v.end;
	v->off = f->v.off;
	v->id = *id;
	v->tab = f->v.tab;
	mo->next = (mo->next + 1) & (WALK_MEMO_SLOTS - 1);
	if (mo->n < WALK_MEMO_SLOTS)
		mo->n++;
}

/*
 * Make the VMA of addr the current one. 0, or -1 when it cannot be known in
 * this sample (no cheap source, and the one lookup is spent or failed), or
 * addr is in no executable VMA. A global function: verified on its own.
 */
__noinline int lowprof_walk_resolve(struct walk_files *f, __u64 addr)
{
	struct lowprof_unwind_stats *st = walk_stats();
	struct walk_found found = {};
	struct scratch_sample *s;
	struct walk_mm *m;
	long rc;

	if (!f || !st)
		return -1;
	if (f->v.flags && addr >= f->v.start && addr < f->v.end)
		return 0;
	s = walk_scratch(f->which);
	if (!s)
		return -1;
	m = &s->mm;
	if (!f->have_mm && walk_mm_read(f, s, bpf_get_current_task_btf()) != 0)
		return -1;
	if (addr >= m->vdso_start && addr < m->vdso_end) {
		f->v.start = m->vdso_start;
		f->v.end = m->vdso_end;
		f->v.off = 0;
		f->v.flags = LOWPROF_VMA_ANON;
		f->v.kind = LOWPROF_FRAME_VDSO;
		f->v.has_tab = false;
		f->v.vdso = true;
		return 0;
	}
	if (walk_memo_find(f, s, st, addr))
		return 0;
	if (walk_text_find(f, s, st, addr)) {
		walk_memo_put(f, s, &m->exe);
		return 0;
	}
	if (walk_cache_find(f, s, st, addr)) {
		/* Its identity is in the sample's file list (none when the list
		 * was full: then it is not remembered). */
		walk_memo_put(f, s, walk_file_of_kind(s, f->v.kind));
		return 0;
	}
	if (walk_interp_find(f, s, st, addr)) {
		walk_memo_put(f, s, &m->interp);
		return 0;
	}
	if (walk_dl_find(f, s, st, addr)) {
		walk_memo_put(f, s, walk_file_of_kind(s, f->v.kind));
		return 0;
	}
	if (f->lookup_used) {
		if (f->no_cache && m->exe_state == 2 && m->interp_state == 2 &&
		    (m->dl_state == 2 || f->dl_searches >= UW_DL_SEARCHES))
			f->exhausted = 1;
		return -1;
	}
	f->lookup_used = 1;
	st->vma_lookups++;
	found.v = &m->found;
	__builtin_memset(found.v, 0, sizeof(*found.v));
	rc = bpf_find_vma(bpf_get_current_task_btf(), addr, walk_find_vma_cb, &found, 0);
	if (rc != 0 || !found.exec) {
		st->vma_failed++;
		return -1;
	}
	walk_cache_put(f, s, st, found.v);
	walk_set_file(f, s, st, found.v);
	walk_memo_put(f, s, &found.v->id);
	return 0;
}

/*
 * Why a walk's first pc has no VMA. A task in execve past the point of no
 * return runs with the new program's mm and still the old program's
 * registers: the stack they point to went with the old mm, and the new
 * program has not run yet. Its user stack is none, said so; not a frame
 * "without a mapping". (Read only when the lookup failed: a bitfield, read
 * through bpf_probe_read_kernel.)
 */
static __always_inline __u32 walk_first_pc_unplaced(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (BPF_CORE_READ_BITFIELD_PROBED(task, in_execve))
		return LOWPROF_STOP_IN_EXECVE;
	return LOWPROF_STOP_NO_MAPPING;
}

/* Is addr in the current VMA? Checked inline before a call of the global
 * resolver: consecutive frames in one file are the common case, and a call
 * per frame costs as much as the rest of a frame-pointer step. */
static __always_inline bool walk_in_current(const struct walk_files *f, __u64 addr)
{
	return f->v.flags && addr >= f->v.start && addr < f->v.end;
}

/* The frame for pc in the current VMA. */
static __always_inline __u64 walk_encode(const struct walk_files *f, __u64 pc)
{
	if (f->v.kind == LOWPROF_FRAME_RAW)
		return pc;
	return LOWPROF_FRAME_MAKE(f->v.kind, pc - f->v.start + f->v.off);
}

/* A file offset in the current VMA's file as an ELF virtual address, through
 * its table's executable segments. -1 if in none. */
static __always_inline int walk_vaddr(const struct lowprof_unwind_file *t, __u64 off, __u64 *vaddr)
{
	const struct lowprof_unwind_seg *g = &t->seg[0];

	if (t->nsegs > 1 && !(off >= g->off && off - g->off < g->size))
		g = &t->seg[1];
	if (t->nsegs == 0 || off < g->off || off - g->off >= g->size)
		return -1;
	*vaddr = off - g->off + g->vaddr;
	return 0;
}

/* The file list after the sample's frames (bpf/lowprof.h); its size in bytes. */
static __always_inline __u64 walk_put_files(struct scratch_sample *s, __u64 nframes)
{
	__u32 i, n = s->hdr.nfiles;

	for (i = 0; i < LOWPROF_SAMPLE_MAX_FILES; i++) {
		__u64 at = nframes + 2 * (__u64)i;

		/* Keep clang from folding the bound check away from the use. */
		asm volatile("" : "+r"(at));
		if (i >= n || at >= LOWPROF_MAX_FRAMES + SCRATCH_FILE_WORDS - 1)
			break;
		s->frames[at] = s->files[i].ino;
		s->frames[at + 1] = (__u64)s->files[i].dev | (__u64)s->files[i].gen << 32;
	}
	s->hdr.nfiles = i;
	return (__u64)i * sizeof(struct lowprof_file_id);
}

/* One user stop reason for the sample, counted. */
static __always_inline void walk_stop(struct scratch_sample *s, struct lowprof_unwind_stats *st,
				      __u32 reason)
{
	__u64 r = reason;

	/* Keep clang from folding the bound check away from the use. */
	asm volatile("" : "+r"(r));
	if (r >= LOWPROF_STOP_REASONS)
		r = LOWPROF_STOP_UNWIND_FAILED;
	asm volatile("" : "+r"(r));
	if (r < LOWPROF_STOP_REASONS) {
		s->hdr.user_stop = r;
		if (st)
			st->stop[r]++;
	}
}

#endif /* LOWPROF_UNWIND_VMA_BPF_H */
