/*
 * Symbolized stacks already seen: a sample whose pid and raw addresses match
 * a cached stack gets its frames with one hash lookup instead of a symbol
 * search per frame. An entry is valid while the symbolizer's generation for
 * its pid (symbolizer_stack_generation) is unchanged: new maps for the pid,
 * its pid forgotten, kallsyms loaded all change it.
 *
 * Direct-mapped: a fixed number of slots, a new stack replaces whatever held
 * its slot, so the memory is bounded by slots x the largest stack. The frames'
 * strings belong to the symbolizer (valid until symbolizer_free).
 */
#ifndef LOWPROF_EXPORTER_STACK_CACHE_H
#define LOWPROF_EXPORTER_STACK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exporter/profile/frame.h"
#include "exporter/profile/profile.h"

#define STACK_CACHE_DEFAULT_SLOTS 1024

struct stack_cache;

struct stack_cache_stats {
	uint64_t hits, misses, stores;
	size_t bytes; /* held by the entries */
};

/* slots is rounded up to a power of two. NULL when out of memory. */
struct stack_cache *stack_cache_new(size_t slots);
void stack_cache_free(struct stack_cache *c);

/*
 * Profiles a cached stack keeps a memo for: a sample is added to the run's
 * profile and, with OTLP, to the interval's as well; each addition through
 * a memo of its own costs a few compares, where one without costs a lookup
 * per frame (5-6x the whole cached sample).
 */
#define STACK_CACHE_MEMOS 2

/*
 * A hit with what its consumer keeps beside the frames: their memo for each
 * of up to STACK_CACHE_MEMOS profiles (struct profile_stack_memo,
 * profile_add_sample_memo; the consumer says which profile uses which),
 * valid while the entry is: until the next stack_cache_put. A new entry's
 * owners are 0.
 */
struct stack_cache_hit {
	const struct frame *frames;
	size_t nframes;
	struct profile_stack_memo memo[STACK_CACHE_MEMOS];
};

/* The frames cached for pid and addrs[0..naddrs) at generation gen (0 never
 * matches), with the entry's locations memo; false when not cached. */
bool stack_cache_lookup(struct stack_cache *c, uint32_t pid, const uint64_t *addrs, size_t naddrs,
			uint64_t gen, struct stack_cache_hit *out);

/* Remember frames[0..n) for the key (gen 0: not stored). 0 or -ENOMEM. */
int stack_cache_put(struct stack_cache *c, uint32_t pid, const uint64_t *addrs, size_t naddrs,
		    uint64_t gen, const struct frame *frames, size_t n);

void stack_cache_stats(const struct stack_cache *c, struct stack_cache_stats *out);

#endif
