/*
 * Folded-stack encoder. Lines are never materialised: each distinct segment
 * text (a comm, a function's name and suffix) is sanitised once per write,
 * and a line is the list of its segments', so sorting and merging 100k+
 * stacks costs those lists and an index array, not a copy of every line.
 */
#define _GNU_SOURCE /* qsort_r */
#include "exporter/formats/folded_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/profile/profile.h"

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

/* Stacks a sorted run holds, and a pause point's spacing in the keys' build
 * (folded_sort below); merged stacks between two pause points of a merge. */
#define FOLDED_RUN 256
#define FOLDED_MERGE_STEP 2048

/*
 * Sort keys: each stack as the list of its segments' sanitised texts (name
 * and kernel suffix), every distinct one written once per write into an
 * arena. A line's text is its segments, each followed by ';' (the last by
 * the ' ' before the count); sanitised texts hold neither byte, so two lines
 * compare as their first segments that differ, and the same arena entry in
 * the same place (not last in one line and last in the other) is equal
 * without a look at its bytes. The sort used to walk two stacks' functions
 * and names byte by byte at each of its n log n comparisons: most of the
 * exporter's write of a full window.
 */
enum folded_kind { FOLDED_COMM, FOLDED_USER, FOLDED_KERNEL, FOLDED_KINDS };

struct folded_keys {
	char *arena;      /* the texts, each ending in '\0'; [truncated]'s first */
	size_t arena_len, arena_cap;
	uint32_t *segs;   /* every stack's segments' arena offsets, one after another */
	size_t *offset;   /* stack i's: segs[offset[i] .. offset[i + 1]) */
};

/* Segment i of stack s (0 the comm, then [truncated] if cut, then its
 * frames root first): its kind and string index, or kind FOLDED_KINDS for
 * [truncated]. */
static enum folded_kind folded_segment_of(const struct profile *p, const struct profile_stack *s,
					  uint32_t i, uint32_t *str)
{
	const struct profile_function *f;

	if (i == 0) {
		*str = s->comm;
		return FOLDED_COMM;
	}
	if (s->truncated && i == 1)
		return FOLDED_KINDS;
	f = profile_stack_function(p, s, i - 1 - (s->truncated ? 1 : 0), PROFILE_ROOT_FIRST);
	*str = f->name;
	return f->kernel ? FOLDED_KERNEL : FOLDED_USER;
}

static uint32_t folded_nseg(const struct profile_stack *s)
{
	return 1 + (s->truncated ? 1 : 0) + s->nlocations;
}

/* text (sanitised), suffix and '\0' onto the arena: its offset, or UINT32_MAX. */
static uint32_t folded_arena_add(struct folded_keys *k, const char *text, const char *suffix)
{
	size_t tl = strlen(text), sl = strlen(suffix), at = k->arena_len, i;

	if (at + tl + sl + 1 > k->arena_cap) {
		size_t cap = k->arena_cap ? k->arena_cap : 4096;
		char *grown;

		while (at + tl + sl + 1 > cap)
			cap *= 2;
		if (cap > UINT32_MAX || (grown = realloc(k->arena, cap)) == NULL)
			return UINT32_MAX;
		k->arena = grown;
		k->arena_cap = cap;
	}
	for (i = 0; i < tl; i++)
		k->arena[at + i] = (char)folded_sanitise_char((unsigned char)text[i]);
	memcpy(k->arena + at + tl, suffix, sl + 1);
	k->arena_len = at + tl + sl + 1;
	return (uint32_t)at;
}

static void folded_keys_free(struct folded_keys *k)
{
	free(k->arena);
	free(k->segs);
	free(k->offset);
}

/* Every stack's segment list into k, with progress(arg) (if not NULL) every
 * FOLDED_RUN stacks: a pause point of the paced writer. 0 or -ENOMEM. */
