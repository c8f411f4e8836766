/*
 * The encoder's deduplicating tables: open addressing (linear probing, load
 * <= 3/4) over FNV-1a hashes of the keys, which are copied.
 */
#include "exporter/otlp/otlp_intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t otlp_hash(const void *key, size_t len)
{
	const unsigned char *k = key;
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= k[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static int otlp_intern_grow(struct otlp_intern *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 64, i;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (slots == NULL)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		size_t s = (size_t)otlp_hash(t->keys[i], t->lens[i]) & (nslots - 1);

		while (slots[s] != 0)
			s = (s + 1) & (nslots - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* *idx = index of key in t, adding a copy when it is new. */
int otlp_intern_add(struct otlp_intern *t, const void *key, size_t len, uint32_t *idx)
{
	size_t s;
	char *copy;

	if ((t->n + 1) * 4 > t->nslots * 3 && otlp_intern_grow(t) != 0)
		return -ENOMEM;
	s = (size_t)otlp_hash(key, len) & (t->nslots - 1);
	while (t->slots[s] != 0) {
		uint32_t i = t->slots[s] - 1;

		if (t->lens[i] == len && memcmp(t->keys[i], key, len) == 0) {
			*idx = i;
			return 0;
		}
		s = (s + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **keys = realloc(t->keys, cap * sizeof(*keys));
		size_t *lens;

		if (keys == NULL)
			return -ENOMEM;
		t->keys = keys;
		lens = realloc(t->lens, cap * sizeof(*lens));
		if (lens == NULL)
			return -ENOMEM;
		t->lens = lens;
		t->cap = cap;
	}
	copy = malloc(len + 1);
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, key, len);
	copy[len] = '\0';
	t->keys[t->n] = copy;
	t->lens[t->n] = len;
	t->slots[s] = (uint32_t)t->n + 1;
	*idx = (uint32_t)t->n++;
	return 0;
}

void otlp_intern_free(struct otlp_intern *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->lens);
	free(t->slots);
}
