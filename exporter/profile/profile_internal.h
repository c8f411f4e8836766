/*
 * The profile model's private state, shared by profile.c (the write side:
 * interning and aggregation) and profile_read.c (totals, top functions and
 * the accessors the encoders use). Nothing outside those two includes it.
 */
#ifndef LOWPROF_EXPORTER_PROFILE_INTERNAL_H
#define LOWPROF_EXPORTER_PROFILE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/intern.h"
#include "exporter/profile/profile.h"

/* Open addressing with linear probing over common/intern's slots: index + 1
 * (0 = empty) and the entry's hash, so growing never rehashes the entries. */
struct profile_htab {
	struct intern_slot *slots;
	size_t cap; /* power of two, or 0 */
	size_t len;
};

#define PROFILE_STR_MEMO 512
#define PROFILE_FRAME_MEMO 4096

/* A frame's location, remembered by the frame's fields (profile_put_frame). */
struct profile_frame_memo {
	const char *function, *module, *build_id;
	uint64_t where;  /* module_offset, or address for kernel and unmapped frames */
	/* The strings epoch its pointers were seen under (profile_add_sample_epoch),
	 * 0: none promised; while the same, the pointers name their content. */
	uint64_t epoch;
	uint32_t loc1;   /* location index + 1; 0: empty */
	bool kernel, symbolized;
};

/*
 * The write side's memos (~170 KiB): only a profile being added to needs
 * them, so they are allocated at the first add and freed by profile_seal()
 * (a window holds 60 closed intervals, which are only read).
 */
struct profile_memo {
	/* The string index last given for a pointer: frames' strings are interned
	 * by the symbolizer, so the same name comes back at the same address and
	 * costs a compare rather than a hash of every byte (profile_intern). */
	struct {
		const char *ptr;
		uint32_t idx;
	} str[PROFILE_STR_MEMO];
	/* Likewise the location of a frame seen before: its fields are compared,
	 * then the strings behind its pointers (unless both the entry and the
	 * frame are under the same strings epoch), before the location is reused. */
	struct profile_frame_memo frame[PROFILE_FRAME_MEMO];
};

struct profile {
	/* Unique in the process, never 0: names this profile in memos kept
	 * outside it (profile_add_sample_memo), which a later profile at the
	 * same address must not match. */
	uint64_t id;
	struct intern strings; /* index 0 is "" */

	struct profile_mapping *mappings;
	size_t nmappings, cap_mappings;
	struct profile_htab mapping_index;

	struct profile_function *functions;
	size_t nfunctions, cap_functions;
	struct profile_htab function_index;

	struct profile_location *locations;
	size_t nlocations, cap_locations;
	struct profile_htab location_index;

	struct profile_stack *stacks;
	size_t nstacks, cap_stacks;
	struct profile_htab stack_index;

	uint32_t *pool; /* every stack's location indices, leaf first */
	size_t npool, cap_pool;

	struct profile_htab pid_set; /* idx1 holds pid + 1 */

	uint32_t *scratch; /* the stack being added */
	size_t cap_scratch;

	/* Called while stacks are merged in (profile_set_merge_progress). */
	void (*merge_progress)(void *arg);
	void *merge_progress_arg;

	/* NULL until the first add, and again once sealed (or when it could not
	 * be had: the memos save time, nothing depends on them). */
	struct profile_memo *memo;

	uint32_t kernel_mapping;
	uint32_t other_location; /* PROFILE_OTHER_STACKS_NAME's, or PROFILE_NO_MAPPING */
	size_t max_stacks;
	uint64_t start_ns, end_ns, period_ns;
	uint64_t samples, cpu_ns, dropped_samples, dropped_cpu_ns, folded_samples;
	uint64_t gone_samples, gone_pid_stacks;
	size_t gone_stacks;
};

#endif
