/*
 * The profile model: one in-memory aggregate of symbolized stacks that every
 * encoder (pprof, folded, SVG flame graph, summary.json, later OTLP) reads.
 *
 * It is built as OTLP and pprof want it: deduplicated tables of strings,
 * mappings, functions and locations, and stacks that are lists of location
 * indices plus per-stack pid/tid/comm. Every table is indexed by a hash table,
 * so adding a sample costs O(frames), whatever the profile size.
 *
 * Memory bound: per distinct stack about 56 bytes + 8 bytes of hash slot
 * + 4 bytes per frame; per location ~40 bytes, per function ~16 bytes, per
 * mapping ~40 bytes, per string its length + ~24 bytes (all plus hash slots
 * at <= 75% load). Code locations are bounded by the code that runs; stacks
 * are what grows, so profile_set_max_stacks() caps them: past the cap, a
 * sample of a new distinct stack folds into one stack per process whose only
 * frame is PROFILE_OTHER_STACKS_NAME (counted in profile_totals.folded_samples);
 * samples of known stacks still aggregate. Those folded stacks may pass the
 * cap by PROFILE_FOLD_ROOM(cap); past that, samples are dropped and counted
 * (profile_totals.dropped_*). profile_get_totals() reports the number of
 * stacks and the heap bytes in use.
 *
 * Not thread-safe: one exporter thread owns a profile.
 */
#ifndef LOWPROF_EXPORTER_PROFILE_H
#define LOWPROF_EXPORTER_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exporter/profile/frame.h"

/* Shown as the outermost (root-side) frame of every stack cut by the depth limit. */
#define PROFILE_TRUNCATED_NAME "[truncated]"
/* The only frame of the stack a process's samples fold into past the max-stacks cap. */
#define PROFILE_OTHER_STACKS_NAME "[other stacks]"
/* How many folded stacks (one per process) may go past the cap. */
#define PROFILE_FOLD_ROOM(max_stacks) ((max_stacks) / 4 + 1)
/*
 * The pid of a stack of processes that are gone: a closed interval's stacks
 * of a process with no sample in the interval after it (the two after it
 * at --interval 1) are keyed by comm alone (profile_merge_mapped's fold,
 * profile_window.h), so that a
 * churn of short processes running the same code makes one stack, not one
 * per process. No kernel pid is this large; the outputs write no pid for it.
 */
#define PROFILE_PID_GONE UINT32_MAX
/* The one mapping all kernel frames share. */
#define PROFILE_KERNEL_MAPPING_NAME "[kernel.kallsyms]"
/* pprof's first mapping is what `go tool pprof` calls the profile's "File":
 * a whole-host profile has no main binary, so the first is this one, which
 * no location uses (neither lowprof's own binary nor any other). */
#define PROFILE_MAIN_MAPPING_NAME "[host: all processes]"
/* profile_location.mapping for a frame that lies in no known mapping. */
#define PROFILE_NO_MAPPING UINT32_MAX
/*
 * The outermost frame of a user stack BPF could not unwind to its end, by
 * reason (enum lowprof_stop_reason, 1 .. PROFILE_STOP_REASONS - 1): the stack
 * goes on beyond it, unknown, rather than guessed. A marker frame has no
 * module and no symbol, so no binary's symbol can pass for one.
 * profile_stop_keys are summary.json's names for the same reasons.
 * Two more are the exporter's own, past BPF's: the user stack was not walked
 * at all (the BPF guard's budget, LOWPROF_SAMPLE_USER_SKIPPED), and a sample
 * that came with no frame at all, so that no sample is ever frameless (an
 * empty stack is one no flame graph or OTLP consumer can show).
 */
#define PROFILE_STOP_USER_SKIPPED 7
#define PROFILE_STOP_NO_STACK 8
#define PROFILE_STOP_REASONS 9
extern const char *const profile_stop_names[PROFILE_STOP_REASONS];
extern const char *const profile_stop_keys[PROFILE_STOP_REASONS];

/* Deeper stacks are cut to this many leaf-side frames and marked truncated. */
#define PROFILE_MAX_FRAMES 1024

struct profile;

/* Table entries. Every uint32_t naming a string is an index for profile_string(). */
struct profile_mapping {
	uint32_t filename;      /* module path, "[kernel.kallsyms]" for the kernel */
	uint32_t build_id;      /* lowercase hex, 0 ("") when unknown */
	/* Bounds of the first mapping seen for this (file, build-id), 0 when unknown:
	 * the same file sits at different addresses in different processes. */
	uint64_t memory_start;
	uint64_t memory_limit;
	uint64_t file_offset;
	bool kernel;
};

struct profile_function {
	uint32_t name;
	uint32_t system_name;   /* the symbolizer gives one name; same as name today */
	uint32_t filename;      /* module (kernel module name for kernel frames), 0 when none */
	bool kernel;
	bool symbolized;
};

