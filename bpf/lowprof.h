/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Structures shared by the BPF program (lowprof.bpf.c) and user space.
 * Kept free of libc so both sides can include it: the BPF side includes
 * vmlinux.h first, user space gets <linux/types.h> from here.
 */
#ifndef LOWPROF_BPF_SHARED_H
#define LOWPROF_BPF_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space; the BPF side has vmlinux.h */
#endif

#define LOWPROF_COMM_LEN 16
/* Deepest user stack any mode may record; --max-depth is capped here. */
#define LOWPROF_MAX_USER_DEPTH 128
/* Kernel stacks are walked by the kernel itself (ORC/frame pointers) and are cheap. */
#define LOWPROF_MAX_KERNEL_DEPTH 64
#define LOWPROF_MAX_FRAMES (LOWPROF_MAX_USER_DEPTH + LOWPROF_MAX_KERNEL_DEPTH)

enum lowprof_unwind_mode {
	LOWPROF_UNWIND_FP = 0,    /* frame pointers (bpf/unwind_fp.bpf.h) */
	LOWPROF_UNWIND_DWARF = 1, /* .eh_frame tables (see unwind/) */
};

enum lowprof_sample_flags {
	/* The user stack filled max_depth: its outermost frames were cut. */
	LOWPROF_SAMPLE_USER_TRUNCATED = 1u << 0,
	/* The kernel stack filled LOWPROF_MAX_KERNEL_DEPTH. */
	LOWPROF_SAMPLE_KERNEL_TRUNCATED = 1u << 1,
	/* The in-BPF budget guard skipped the user stack for this sample. */
	LOWPROF_SAMPLE_USER_SKIPPED = 1u << 2,
	/* bpf_get_stack failed for the user stack (e.g. a kernel thread). */
	LOWPROF_SAMPLE_NO_USER_STACK = 1u << 3,
};

/*
 * One sample as it leaves the BPF program (ring buffer) and as it travels in
 * the shared-memory ring. Variable length: header then kernel_depth kernel
 * frames (leaf first) then user_depth user frames (leaf first).
 *
 * image_id names what a pid runs: the task's exec count (self_exec_id,
 * which the kernel counts up at every exec; a fork or a new thread
 * inherits it) mixed with its thread group's start time. A pid's samples
 * with another one than before come from another program (a shell's child
 * sampled before its exec, a wrapper such as nice, env or timeout before
 * the program it runs) or another process (the pid reused), so what was
 * read of the pid for the earlier ones (its executable, its maps) no
 * longer holds. Compared for equality only: 16 bits, so one change in
 * 65536 goes unseen. Every thread of a process has the same one: an exec
 * ends the others first, and the threads made after it inherit its count.
 */
struct lowprof_sample {
	__u64 timestamp_ns;   /* bpf_ktime_get_ns(), CLOCK_MONOTONIC */
	__u64 period_ns;      /* effective sampling period: weight of this sample */
	__u32 pid;            /* thread group id (user-space pid) */
	__u32 tid;
	__u32 cpu;
	__u32 flags;          /* enum lowprof_sample_flags */
	__u16 kernel_depth;
	__u16 user_depth;
	__u8 nfiles;          /* entries of the file list after the frames */
	__u8 user_stop;       /* enum lowprof_stop_reason: why the user stack ends early */
	__u16 image_id;       /* the program and process the pid runs: see below */
	char comm[LOWPROF_COMM_LEN];
	__u64 frames[];       /* then nfiles struct lowprof_file_id */
};

/*
 * A file that backs user code, as the kernel names it in the VMA: the
 * superblock's device in the kernel's encoding (major << 20 | minor; user
 * space converts it with makedev()), the inode number and the inode's
 * generation (a reused inode number gets a new one). Every process that maps
 * the same file names it the same way, so tables, symbols and caches are
 * keyed by it, never by pid.
 */
struct lowprof_file_id {
	__u64 ino;
	__u32 dev;
	__u32 gen;
};

