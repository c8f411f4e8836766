/*
 * Folded-stack encoder. Lines are never materialised: a cursor produces a
 * stack's line text byte by byte, so sorting and merging 100k+ stacks costs
 * one index array, not a copy of every line.
 */
#define _GNU_SOURCE /* qsort_r */
#include "exporter/formats/folded_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "exporter/profile/profile.h"

struct folded_cursor {
	const struct profile *p;
	const struct profile_stack *s;
	uint32_t seg;  /* 0 = comm, then [truncated] if any, then frames root first */
	uint32_t nseg;
	const char *str;
	const char *suffix;
};

int folded_sanitise_char(unsigned char c)
{
	if (c == ';')
		return ':';
	if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
		return '_';
	if (c < 0x20 || c == 0x7f)
		return '?';
	return c;
}

static void folded_load(struct folded_cursor *c)
{
	uint32_t frame = c->seg - 1 - (c->s->truncated ? 1 : 0);
	const struct profile_function *f;

	c->suffix = "";
	if (c->seg == 0) {
		c->str = profile_string(c->p, c->s->comm);
		if (c->str[0] == '\0')
			c->str = "[unknown]";
		return;
	}
	if (c->s->truncated && c->seg == 1) {
		c->str = PROFILE_TRUNCATED_NAME;
		return;
	}
	f = profile_stack_function(c->p, c->s, frame, PROFILE_ROOT_FIRST);
	c->str = profile_string(c->p, f->name);
	if (f->kernel)
		c->suffix = FOLDED_KERNEL_SUFFIX;
}

static void folded_start(struct folded_cursor *c, const struct profile *p,
			 const struct profile_stack *s)
{
	c->p = p;
	c->s = s;
	c->seg = 0;
	c->nseg = 1 + (s->truncated ? 1 : 0) + s->nlocations;
	folded_load(c);
}

/* The next byte of the line's stack text, or -1 at its end. */
static int folded_next(struct folded_cursor *c)
{
	if (*c->str != '\0')
		return folded_sanitise_char((unsigned char)*c->str++);
	if (*c->suffix != '\0')
		return (unsigned char)*c->suffix++;
	if (c->seg + 1 >= c->nseg)
		return -1;
	c->seg++;
	folded_load(c);
	return ';';
}

/* Both cursors at the start of segments that give the same text: the same
 * comm string, both "[truncated]", or the same function (its name and kernel
 * suffix). Different ids may still give the same text: the bytes decide then. */
static bool folded_same_segment(const struct folded_cursor *a, const struct folded_cursor *b)
{
	bool ta = a->s->truncated && a->seg == 1, tb = b->s->truncated && b->seg == 1;

	if (a->seg == 0 || b->seg == 0)
		return a->seg == 0 && b->seg == 0 && a->s->comm == b->s->comm;
	if (ta || tb)
		return ta && tb;
	return a->str == b->str && a->suffix == b->suffix;
}

static int folded_cmp(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	struct folded_cursor ca, cb;
	int x, y;

	folded_start(&ca, p, profile_stack_at(p, *(const size_t *)a));
	folded_start(&cb, p, profile_stack_at(p, *(const size_t *)b));
	/* Stacks share long root-side prefixes (comm, _start, main, ...): a
	 * segment both have is skipped whole, with its ';', rather than compared
	 * byte by byte (which made the sort of 50k stacks cost over a second).
	 * Only while both have a segment after it, so the bytes below still
	 * decide every order exactly as a plain comparison of the lines would. */
	while (ca.seg + 1 < ca.nseg && cb.seg + 1 < cb.nseg && folded_same_segment(&ca, &cb)) {
		ca.seg++;
		cb.seg++;
		folded_load(&ca);
		folded_load(&cb);
	}
	do {
		x = folded_next(&ca);
		y = folded_next(&cb);
		/* The text is followed by ' ' on the line; sanitised text has no space,
		 * so ending sorts exactly where ' ' would. */
		if (x < 0)
			x = ' ';
		if (y < 0)
			y = ' ';
		if (x != y)
			return x < y ? -1 : 1;
	} while (x != ' ');
	return 0;
}

/*
 * The lines' order, sorted in pieces: runs of FOLDED_RUN stacks sorted one by
 * one, then merged pairwise (bottom-up), with progress(arg) after each run
 * and every FOLDED_MERGE_STEP stacks merged. A paced writer pauses there:
 * sorted in one go, a window of a few thousand stacks was the longest
 * stretch of all the writes (13 ms on a churning host; 37 ms at 20 000
 * stacks) before the file's first byte. Equal lines end up adjacent as in
 * any sort, so the file is the same. Returns the sorted array (order or the
 * other buffer), NULL when out of memory.
 */
#define FOLDED_RUN 256
#define FOLDED_MERGE_STEP 2048

static size_t *folded_sort(const struct profile *p, size_t *order, size_t n,
			   void (*progress)(void *arg), void *arg, size_t **spare)
{
	size_t *src = order, *dst, *t, run, at, i, j, k, end, mid, step = 0;

	for (at = 0; at < n; at += FOLDED_RUN) {
		qsort_r(order + at, n - at < FOLDED_RUN ? n - at : FOLDED_RUN, sizeof(*order),
			folded_cmp, (void *)p);
		if (progress != NULL)
			progress(arg);
	}
	if (n <= FOLDED_RUN)
		return order;
	dst = malloc(n * sizeof(*dst));
	if (dst == NULL)
		return NULL;
	*spare = dst;
	for (run = FOLDED_RUN; run < n; run *= 2) {
		for (at = 0; at < n; at += 2 * run) {
			mid = at + run < n ? at + run : n;
			end = at + 2 * run < n ? at + 2 * run : n;
			for (i = at, j = mid, k = at; k < end; k++) {
				/* Stable: the left run first on a tie. */
				if (j >= end || (i < mid && folded_cmp(&src[i], &src[j], (void *)p) <= 0))
					dst[k] = src[i++];
				else
					dst[k] = src[j++];
				if (progress != NULL && ++step % FOLDED_MERGE_STEP == 0)
					progress(arg);
			}
		}
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

int folded_write_paced(const struct profile *p, FILE *out, void (*progress)(void *arg), void *arg)
{
	size_t n = profile_stack_count(p), i, *order, *sorted, *spare = NULL;
	int ret = 0;

	order = calloc(n ? n : 1, sizeof(*order));
	if (order == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		order[i] = i;
	sorted = folded_sort(p, order, n, progress, arg, &spare);
	if (sorted == NULL) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < n;) {
		struct folded_cursor c;
		uint64_t count = profile_stack_at(p, sorted[i])->count;
		size_t j = i + 1;
		int ch;

		while (j < n && folded_cmp(&sorted[i], &sorted[j], (void *)p) == 0)
			count += profile_stack_at(p, sorted[j++])->count;
		folded_start(&c, p, profile_stack_at(p, sorted[i]));
		for (ch = folded_next(&c); ch >= 0; ch = folded_next(&c))
			putc_unlocked(ch, out); /* one thread writes the stream: no lock per byte */
		fprintf(out, " %" PRIu64 "\n", count);
		i = j;
	}
	if (fflush(out) != 0 || ferror(out))
		ret = -EIO;
	free(order);
	free(spare);
	return ret;
}

int folded_write(const struct profile *p, FILE *out)
{
	return folded_write_paced(p, out, NULL, NULL);
}