struct profile_location {
	uint32_t mapping;       /* mapping index or PROFILE_NO_MAPPING */
	uint32_t function;      /* function index */
	uint64_t address;       /* raw address of the first frame seen here */
	uint64_t module_offset; /* file offset (user) or address - module base (kernel) */
	bool kernel;
};

struct profile_stack {
	uint32_t pid;
	uint32_t tid;           /* 0 when samples of several threads were merged */
	uint32_t comm;          /* string index */
	uint32_t nlocations;
	bool truncated;
	uint64_t count;
	uint64_t cpu_ns;
	size_t loc_offset;      /* private: use profile_stack_locations() */
};

struct profile_totals {
	uint64_t samples;       /* sum of counts over all stacks */
	uint64_t cpu_ns;
	size_t stacks;          /* distinct stacks */
	size_t pids;            /* distinct pids (PROFILE_PID_GONE not counted) */
	size_t locations, functions, mappings, strings;
	uint64_t dropped_samples; /* refused: past the max-stacks cap and its fold room */
	uint64_t folded_samples;  /* kept under PROFILE_OTHER_STACKS_NAME by the cap */
	uint64_t dropped_cpu_ns;
	uint64_t gone_samples;    /* in stacks of PROFILE_PID_GONE */
	size_t gone_stacks;       /* stacks of PROFILE_PID_GONE */
	uint64_t gone_pid_stacks; /* per-pid stacks folded into them (profile_merge_mapped's fold), merges summed */
	size_t memory_bytes;    /* heap held by the model */
	size_t string_bytes;    /* of which the string table's */
};

struct profile_top_entry {
	uint32_t function;      /* function index */
	const char *name;       /* valid while the profile lives */
	const char *module;     /* "" when none */
	bool kernel;
	uint64_t self_samples;  /* samples with this function as leaf */
	double self_pct;        /* of all samples, 0..100 */
};

enum profile_order {
	PROFILE_LEAF_FIRST,
	PROFILE_ROOT_FIRST,
};

struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Frames are leaf first (kernel frames, then user frames, as sampled). Stacks
 * with the same pid, comm, truncated flag and frames aggregate. pid may be
 * PROFILE_PID_GONE (a reloaded profile's folded stacks).
 * Returns 0 (a sample folded by the max-stacks cap included), -EINVAL (bad
 * arguments, count 0), -ENOMEM, or -ENOSPC when a new stack was refused past the
 * cap's fold room (its samples are counted as dropped). */
int profile_add_sample(struct profile *p, uint32_t pid, uint32_t tid, const char *comm,
		       const struct frame *frames, size_t nframes, bool truncated,
		       uint64_t count, uint64_t cpu_ns);

/*
 * profile_add_sample for frames whose strings (function, module, build_id)
 * stay alive and unchanged while strings_epoch does, and whose epochs are
 * never reused (symbolizer_strings_epoch; 0: no promise). A frame seen
 * before under the same epoch then finds its location by the strings'
 * addresses, comparing no bytes: a sample of a known stack costs a few
 * compares a frame. The comm is not covered: it is checked as always.
 */
int profile_add_sample_epoch(struct profile *p, uint64_t strings_epoch, uint32_t pid,
			     uint32_t tid, const char *comm, const struct frame *frames,
			     size_t nframes, bool truncated, uint64_t count, uint64_t cpu_ns);

/*
 * What a caller keeps beside frames that stay as they are (a stack cache
 * entry), for one profile at a time: *owner is that profile's id (0: none),
 * locs (room for the frames) their locations in it, *stack 1 + the index of
 * the stack they were last added to (0: none).
 */
struct profile_stack_memo {
	uint64_t *owner;
	uint32_t *stack;
	uint32_t *locs;
};

/*
 * profile_add_sample_epoch through a memo (above): the first sample of the
 * frames into p fills it; the next ones add by it, with no lookup per frame,
 * and to the same stack (same pid, comm and truncation: the cache is shared
 * across pids) with no hash of the stack either. A memo of another profile
 * is written over. Locations and stacks are never removed or renumbered, so
 * a memo stays true for p's whole life.
 */
int profile_add_sample_memo(struct profile *p, uint64_t strings_epoch,
			    const struct profile_stack_memo *memo, uint32_t pid, uint32_t tid,
			    const char *comm, const struct frame *frames, size_t nframes,
			    bool truncated, uint64_t count, uint64_t cpu_ns);

/*
 * p will be read (written out, merged from), not added to: frees the write
 * side's memos (~170 KiB) and the tables' unused room. Adding afterwards
 * still works, only without the memos' head start. The window seals each
 * interval it closes and each merge it builds.
 */
void profile_seal(struct profile *p);

/* pid has a stack in p. */
bool profile_has_pid(const struct profile *p, uint32_t pid);

/* 0 = unlimited (the default). */
void profile_set_max_stacks(struct profile *p, size_t max_stacks);

/*
 * Adds every stack of src to dst (under dst's cap), and src's dropped counts.
 * Merging the intervals of a run in order gives the same tables, in the same
 * order, as adding all their samples to one profile. Times are not touched.
 * 0, -EINVAL or -ENOMEM (dst then holds part of src).
 */
int profile_merge(struct profile *dst, const struct profile *src);

/*
 * While another profile's stacks are merged into p (profile_merge,
 * profile_merge_mapped): progress(arg) after every
 * PROFILE_MERGE_PROGRESS_STACKS of them, where the caller may pause (the
 * exporter's paced writes: a window's store of older intervals merged in one
 * go was one stretch of 10-20 ms on a churning host). Nothing but p and the
 * source is touched by the merge: the caller keeps both unchanged meanwhile.
 * NULL: none.
 */
#define PROFILE_MERGE_PROGRESS_STACKS 256
void profile_set_merge_progress(struct profile *p, void (*progress)(void *arg), void *arg);

/* profile_merge_mapped's map entry of a stack not added (dropped, or with no samples). */
#define PROFILE_NO_STACK UINT32_MAX

/*
 * Adds every stack of src to dst as profile_merge does. With fold, a stack
 * whose pid (not 0, the idle task) has no sample in any of the nlive
 * profiles live[] is keyed by comm alone: pid PROFILE_PID_GONE, tid 0, and
 * counted in gone_pid_stacks (nlive 0: every process is taken as gone).
 * map (NULL: none; else src's stack count of entries): map[i] the index in
 * dst of the stack src's stack i went to (past dst's cap, the process's
 * folded one), PROFILE_NO_STACK when it was not added (dropped, or no
 * samples left in it). What a profile holding several intervals needs to
 * take one off again (profile_take_off). 0, -EINVAL or -ENOMEM.
 */
int profile_merge_mapped(struct profile *dst, const struct profile *src, bool fold,
			 const struct profile *const *live, size_t nlive, uint32_t *map);

/*
 * Takes count samples of cpu_ns off stack idx (a profile_merge_mapped
 * target), and off the totals: the window's store, when an interval it
 * holds leaves. The stack stays, with what is left; one left with none is
 * skipped by every merge from p. Returns whether it has none left.
 */
bool profile_take_off(struct profile *p, uint32_t idx, uint64_t count, uint64_t cpu_ns);
/* Likewise the counts that came with a merge (dropped samples, pid stacks folded). */
void profile_take_off_dropped(struct profile *p, uint64_t dropped_samples, uint64_t dropped_cpu_ns,
			      uint64_t gone_pid_stacks);

void profile_set_time(struct profile *p, uint64_t start_unix_ns, uint64_t end_unix_ns);
void profile_get_time(const struct profile *p, uint64_t *start_unix_ns, uint64_t *end_unix_ns);

/* The sampling period: the value set, else the mean cpu_ns per sample, else 0. */
void profile_set_period(struct profile *p, uint64_t period_ns);
uint64_t profile_period_ns(const struct profile *p);

void profile_get_totals(const struct profile *p, struct profile_totals *out);

/* Up to n functions by self samples, most first (ties by name). Returns how many. */
size_t profile_top_functions(const struct profile *p, size_t n, struct profile_top_entry out[]);

/* The stop reason whose marker f is (a function of p), 0 for none. */
unsigned profile_stop_reason(const struct profile *p, const struct profile_function *f);

/* Tables. Index 0 of the string table is always "". */
size_t profile_string_count(const struct profile *p);
const char *profile_string(const struct profile *p, uint32_t idx);
/* true and *idx set when s is already interned. */
bool profile_string_lookup(const struct profile *p, const char *s, uint32_t *idx);

size_t profile_mapping_count(const struct profile *p);
const struct profile_mapping *profile_mapping_at(const struct profile *p, uint32_t idx);
size_t profile_function_count(const struct profile *p);
const struct profile_function *profile_function_at(const struct profile *p, uint32_t idx);
size_t profile_location_count(const struct profile *p);
const struct profile_location *profile_location_at(const struct profile *p, uint32_t idx);

/* Stacks, in insertion order. Pointers stay valid until the next add. */
size_t profile_stack_count(const struct profile *p);
const struct profile_stack *profile_stack_at(const struct profile *p, size_t idx);
/* The stack's location indices, leaf first (s->nlocations of them). */
const uint32_t *profile_stack_locations(const struct profile *p, const struct profile_stack *s);
/* The i-th location of a stack in the given order (i < s->nlocations). */
uint32_t profile_stack_location(const struct profile *p, const struct profile_stack *s,
				uint32_t i, enum profile_order order);
/* Shortcut: the function of the i-th frame in the given order. */
const struct profile_function *profile_stack_function(const struct profile *p,
						      const struct profile_stack *s,
						      uint32_t i, enum profile_order order);

/* Length (1-4) of the valid UTF-8 sequence starting at s (left bytes available),
 * or 0 when it is invalid (overlong, surrogate, > U+10FFFF, cut short). Names come
 * from untrusted binaries and processes, so every text encoder checks them. */
size_t profile_utf8_len(const unsigned char *s, size_t left);

#endif