/*
 * User frames as (file, offset). A user frame's top byte says what its low
 * 56 bits are:
 *   0                           a raw virtual address: no file backs the
 *                               code (anonymous or JIT memory), or the
 *                               sample's file list was full
 *   k in 1..LOWPROF_SAMPLE_MAX_FILES
 *                               a byte offset in the file of entry k - 1 of
 *                               the sample's file list
 *   LOWPROF_FRAME_VDSO          an offset from the start of the vDSO image
 * Kernel frames are raw kernel addresses, as before.
 */
#define LOWPROF_SAMPLE_MAX_FILES 15
#define LOWPROF_FRAME_KIND_SHIFT 56
#define LOWPROF_FRAME_VALUE_MASK ((1ULL << LOWPROF_FRAME_KIND_SHIFT) - 1)
#define LOWPROF_FRAME_RAW 0u
#define LOWPROF_FRAME_VDSO 0xffu
#define LOWPROF_FRAME_MAKE(kind, value)                                                     \
	(((__u64)(kind) << LOWPROF_FRAME_KIND_SHIFT) | ((__u64)(value) & LOWPROF_FRAME_VALUE_MASK))
#define LOWPROF_FRAME_KIND(frame) ((unsigned)((frame) >> LOWPROF_FRAME_KIND_SHIFT))
#define LOWPROF_FRAME_VALUE(frame) ((frame) & LOWPROF_FRAME_VALUE_MASK)

/*
 * Why a user stack ends before its outermost frame. The outputs end such a
 * stack with a marker frame that says so ("[no unwind table]", ...) instead
 * of guessing; summary.json counts cut stacks by reason. Truncation by depth
 * is the LOWPROF_SAMPLE_USER_TRUNCATED flag, not a reason here.
 */
enum lowprof_stop_reason {
	LOWPROF_STOP_NONE = 0,              /* whole (or no user stack at all) */
	LOWPROF_STOP_NO_TABLE = 1,          /* DWARF: a frame in a file without a table yet */
	LOWPROF_STOP_UNWIND_FAILED = 2,     /* a row or a stack read failed */
	LOWPROF_STOP_NO_FRAME_POINTERS = 3, /* FP tiers: a file known to lack frame pointers */
	LOWPROF_STOP_NO_MAPPING = 4,        /* the pc's VMA could not be looked up in this sample */
	LOWPROF_STOP_ANON = 5,              /* anonymous (JIT) code without a frame-pointer chain */
	/* No user stack: the task is in execve, its registers still the old
	 * program's, its mm already the new one's (its first pc lies in no VMA). */
	LOWPROF_STOP_IN_EXECVE = 6,
	LOWPROF_STOP_REASONS = 7
};

#define LOWPROF_SAMPLE_HEADER_SIZE (sizeof(struct lowprof_sample))
#define LOWPROF_SAMPLE_MAX_SIZE                                                             \
	(LOWPROF_SAMPLE_HEADER_SIZE + LOWPROF_MAX_FRAMES * sizeof(__u64) +                  \
	 LOWPROF_SAMPLE_MAX_FILES * sizeof(struct lowprof_file_id))

/*
 * Run-time settings, one element of an array map that the loader writes.
 * Changing them needs no reload; the program reads them on every sample.
 */
struct lowprof_config {
	__u32 unwind_mode;    /* enum lowprof_unwind_mode */
	__u32 max_depth;      /* user frames, 1..LOWPROF_MAX_USER_DEPTH */
	__u32 sample_divisor; /* keep one sample in N per CPU; 1 = all */
	__u32 filter_pids;    /* 1: only tgids present in the target_pids map */
	__u64 period_ns;      /* perf event period in force (1e9 / frequency) */
	__u64 budget_ns_per_window; /* per-CPU BPF time allowed per guard window; 0 = no guard */
	/* A -p target's start time is compared in clock ticks after boot, as
	 * /proc/PID/stat gives it: (start_boottime + boottime_offset_ns) /
	 * ns_per_tick, the offset being the loader's time namespace's, in which
	 * the ticks were read. ns_per_tick 0: pids alone. */
	__u64 ns_per_tick;
	__s64 boottime_offset_ns;
};

/* target_pids: at most this many processes (-p's, a command's alive). */
#define LOWPROF_TARGET_PIDS_MAX 4096
/* A target_pids value's flag: the process's new children become targets
 * (a command's processes, bpf/follow.bpf.h); the rest is its start time. */