static int folded_keys_build(const struct profile *p, size_t n, struct folded_keys *k,
			     void (*progress)(void *arg), void *arg)
{
	size_t nstr = profile_string_count(p), total = 0, i;
	uint32_t *seg_of, str = 0, j, nseg;

	memset(k, 0, sizeof(*k));
	/* (string, kind) -> arena offset, UINT32_MAX until written. */
	seg_of = malloc((nstr ? nstr : 1) * FOLDED_KINDS * sizeof(*seg_of));
	k->offset = malloc((n + 1) * sizeof(*k->offset));
	if (seg_of == NULL || k->offset == NULL)
		goto fail;
	memset(seg_of, 0xff, (nstr ? nstr : 1) * FOLDED_KINDS * sizeof(*seg_of));
	for (i = 0; i < n; i++) {
		k->offset[i] = total;
		total += folded_nseg(profile_stack_at(p, i));
	}
	k->offset[n] = total;
	k->segs = malloc((total ? total : 1) * sizeof(*k->segs));
	if (k->segs == NULL || folded_arena_add(k, PROFILE_TRUNCATED_NAME, "") != 0)
		goto fail;
	for (i = 0; i < n; i++) {
		const struct profile_stack *s = profile_stack_at(p, i);

		if (progress != NULL && i > 0 && i % FOLDED_RUN == 0)
			progress(arg);
		nseg = folded_nseg(s);
		for (j = 0; j < nseg; j++) {
			enum folded_kind kind = folded_segment_of(p, s, j, &str);
			uint32_t *slot, at = 0; /* [truncated] */

			if (kind != FOLDED_KINDS) {
				slot = &seg_of[(size_t)str * FOLDED_KINDS + kind];
				if (*slot == UINT32_MAX) {
					const char *text = profile_string(p, str);

					if (kind == FOLDED_COMM && text[0] == '\0')
						text = "[unknown]";
					*slot = folded_arena_add(k, text, kind == FOLDED_KERNEL
										  ? FOLDED_KERNEL_SUFFIX
										  : "");
					if (*slot == UINT32_MAX)
						goto fail;
				}
				at = *slot;
			}
			k->segs[k->offset[i] + j] = at;
		}
	}
	free(seg_of);
	return 0;
fail:
	free(seg_of);
	folded_keys_free(k);
	memset(k, 0, sizeof(*k));
	return -ENOMEM;
}

/* Two segments' texts, each followed by its terminator (';' or ' '). */
static int folded_segment_cmp(const char *a, int ta, const char *b, int tb)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
	int cx, cy;

	while (*x != '\0' && *x == *y) {
		x++;
		y++;
	}
	cx = *x != '\0' ? *x : ta;
	cy = *y != '\0' ? *y : tb;
	return cx == cy ? 0 : (cx < cy ? -1 : 1);
}

/* Two stacks' lines, bytewise, segment by segment. */
static int folded_cmp(const void *a, const void *b, void *arg)
{
	const struct folded_keys *k = arg;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const uint32_t *sa = k->segs + k->offset[ia], *sb = k->segs + k->offset[ib];
	size_t na = k->offset[ia + 1] - k->offset[ia], nb = k->offset[ib + 1] - k->offset[ib], i;
	int c;

	for (i = 0; i < na && i < nb; i++) {
		int ta = i + 1 == na ? ' ' : ';', tb = i + 1 == nb ? ' ' : ';';

		if (sa[i] == sb[i] && ta == tb)
			continue;
		c = folded_segment_cmp(k->arena + sa[i], ta, k->arena + sb[i], tb);
		if (c != 0)
			return c;
	}
	/* Every segment equal, terminators included (a shorter line's last ' '
	 * differs from the longer one's ';' there): the same line. */
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

static size_t *folded_sort(struct folded_keys *keys, size_t *order, size_t n,
			   void (*progress)(void *arg), void *arg, size_t **spare)
{
	size_t *src = order, *dst, *t, run, at, i, j, k, end, mid, step = 0;

	for (at = 0; at < n; at += FOLDED_RUN) {
		qsort_r(order + at, n - at < FOLDED_RUN ? n - at : FOLDED_RUN, sizeof(*order),
			folded_cmp, keys);
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
				if (j >= end || (i < mid && folded_cmp(&src[i], &src[j], keys) <= 0))
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
	struct folded_keys keys;
	int ret = 0;

	order = calloc(n ? n : 1, sizeof(*order));
	if (order == NULL)
		return -ENOMEM;
	if (folded_keys_build(p, n, &keys, progress, arg) != 0) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		order[i] = i;
	sorted = folded_sort(&keys, order, n, progress, arg, &spare);
	if (sorted == NULL) {
		folded_keys_free(&keys);
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < n;) {
		uint64_t count = profile_stack_at(p, sorted[i])->count;
		size_t j = i + 1, at;

		while (j < n && folded_cmp(&sorted[i], &sorted[j], &keys) == 0)
			count += profile_stack_at(p, sorted[j++])->count;
		for (at = keys.offset[sorted[i]]; at < keys.offset[sorted[i] + 1]; at++) {
			const char *text = keys.arena + keys.segs[at];

			if (at > keys.offset[sorted[i]])
				putc_unlocked(';', out); /* one thread writes the stream: no lock */
			fwrite_unlocked(text, 1, strlen(text), out);
		}
		fprintf(out, " %" PRIu64 "\n", count);
		i = j;
	}
	if (fflush(out) != 0 || ferror(out))
		ret = -EIO;
	folded_keys_free(&keys);
	free(order);
	free(spare);
	return ret;
}

int folded_write(const struct profile *p, FILE *out)
{
	return folded_write_paced(p, out, NULL, NULL);
}
