#include "common/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array_grow.h"
#include "common/hash.h"

static uint32_t intern_hash(const void *key, size_t len)
{
	uint64_t h = hash_fnv1a64(key, len);

	return (uint32_t)(h ^ (h >> 32));
}

/* The slot holding key, or the empty slot where it belongs (nslots > 0). */
static struct intern_slot *intern_slot(const struct intern *t, uint32_t hash, const void *key,
				       size_t len)
{
	size_t mask = t->nslots - 1, j = hash & mask;

	for (;;) {
		struct intern_slot *s = &t->slots[j];

		if (s->idx1 == 0)
			return s;
		if (s->hash == hash && t->lens[s->idx1 - 1] == len &&
		    memcmp(t->keys[s->idx1 - 1], key, len) == 0)
			return s;
		j = (j + 1) & mask;
	}
}

int intern_slots_reserve(struct intern_slot **slots, size_t *nslots, size_t n)
{
	struct intern_slot *ns;
	size_t ncap, i, j;

	if (*nslots != 0 && (n + 1) * 4 <= *nslots * 3)
		return 0;
	ncap = *nslots ? *nslots * 2 : 64;
	ns = calloc(ncap, sizeof(*ns));
	if (ns == NULL)
		return -ENOMEM;
	for (i = 0; i < *nslots; i++) {
		if ((*slots)[i].idx1 == 0)
			continue;
		j = (*slots)[i].hash & (ncap - 1);
		while (ns[j].idx1 != 0)
			j = (j + 1) & (ncap - 1);
		ns[j] = (*slots)[i];
	}
	free(*slots);
	*slots = ns;
	*nslots = ncap;
	return 0;
}

int intern_add(struct intern *t, const void *key, size_t len, uint32_t *idx)
{
	uint32_t hash = intern_hash(key, len);
	struct intern_slot *slot;
	char *copy;

	if (intern_slots_reserve(&t->slots, &t->nslots, t->n) != 0)
		return -ENOMEM;
	slot = intern_slot(t, hash, key, len);
	if (slot->idx1 != 0) {
		*idx = slot->idx1 - 1;
		return 0;
	}
	if (t->n >= UINT32_MAX - 1 || len == SIZE_MAX ||
	    array_grow((void **)&t->keys, &t->cap_keys, t->n + 1, sizeof(*t->keys)) != 0 ||
	    array_grow((void **)&t->lens, &t->cap_lens, t->n + 1, sizeof(*t->lens)) != 0)
		return -ENOMEM;
	copy = malloc(len + 1);
	if (copy == NULL)
		return -ENOMEM;
	if (len > 0)
		memcpy(copy, key, len);
	copy[len] = '\0';
	t->keys[t->n] = copy;
	t->lens[t->n] = len;
	t->bytes += len + 1;
	slot->idx1 = (uint32_t)t->n + 1;
	slot->hash = hash;
	*idx = (uint32_t)t->n++;
	return 0;
}

bool intern_find(const struct intern *t, const void *key, size_t len, uint32_t *idx)
{
	const struct intern_slot *slot;

	if (t->nslots == 0)
		return false;
	slot = intern_slot(t, intern_hash(key, len), key, len);
	if (slot->idx1 == 0)
		return false;
	*idx = slot->idx1 - 1;
	return true;
}

size_t intern_memory(const struct intern *t)
{
	return t->bytes + t->cap_keys * sizeof(*t->keys) + t->cap_lens * sizeof(*t->lens) +
	       t->nslots * sizeof(*t->slots);
}

void intern_free(struct intern *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->lens);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