#define LOWPROF_TARGET_FOLLOW (1ULL << 63)

/* Per-CPU counters of bpf/follow.bpf.h; user space sums them. Monotonic. */
struct lowprof_follow_stats {
	__u64 followed;     /* new processes made targets */
	__u64 not_followed; /* not: target_pids was full */
	__u64 left;         /* followed processes that exited (out of the map) */
};

/* Per-CPU counters; user space sums them over CPUs. Monotonic. */
struct lowprof_cpu_stats {
	__u64 events;           /* times the program ran */
	__u64 submitted;        /* samples written to the ring buffer */
	__u64 reserve_failures; /* ring buffer full: sample lost */
	__u64 divisor_skipped;  /* dropped by the sampling divisor (on purpose) */
	__u64 filtered;         /* not a target pid */
	__u64 idle;             /* the idle task (pid 0) was on CPU */
	__u64 guard_skipped;    /* user stack skipped by the budget guard */
	__u64 run_time_ns;      /* self-timed: bpf_ktime_get_ns at entry and exit */
	/* Budget guard window state (not a counter). */
	__u64 window_start_ns;
	__u64 window_run_ns;
	__u64 divisor_counter;
	/* Appended counters (monotonic). */
	__u64 guard_proc_capped; /* user stack skipped: its owner (a user; for root, a
				   * cgroup or a process) spent its share of the window */
	__u64 sigframe_refused;  /* DWARF walks stopped at an implausible signal frame */
};

/*
 * DWARF (.eh_frame) unwinding: the tables the loader writes and the BPF
 * walker reads (bpf/unwind_dwarf.bpf.h, loader/unwind_maps.c,
 * docs/UNWINDING.md). Tables are keyed by the file's identity (struct
 * lowprof_file_id): the walker finds a pc's file from its VMA, so no table
 * is per process.
 */
/* Binary-search bound: 2^23 rows per file (UNWIND_TABLE_MAX_ROWS is 2^22). */
#define LOWPROF_UNWIND_ROW_STEPS 23

/*
 * The row array is made of chunks (inner maps of an array of maps), each
 * created by the loader when the first table lands in it, up to
 * --unwind-table-mb: the kernel holds what the tables need, not the budget.
 */
#define LOWPROF_UNWIND_CHUNK_SHIFT 16
#define LOWPROF_UNWIND_CHUNK_ROWS (1u << LOWPROF_UNWIND_CHUNK_SHIFT) /* 1 MiB of rows */

/*
 * The page index: right after a file's nrows rows, 32-bit words packed four
 * to a row slot. Word 0 is npages (0: no index, search all rows); word 1 + p,
 * for p in [0, npages], is the last row whose pc is at or below the start of
 * page p, pages being (1 << LOWPROF_UNWIND_PAGE_SHIFT) bytes counted from
 * the page of the first row; word 2 + npages is the last row again. The row
 * of a pc in page p lies between words 1 + p and 2 + p (p past npages counts
 * as npages): a search of a few rows instead of the whole table.
 */
#define LOWPROF_UNWIND_PAGE_SHIFT 8

/* A row's rule: how to find the caller's frame (unwind/unwind_table.h). */
struct lowprof_unwind_rule {
	__s32 cfa_off;
	__s16 rbp_off;  /* or the PLT threshold */
	__u8 cfa_kind;  /* enum unwind_cfa_kind */
	__u8 rbp_kind;  /* enum unwind_rbp_kind */
};

/* The same 16 bytes as unwind/unwind_table.h's struct unwind_row. */
struct lowprof_unwind_row {
	__u64 pc;       /* ELF virtual address */
	struct lowprof_unwind_rule rule;
};

/* Files with a table (or a known lack of one) the walker can hold at once. */
#define LOWPROF_UNWIND_MAX_FILES 4096
/* Executable segments a table translates file offsets through; a file with
 * more gets none (frame pointers). */
#define LOWPROF_UNWIND_FILE_SEGS 2

