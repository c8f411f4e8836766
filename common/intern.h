/*
 * A deduplicating table of byte strings: each distinct key gets the next
 * index (0, 1, 2 ... in the order first added) and a NUL-terminated copy that
 * stays at the same address until intern_free(), however the table grows.
 *
 * Open addressing with linear probing (load <= 3/4) over FNV-1a
 * (common/hash.h); a slot keeps the key's hash, so growing never rehashes the
 * keys. The indices, never the hash, decide any order a caller emits.
 * A zeroed struct is an empty table. Not thread-safe.
 */
#ifndef LOWPROF_COMMON_INTERN_H
#define LOWPROF_COMMON_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct intern_slot {
	uint32_t idx1; /* entry index + 1; 0 = empty */
	uint32_t hash;
};

struct intern {
	struct intern_slot *slots;
	size_t nslots;  /* power of two, or 0 */
	char **keys;    /* keys[i]: NUL-terminated copy of entry i */
	size_t *lens;   /* its length, without the NUL */
	size_t n;       /* entries */
	size_t cap_keys, cap_lens;
	size_t bytes;   /* sum of the copies' sizes, NULs included */
};

/* *idx = the index of key (len bytes, NULs allowed), adding a copy when it is
 * new. 0, or -ENOMEM (then the table is unchanged). */
int intern_add(struct intern *t, const void *key, size_t len, uint32_t *idx);

/* true and *idx set when key is in t; adds nothing. */
bool intern_find(const struct intern *t, const void *key, size_t len, uint32_t *idx);

/* The copy of entry idx (idx < t->n). */
static inline const char *intern_str(const struct intern *t, uint32_t idx)
{
	return t->keys[idx];
}

/*
 * The slot array alone, for other hash indexes over the same slots: makes
 * *slots (*nslots of them, a power of two or 0) room for one entry more than
 * n at a load of at most 3/4, moving the slots by their stored hash.
 * 0, or -ENOMEM (unchanged).
 */
int intern_slots_reserve(struct intern_slot **slots, size_t *nslots, size_t n);

/* Heap bytes the table holds (copies, arrays, slots). */
size_t intern_memory(const struct intern *t);

/* Frees every copy; t is an empty table again. */
void intern_free(struct intern *t);

#endif
