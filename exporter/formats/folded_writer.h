/*
 * Folded-stack encoder (Brendan Gregg's flamegraph.pl / inferno input):
 *
 *   comm;[truncated];root_frame;...;leaf_frame COUNT
 *
 * One line per distinct text: stacks that differ only in pid/tid (or in
 * modules of same-named functions) merge and their counts add up. Kernel
 * frames carry the "_[k]" suffix; "[truncated]" follows comm when the depth
 * limit cut the stack's root side. An empty comm prints as "[unknown]".
 * Lines are sorted bytewise (as `LC_ALL=C sort`) for stable output.
 *
 * Sanitising, so every line splits back unambiguously on ';' and the last ' ':
 * in comm and frame names ';' becomes ':', space, tab, CR and LF become '_',
 * other ASCII control bytes (and DEL) become '?'. Other bytes pass unchanged.
 */
#ifndef LOWPROF_EXPORTER_FOLDED_WRITER_H
#define LOWPROF_EXPORTER_FOLDED_WRITER_H

#include <stdio.h>

struct profile;

#define FOLDED_KERNEL_SUFFIX "_[k]"

/* Returns 0, -ENOMEM, or -EIO when the stream reports an error. */
int folded_write(const struct profile *p, FILE *out);
/* The same, calling progress(arg) (not NULL) while it sorts the lines, where
 * the caller may pause (the exporter's paced writes; its writes to out give
 * it the others): nothing of p may change meanwhile. */
int folded_write_paced(const struct profile *p, FILE *out, void (*progress)(void *arg),
		       void *arg);

/* The sanitised form of one byte of a name (exposed for tests and the SVG). */
int folded_sanitise_char(unsigned char c);

#endif
