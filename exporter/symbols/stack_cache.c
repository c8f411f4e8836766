#include "exporter/symbols/stack_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

struct stack_entry {
	uint64_t hash, gen;
	uint32_t pid;
	uint32_t naddrs, nframes;
	uint64_t *addrs;                          /* naddrs, right after the frames */
	uint64_t memo_owner[STACK_CACHE_MEMOS];   /* struct stack_cache_hit's memos */
	uint32_t memo_stack[STACK_CACHE_MEMOS];
	uint32_t *memo_locs; /* nframes a memo, right after the addresses */
	struct frame frames[]; /* nframes */
};

struct stack_cache {
	struct stack_entry **slots;
	size_t mask;
	struct stack_cache_stats st;
};

struct stack_cache *stack_cache_new(size_t slots)
{
	struct stack_cache *c = calloc(1, sizeof(*c));
	size_t n = 1;

	if (c == NULL)
		return NULL;
	while (n < slots)
		n <<= 1;
	c->slots = calloc(n, sizeof(*c->slots));
	if (c->slots == NULL) {
		free(c);
		return NULL;
	}
	c->mask = n - 1;
	return c;
}

void stack_cache_free(struct stack_cache *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i <= c->mask; i++)
		free(c->slots[i]);
	free(c->slots);
	free(c);
}

static uint64_t stack_cache_hash(uint32_t pid, const uint64_t *addrs, size_t naddrs)
{
	uint64_t h = ((uint64_t)pid << 32) | naddrs;
	size_t i;

	/* One multiply a word, one full mix at the end: this runs for every sample. */
	for (i = 0; i < naddrs; i++)
		h = (h ^ addrs[i]) * 0x9e3779b97f4a7c15ULL;
	return hash_mix64(h);
}

static size_t stack_entry_size(size_t naddrs, size_t nframes)
{
	return sizeof(struct stack_entry) + nframes * sizeof(struct frame) + naddrs * sizeof(uint64_t) +
	       STACK_CACHE_MEMOS * nframes * sizeof(uint32_t);
}

bool stack_cache_lookup(struct stack_cache *c, uint32_t pid, const uint64_t *addrs, size_t naddrs,
			uint64_t gen, struct stack_cache_hit *out)
{
	uint64_t h = stack_cache_hash(pid, addrs, naddrs);
	struct stack_entry *e = c->slots[h & c->mask];
	size_t i;

	if (gen == 0 || e == NULL || e->hash != h || e->gen != gen || e->pid != pid ||
	    e->naddrs != naddrs || memcmp(e->addrs, addrs, naddrs * sizeof(*addrs)) != 0) {
		c->st.misses++;
		return false;
	}
	c->st.hits++;
	out->frames = e->frames;
	out->nframes = e->nframes;
	for (i = 0; i < STACK_CACHE_MEMOS; i++) {
		out->memo[i].owner = &e->memo_owner[i];
		out->memo[i].stack = &e->memo_stack[i];
		out->memo[i].locs = e->memo_locs + i * e->nframes;
	}
	return true;
}

int stack_cache_put(struct stack_cache *c, uint32_t pid, const uint64_t *addrs, size_t naddrs,
		    uint64_t gen, const struct frame *frames, size_t n)
{
	uint64_t h = stack_cache_hash(pid, addrs, naddrs);
	struct stack_entry **slot = &c->slots[h & c->mask];
	struct stack_entry *e;

	if (gen == 0)
		return 0;
	e = malloc(stack_entry_size(naddrs, n));
	if (e == NULL)
		return -ENOMEM;
	e->hash = h;
	e->gen = gen;
	e->pid = pid;
	e->naddrs = (uint32_t)naddrs;
	e->nframes = (uint32_t)n;
	memcpy(e->frames, frames, n * sizeof(*frames));
	e->addrs = (uint64_t *)(e->frames + n);
	memcpy(e->addrs, addrs, naddrs * sizeof(*addrs));
	memset(e->memo_owner, 0, sizeof(e->memo_owner));
	memset(e->memo_stack, 0, sizeof(e->memo_stack));
	e->memo_locs = (uint32_t *)(e->addrs + naddrs);
	if (*slot != NULL)
		c->st.bytes -= stack_entry_size((*slot)->naddrs, (*slot)->nframes);
	free(*slot);
	*slot = e;
	c->st.bytes += stack_entry_size(naddrs, n);
	c->st.stores++;
	return 0;
}

void stack_cache_stats(const struct stack_cache *c, struct stack_cache_stats *out)
{
	*out = c->st;
}
