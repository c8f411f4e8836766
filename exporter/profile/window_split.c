#include "exporter/profile/window_split.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/errbuf.h"
#include "exporter/profile/profile.h"

struct window_split *window_split_new(size_t nparts, size_t nrefs)
{
	struct window_split *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->parts = calloc(nparts ? nparts : 1, sizeof(*s->parts));
	s->refs = calloc(nrefs ? nrefs : 1, sizeof(*s->refs));
	if (s->parts == NULL || s->refs == NULL) {
		window_split_free(s);
		return NULL;
	}
	s->nparts = nparts;
	s->refs_cap = nrefs;
	return s;
}

void window_split_free(struct window_split *s)
{
	if (s == NULL)
		return;
	free(s->parts);
	free(s->refs);
	free(s);
}

size_t window_split_bytes(const struct window_split *s)
{
	if (s == NULL)
		return 0;
	return sizeof(*s) + s->nparts * sizeof(*s->parts) + s->nrefs * sizeof(*s->refs);
}

int window_split_validate(const struct window_split *s, char *err, size_t errlen)
{
	const struct window_split_part *part;
	size_t i, k, total = 0;

	if (s->start_ns > s->end_ns)
		return errbuf_fail(-EINVAL, err, errlen, "window ends before it starts");
	if (s->nparts > 0 && s->parts[0].start_ns != s->start_ns)
		return errbuf_fail(-EINVAL, err, errlen, "the oldest interval does not start the window");
	for (i = 0; i < s->nparts; i++) {
		part = &s->parts[i];
		if (part->start_ns > part->end_ns || part->end_ns > s->end_ns ||
		    (i > 0 && part->start_ns < s->parts[i - 1].end_ns))
			return errbuf_fail(-EINVAL, err, errlen,
					   "interval %zu out of order or outside the window", i);
		if (part->nrefs > s->nrefs - total || part->refs != s->refs + total)
			return errbuf_fail(-EINVAL, err, errlen, "interval %zu: refs out of bounds", i);
		for (k = 0; k < part->nrefs; k++) {
			const struct window_split_ref *r = &part->refs[k];

			if (r->stack >= s->nstacks || (k > 0 && r->stack <= part->refs[k - 1].stack))
				return errbuf_fail(-EINVAL, err, errlen,
						   "interval %zu: stack %u out of range or order", i,
						   r->stack);
			if (r->count == 0)
				return errbuf_fail(-EINVAL, err, errlen,
						   "interval %zu: stack %u with no samples", i, r->stack);
		}
		total += part->nrefs;
	}
	if (total != s->nrefs)
		return errbuf_fail(-EINVAL, err, errlen, "%zu refs, the intervals hold %zu", s->nrefs,
				   total);
	return 0;
}

int window_split_check(const struct window_split *s, const struct profile *p, char *err,
		       size_t errlen)
{
	uint64_t start, end, *count, *cpu;
	size_t i, k, n = profile_stack_count(p);
	bool overflow = false;
	int rc;

	rc = window_split_validate(s, err, errlen);
	if (rc != 0)
		return rc;
	profile_get_time(p, &start, &end);
	if (start != s->start_ns || end != s->end_ns)
		return errbuf_fail(-EINVAL, err, errlen,
				   "it covers another time range than the profile (%llu..%llu, the profile %llu..%llu)",
				   (unsigned long long)s->start_ns, (unsigned long long)s->end_ns,
				   (unsigned long long)start, (unsigned long long)end);
	if (n != s->nstacks)
		return errbuf_fail(-EINVAL, err, errlen, "%u stacks, the profile has %zu", s->nstacks, n);
	count = calloc(n ? n : 1, sizeof(*count));
	cpu = calloc(n ? n : 1, sizeof(*cpu));
	if (count == NULL || cpu == NULL) {
		free(count);
		free(cpu);
		return errbuf_fail(-ENOMEM, err, errlen, "out of memory");
	}
	for (i = 0; i < s->nparts; i++) {
		for (k = 0; k < s->parts[i].nrefs; k++) {
			const struct window_split_ref *r = &s->parts[i].refs[k];

			overflow |= __builtin_add_overflow(count[r->stack], r->count, &count[r->stack]);
			overflow |= __builtin_add_overflow(cpu[r->stack], r->cpu_ns, &cpu[r->stack]);
		}
	}
	rc = overflow ? errbuf_fail(-EINVAL, err, errlen, "counts overflow") : 0;
	for (i = 0; rc == 0 && i < n; i++) {
		const struct profile_stack *st = profile_stack_at(p, i);

		if (st->count != count[i] || st->cpu_ns != cpu[i])
			rc = errbuf_fail(-EINVAL, err, errlen,
					 "stack %zu: %llu samples, its intervals hold %llu", i,
					 (unsigned long long)st->count, (unsigned long long)count[i]);
	}
	free(count);
	free(cpu);
	return rc;
}