enum lowprof_unwind_file_flags {
	/* No usable rows (refused, over the budget): frame-pointer steps. */
	LOWPROF_UNWIND_FILE_NO_ROWS = 1u << 0,
	/* Its code keeps no frame pointers (almost no row computes the CFA from
	 * RBP): a frame-pointer walk stops after its frame, with a marker. */
	LOWPROF_UNWIND_FILE_NO_FP = 1u << 1,
	/* Every call in its code is made with a frame pointer set up (the
	 * loader checked every row, unwind_maps_fp_flags): the row at a return
	 * address in it is CFA = RBP + 16 with RBP saved at CFA - 16, so the
	 * walker steps such a frame by RBP without looking the row up. */
	LOWPROF_UNWIND_FILE_FP_CALLS = 1u << 2,
};

/* File bytes [off, off + size) are ELF virtual addresses [vaddr, vaddr + size). */
struct lowprof_unwind_seg {
	__u64 off;
	__u64 vaddr;
	__u64 size;
};

/* Value of unwind_files (key: struct lowprof_file_id). */
struct lowprof_unwind_file {
	__u32 first_row; /* index of the file's first row in unwind_rows */
	__u32 nrows;     /* 0: no rows (flags say why) */
	__u16 flags;     /* enum lowprof_unwind_file_flags */
	__u16 nsegs;     /* executable segments, <= LOWPROF_UNWIND_FILE_SEGS */
	/* Written by the walker: bpf_ktime_get_ns() >> 30 (about seconds) of
	 * its last use, for the loader's least-recently-used eviction. (The
	 * walker copies the entry onto its stack, whose room the off-CPU
	 * program's calls use up: small fields keep the entry at 96 bytes.) */
	__u32 last_used;
	struct lowprof_unwind_seg seg[LOWPROF_UNWIND_FILE_SEGS];
	/* lowprof_ehdr_hash of the file's first 64 bytes (its ELF header); 0:
	 * none. How the walker knows the dynamic loader, and the libraries in
	 * its list, without a VMA lookup. */
	__u64 ehdr_hash;
	/* The first row's pc and the page index's size (its word 0): what the
	 * row search starts from, here so that it reads no row for them. */
	__u64 first_pc;
	__u32 npages;
	/* With ehdr_hash: where 8 bytes of the file's GNU build id are loaded
	 * (an ELF virtual address, from the load bias) and those bytes. 0: none. */
	__u32 build_id_vaddr;
	__u64 build_id;
};

/*
 * The dynamic loader's code without a VMA lookup. A sample may look up one
 * VMA (bpf/unwind_vma.bpf.h), and a process's first milliseconds run in two
 * files the executable's text does not cover: ld.so and libc. So the walker
 * finds ld.so from mm->saved_auxv's AT_BASE (where the kernel loaded it) and
 * the ELF header mapped there: its hash names the file in unwind_interp,
 * whose unwind_files entry must carry the same hash; and a library the same
 * way at its base in the dynamic loader's list (r_debug). The loader fills
 * unwind_interp for every table of a trusted file it builds (the walker asks
 * only at AT_BASE and at a listed object's base). The header names a
 * candidate, not a build: two programs built from one source with different
 * flags can have the same header byte for byte (entry point, program and
 * section header offsets and counts). So the walker takes the candidate's
 * table only if 8 bytes of the candidate's build id (build_id_vaddr,
 * build_id) are in memory there too; a file with no build id gets no entry.
 */
#define LOWPROF_EHDR_BYTES 64
#define LOWPROF_AT_BASE 7 /* AT_BASE in the auxiliary vector */

