/*
 * What a merge of the window is made of, interval by interval: for each
 * interval (its time range), how many samples (and how much CPU) of each of
 * the merge's stacks came from it. The merge is written as profile.pb.gz,
 * one sample per stack in the merge's order, so a restarted exporter that
 * reloads that file and this split can take its intervals back one by one
 * (profile_window_restore) instead of keeping the reloaded window whole.
 *
 * A split is checked against the profile it describes before it is used
 * (window_split_check): same time range, same number of stacks, and every
 * stack's count and CPU exactly the sum of its intervals'. Anything else
 * (another file's split, one left by an exporter killed between its two
 * writes) is refused.
 */
#ifndef LOWPROF_EXPORTER_WINDOW_SPLIT_H
#define LOWPROF_EXPORTER_WINDOW_SPLIT_H

#include <stddef.h>
#include <stdint.h>

struct profile;

/* An interval's samples of one of the merge's stacks. */
struct window_split_ref {
	uint32_t stack; /* the merge's stack index: the pprof's sample index */
	uint64_t count, cpu_ns;
};

/* One interval: [start_ns, end_ns), its refs by stack, increasing, each count > 0. */
struct window_split_part {
	uint64_t start_ns, end_ns;
	size_t nrefs;
	struct window_split_ref *refs; /* into window_split.refs */
};

struct window_split {
	uint64_t start_ns, end_ns; /* the merge's time range (the pprof's) */
	uint32_t nstacks;          /* the merge's stacks (the pprof's samples) */
	size_t nparts, nrefs;
	size_t refs_cap;                 /* room in refs (window_split_new's nrefs) */
	struct window_split_part *parts; /* oldest first, none overlapping */
	struct window_split_ref *refs;   /* every part's, in part order */
};

/* A split of nparts parts and room for nrefs refs (parts[i].refs unset, nrefs
 * counts what is filled in). NULL when out of memory. */
struct window_split *window_split_new(size_t nparts, size_t nrefs);
void window_split_free(struct window_split *s);

/* Heap bytes held. */
size_t window_split_bytes(const struct window_split *s);

/*
 * The split's own rules (what the decoder enforces too): parts ordered and
 * not overlapping, within [start_ns, end_ns], the first starting at start_ns;
 * in each part, stacks increasing and below nstacks, counts > 0. 0, or
 * -EINVAL with the reason in err.
 */
int window_split_validate(const struct window_split *s, char *err, size_t errlen);

/* s describes p (validate, then: p's time range, stack count, and each
 * stack's count and CPU the sum of its parts'). 0, -EINVAL (err set), -ENOMEM. */
int window_split_check(const struct window_split *s, const struct profile *p, char *err,
		       size_t errlen);

#endif
