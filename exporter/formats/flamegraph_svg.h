/*
 * Self-contained SVG flame graph (one file, an inline script, no external
 * resource): root at the bottom, one level per process name (comm), then
 * frames root to leaf, merged by name along the path as flamegraph.pl does
 * over the folded output. Each frame is a <g class="f K" data-s="SAMPLES">
 * (K: r root, c process, u user, k kernel, m marker) holding
 * <title>NAME (N samples, P%)</title> (the tooltip), a <rect> and a <text>
 * label cut to the frame's width ("..").
 * User frames are warm (red/orange/yellow), kernel frames (named with the
 * "_[k]" suffix) blue, lowprof's markers ([truncated], [unknown] and other
 * bracketed names) green, processes purple; colours are stable, derived from
 * a hash of the name. Frames narrower than min_width_pct of the width are not
 * drawn; their samples stay in their parent's width.
 * The script (flamegraph_js.c) zooms into a clicked frame, resets, searches
 * with a regular expression and shows the matches' share.
 */
#ifndef LOWPROF_EXPORTER_FLAMEGRAPH_SVG_H
#define LOWPROF_EXPORTER_FLAMEGRAPH_SVG_H

#include <stdbool.h>
#include <stdio.h>

struct profile;

struct flamegraph_options {
	const char *title;      /* NULL: "lowprof CPU flame graph"; say the real sampling */
	const char *subtitle;   /* NULL: the profile's time span (UTC) and sample count */
	unsigned int width;     /* pixels; 0: 1200 */
	double min_width_pct;   /* 0: 0.1 */
	bool include_idle;      /* draw pid 0 (idle task) stacks; off by default */
	/* Called every FLAMEGRAPH_PROGRESS_STACKS stacks merged into the tree and
	 * every FLAMEGRAPH_PROGRESS_NODES frames measured, where a paced writer
	 * may pause (the drawing's bytes pause through its stream); NULL: none. */
	void (*progress)(void *arg);
	void *progress_arg;
};

#define FLAMEGRAPH_PROGRESS_STACKS 256
#define FLAMEGRAPH_PROGRESS_NODES 4096

/* The script inlined into every SVG (flamegraph_js.c). */
extern const char flamegraph_js[];

/* opts may be NULL. Returns 0, -ENOMEM, or -EIO when the stream reports an error. */
int flamegraph_write_svg(const struct profile *p, FILE *out, const struct flamegraph_options *opts);

#endif
