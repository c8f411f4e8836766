/*
 * The profile model's read side: totals, top functions and the table and
 * stack accessors every encoder iterates with.
 */
#define _GNU_SOURCE /* qsort_r */
#include "exporter/profile/profile.h"

#include <stdlib.h>
#include <string.h>

#include "exporter/profile/profile_internal.h"

static size_t profile_htab_bytes(const struct profile_htab *t)
{
	return t->cap * sizeof(struct intern_slot);
}

void profile_get_totals(const struct profile *p, struct profile_totals *out)
{
	memset(out, 0, sizeof(*out));
	out->samples = p->samples;
	out->cpu_ns = p->cpu_ns;
	out->stacks = p->nstacks;
	out->pids = p->pid_set.len;
	out->locations = p->nlocations;
	out->functions = p->nfunctions;
	out->mappings = p->nmappings;
	out->strings = p->strings.n;
	out->dropped_samples = p->dropped_samples;
	out->dropped_cpu_ns = p->dropped_cpu_ns;
	out->folded_samples = p->folded_samples;
	out->gone_samples = p->gone_samples;
	out->gone_stacks = p->gone_stacks;
	out->gone_pid_stacks = p->gone_pid_stacks;
	out->string_bytes = intern_memory(&p->strings);
	out->memory_bytes = sizeof(*p) + (p->memo != NULL ? sizeof(*p->memo) : 0) +
		intern_memory(&p->strings) +
		p->cap_mappings * sizeof(*p->mappings) +
		p->cap_functions * sizeof(*p->functions) +
		p->cap_locations * sizeof(*p->locations) + p->cap_stacks * sizeof(*p->stacks) +
		p->cap_pool * sizeof(uint32_t) + p->cap_scratch * sizeof(uint32_t) +
		profile_htab_bytes(&p->mapping_index) +
		profile_htab_bytes(&p->function_index) + profile_htab_bytes(&p->location_index) +
		profile_htab_bytes(&p->stack_index) + profile_htab_bytes(&p->pid_set);
}

struct profile_top_ctx {
	const struct profile *p;
	const uint64_t *self;
};

static int profile_top_cmp(const void *a, const void *b, void *arg)
{
	const struct profile_top_ctx *c = arg;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	const struct profile_function *fa = &c->p->functions[ia], *fb = &c->p->functions[ib];
	int r;

	if (c->self[ia] != c->self[ib])
		return c->self[ia] > c->self[ib] ? -1 : 1;
	r = strcmp(intern_str(&c->p->strings, fa->name), intern_str(&c->p->strings, fb->name));
	if (r != 0)
		return r;
	r = strcmp(intern_str(&c->p->strings, fa->filename),
		   intern_str(&c->p->strings, fb->filename));
	if (r != 0)
		return r;
	return (ia > ib) - (ia < ib);
}

size_t profile_top_functions(const struct profile *p, size_t n, struct profile_top_entry out[])
{
	struct profile_top_ctx ctx = { .p = p };
	uint64_t *self = NULL;
	uint32_t *order = NULL;
	size_t i, nused = 0, filled = 0;

	if (n == 0 || p->nfunctions == 0)
		return 0;
	self = calloc(p->nfunctions, sizeof(*self));
	order = calloc(p->nfunctions, sizeof(*order));
	if (self == NULL || order == NULL)
		goto cleanup;
	for (i = 0; i < p->nstacks; i++) {
		const struct profile_stack *s = &p->stacks[i];

		if (s->nlocations == 0)
			continue;
		self[p->locations[p->pool[s->loc_offset]].function] += s->count;
	}
	for (i = 0; i < p->nfunctions; i++) {
		if (self[i] != 0)
			order[nused++] = (uint32_t)i;
	}
	ctx.self = self;
	qsort_r(order, nused, sizeof(*order), profile_top_cmp, &ctx);
	for (i = 0; i < nused && filled < n; i++) {
		const struct profile_function *f = &p->functions[order[i]];
		struct profile_top_entry *e = &out[filled++];

		e->function = order[i];
		e->name = intern_str(&p->strings, f->name);
		e->module = intern_str(&p->strings, f->filename);
		e->kernel = f->kernel;
		e->self_samples = self[order[i]];
		e->self_pct = p->samples ? 100.0 * (double)self[order[i]] / (double)p->samples : 0.0;
	}
cleanup:
	free(self);
	free(order);
	return filled;
}

size_t profile_string_count(const struct profile *p)
{
	return p->strings.n;
}

const char *profile_string(const struct profile *p, uint32_t idx)
{
	return idx < p->strings.n ? intern_str(&p->strings, idx) : "";
}

size_t profile_mapping_count(const struct profile *p)
{
	return p->nmappings;
}

const struct profile_mapping *profile_mapping_at(const struct profile *p, uint32_t idx)
{
	return idx < p->nmappings ? &p->mappings[idx] : NULL;
}

size_t profile_function_count(const struct profile *p)
{
	return p->nfunctions;
}

const struct profile_function *profile_function_at(const struct profile *p, uint32_t idx)
{
	return idx < p->nfunctions ? &p->functions[idx] : NULL;
}

size_t profile_location_count(const struct profile *p)
{
	return p->nlocations;
}

const struct profile_location *profile_location_at(const struct profile *p, uint32_t idx)
{
	return idx < p->nlocations ? &p->locations[idx] : NULL;
}

size_t profile_stack_count(const struct profile *p)
{
	return p->nstacks;
}

const struct profile_stack *profile_stack_at(const struct profile *p, size_t idx)
{
	return idx < p->nstacks ? &p->stacks[idx] : NULL;
}

const uint32_t *profile_stack_locations(const struct profile *p, const struct profile_stack *s)
{
	if (p->pool == NULL)
		return NULL; /* only stacks without frames exist so far */
	return &p->pool[s->loc_offset];
}

uint32_t profile_stack_location(const struct profile *p, const struct profile_stack *s,
				uint32_t i, enum profile_order order)
{
	if (order == PROFILE_ROOT_FIRST)
		i = s->nlocations - 1 - i;
	return p->pool[s->loc_offset + i];
}

const struct profile_function *profile_stack_function(const struct profile *p,
						      const struct profile_stack *s,
						      uint32_t i, enum profile_order order)
{
	return &p->functions[p->locations[profile_stack_location(p, s, i, order)].function];
}

size_t profile_utf8_len(const unsigned char *s, size_t left)
{
	uint32_t cp;
	size_t n, i;

	if (left == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}