static inline __u64 lowprof_ehdr_hash(const __u64 w[LOWPROF_EHDR_BYTES / 8])
{
	__u64 h = 0xcbf29ce484222325ULL;
	int i;

	for (i = 0; i < LOWPROF_EHDR_BYTES / 8; i++) {
		h ^= w[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h | 1;
}

/* Value of unwind_pending (key: struct lowprof_file_id): a process and the
 * VMA through which the loader can reach the file (/proc/PID/map_files). */
struct lowprof_unwind_pending {
	__u32 pid;
	__u32 reserved;
	__u64 start, end; /* the VMA */
	__u64 off;        /* file offset of start (vm_pgoff * 4096) */
};

/*
 * The VMAs the walker learned of a process (unwind_vma_cache, key: tgid; an
 * LRU map): bpf_find_vma works once per sample in a perf event handler (the
 * mmap lock's release is deferred to an irq_work, and a second lookup finds
 * it busy), so what one sample learns serves the next ones. The entry is
 * valid while the process's mm, its mmap lock's sequence (bumped by every
 * mmap, munmap, mprotect) and its leader's start time are those recorded.
 */
#define LOWPROF_VMA_CACHE_SLOTS 8
#define LOWPROF_VMA_CACHE_PROCS 4096

enum lowprof_vma_flags {
	LOWPROF_VMA_FILE = 1u << 0, /* a file's pages: id names it */
	LOWPROF_VMA_ANON = 1u << 1, /* executable memory without a file (JIT) */
};

struct lowprof_vma {
	__u64 start, end;
	__u64 off;        /* file offset of start */
	struct lowprof_file_id id;
	__u32 flags;      /* enum lowprof_vma_flags; 0: empty slot */
	__u32 tag;        /* a mix of the fields: a slot torn by two writers fails it */
};

/* An address space as a walk recorded it: what it learned of its VMAs
 * holds while all three are unchanged. */
struct lowprof_addr_space {
	__u64 mm;         /* the mm_struct's address: a new one after exec */
	__u64 seq;        /* its mm_lock_seq when the entries were learned */
	__u64 start_time; /* the leader's start time: a reused pid differs */
};

struct lowprof_vma_cache {
	struct lowprof_addr_space space;
	__u32 n, next;    /* slots used, next slot to replace */
	struct lowprof_vma v[LOWPROF_VMA_CACHE_SLOTS];
};

/* Records of the unwind_events ring. */
enum lowprof_proc_event_type {
	/* A file without a table went to unwind_pending: the only record, it
	 * wakes the loader. */
	LOWPROF_PROC_PENDING = 3,
};

struct lowprof_proc_event {
	__u32 type; /* enum lowprof_proc_event_type */
	__u32 pid;  /* tgid */
};

/* Per-CPU counters of the DWARF walker (and of the frame encoding in both
 * tiers); user space sums them. Monotonic. */
struct lowprof_unwind_stats {
	__u64 samples;        /* user stacks walked with the tables */
	__u64 frames;         /* frames found by a table row */
	__u64 fp_fallbacks;   /* frames found by a frame-pointer step */
	__u64 complete;       /* walks that reached the outermost frame */
	__u64 truncated;      /* walks cut by max_depth */
	__u64 stopped;        /* walks that ended early (stop[] says why) */
	__u64 read_errors;    /* bpf_probe_read_user failures */
	__u64 vma_lookups;    /* bpf_find_vma calls (at most one per sample) */
	__u64 vma_failed;     /* of which failed (-EBUSY: the mmap lock or its irq_work) */
	__u64 vma_cached;     /* VMAs found in the process's cache */
	__u64 vma_text;       /* VMAs of the executable's text (mm->start_code) */
	__u64 vma_interp;     /* VMAs of the dynamic loader (AT_BASE, unwind_interp) */
	__u64 cache_inserts;  /* new unwind_vma_cache entries */
	__u64 pending;        /* files sent to unwind_pending */
	__u64 stop[LOWPROF_STOP_REASONS]; /* stopped user stacks by reason, both tiers */
	__u64 rows_cached;    /* rows found in the CPU's row cache, no search */
	__u64 rows_searched;  /* rows searched for in a table */
	__u64 vma_memo;       /* VMAs (and their tables) from the CPU's memo of its last process */
	__u64 rows_skipped;   /* return addresses in a LOWPROF_UNWIND_FILE_FP_CALLS file: stepped by RBP, no row */
	__u64 stack_reads;    /* user stack words (or pairs) the walker read */
	__u64 stack_copies;   /* of which copied from the stack (the rest: from the walk's window) */
	__u64 fp_before_table; /* frames of a file without its table yet, stepped by RBP to a return address */
	__u64 vma_dl;         /* VMAs of a library found through the dynamic loader's list (r_debug) */
};

#endif /* LOWPROF_BPF_SHARED_H */
