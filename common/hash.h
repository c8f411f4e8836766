/*
 * FNV-1a: the one non-cryptographic hash of the tree (hash tables, interning,
 * record checksums). Not for anything an attacker may choose keys against
 * where collisions matter for more than speed.
 */
#ifndef LOWPROF_COMMON_HASH_H
#define LOWPROF_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A64_SEED 0xcbf29ce484222325ULL
#define HASH_FNV1A32_SEED 2166136261u

/* FNV-1a over len bytes, continuing from h (start from the width's seed). */
#define HASH_FNV1A_UPDATE(name, type, prime)                                 \
	static inline type name(type h, const void *data, size_t len)        \
	{                                                                    \
		const unsigned char *p = data;                               \
                                                                             \
		for (size_t i = 0; i < len; i++) {                           \
			h ^= p[i];                                           \
			h *= (prime);                                        \
		}                                                            \
		return h;                                                    \
	}

HASH_FNV1A_UPDATE(hash_fnv1a64_update, uint64_t, 1099511628211ULL)
HASH_FNV1A_UPDATE(hash_fnv1a32_update, uint32_t, 16777619u)

static inline uint64_t hash_fnv1a64(const void *data, size_t len)
{
	return hash_fnv1a64_update(HASH_FNV1A64_SEED, data, len);
}

/* splitmix64's finaliser: spreads an integer key (or a combination of keys)
 * over all 64 bits, for the slot or bucket of a hash index. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#endif
