/*
 * SVG flame graph: stacks are merged into a tree (root, comm, frames root
 * first) keyed by (parent, name, kind) through a hash table, then laid out
 * depth first with siblings in name order, as flamegraph.pl does.
 */
#define _GNU_SOURCE /* qsort_r */
#include "exporter/formats/flamegraph_svg.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hash.h"
#include "exporter/formats/folded_writer.h"
#include "exporter/profile/profile.h"

#define FG_FRAME_H 16
#define FG_TOP_PAD 56
#define FG_BOTTOM_PAD 26 /* the details line: the frame under the pointer, the search's share */
#define FG_SIDE_PAD 10
#define FG_CHAR_W 7.0 /* Verdana 12px averages ~0.59 em per glyph */

enum fg_kind {
	FG_ROOT,
	FG_COMM,
	FG_USER,
	FG_KERNEL,
	FG_TRUNCATED,
};

/* The class of each kind (the script and the legend read them); a user
 * frame with a bracketed name is one of lowprof's markers. */
static const char fg_kind_class[] = {'r', 'c', 'u', 'k', 'm'};

struct fg_node {
	uint32_t name;          /* string index (comm or function name) */
	uint32_t first_child;   /* node index + 1, 0 = none */
	uint32_t next_sibling;  /* node index + 1, 0 = none */
	uint32_t parent;
	uint8_t kind;
	uint64_t count;
};

struct fg_tree {
	const struct profile *p;
	void (*progress)(void *arg); /* see struct flamegraph_options */
	void *progress_arg;
	size_t visited;         /* nodes fg_depth has measured, for its progress */
	struct fg_node *nodes;
	size_t n, cap;
	uint32_t *slots;        /* child index: node index + 1, 0 = empty */
	size_t nslots;
	uint64_t total;
	uint64_t idle_skipped;
	unsigned int max_depth;
};

struct fg_draw {
	struct fg_tree *t;
	FILE *out;
	double scale;           /* pixels per sample */
	uint64_t min_count;     /* narrower frames are elided */
	unsigned int height;
	uint32_t *kids;         /* sort buffer, one per level */
};

static uint64_t fg_hash(uint32_t parent, uint32_t name, uint8_t kind)
{
	return hash_mix64(((uint64_t)parent << 32) ^ ((uint64_t)name << 3) ^ kind);
}

/*
 * The nodes and the child index, sized once for the most nodes the profile
 * can make (every frame of every stack, its process and its truncation
 * marker): grown by doubling, the last copy of the nodes and the last
 * rehash took 7-16 ms in one go at 20 000 stacks, where a paced writer
 * cannot pause. The nodes are calloc'ed, so pages never reached are never
 * touched. The index is sized for the bound, not for the real tree, which is
 * smaller when stacks share frames: 4 bytes a slot, up to 16 MiB for the
 * moment of the write at 20 000 stacks of 100 frames (--max-stacks' default
 * and deep kernel and user stacks).
 */
#define FG_ZERO_STEP (64 * 1024) /* index slots zeroed between two pauses */

static int fg_alloc(struct fg_tree *t, size_t nstacks)
{
	size_t bound = 1, i;

	for (i = 0; i < nstacks; i++)
		bound += 2 + profile_stack_at(t->p, i)->nlocations;
	if (bound >= UINT32_MAX / 2)
		return -ENOMEM;
	t->cap = bound;
	for (t->nslots = 1024; t->nslots * 3 < bound * 4; t->nslots *= 2)
		;
	t->nodes = calloc(t->cap, sizeof(*t->nodes));
	t->slots = malloc(t->nslots * sizeof(*t->slots));
	if (t->nodes == NULL || t->slots == NULL)
		return -ENOMEM;
	/* Zeroed here in pieces: left to the first stacks' random probes, its
	 * page faults (4 MiB at 20 000 stacks) took 13 ms before the first pause. */
	for (i = 0; i < t->nslots; i += FG_ZERO_STEP) {
		memset(t->slots + i, 0, (t->nslots - i < FG_ZERO_STEP ? t->nslots - i : FG_ZERO_STEP) *
						sizeof(*t->slots));
		if (t->progress != NULL)
			t->progress(t->progress_arg);
	}
	return 0;
}

/* The child of parent named (name, kind), created when missing. */
static int fg_child(struct fg_tree *t, uint32_t parent, uint32_t name, uint8_t kind,
		    uint32_t *out)
{
	struct fg_node *nd;
	size_t j;

	if (t->n >= t->cap) /* fg_alloc's bound: cannot happen */
		return -ENOMEM;
	j = fg_hash(parent, name, kind) & (t->nslots - 1);
	while (t->slots[j] != 0) {
		nd = &t->nodes[t->slots[j] - 1];
		if (nd->parent == parent && nd->name == name && nd->kind == kind) {
			*out = t->slots[j] - 1;
			return 0;
		}
		j = (j + 1) & (t->nslots - 1);
	}
	nd = &t->nodes[t->n];
	nd->name = name;
	nd->kind = kind;
	nd->parent = parent;
	nd->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = (uint32_t)t->n + 1;
	t->slots[j] = (uint32_t)t->n + 1;
	*out = (uint32_t)t->n++;
	return 0;
}

static int fg_build(struct fg_tree *t, bool include_idle)
{
	size_t i, nstacks = profile_stack_count(t->p);

	if (fg_alloc(t, nstacks) != 0)
		return -ENOMEM;
	t->nodes[0].kind = FG_ROOT;
	t->n = 1;
	for (i = 0; i < nstacks; i++) {
		const struct profile_stack *s = profile_stack_at(t->p, i);
		uint32_t node = 0, k;
		int err;

		if (s->pid == 0 && !include_idle) {
			t->idle_skipped += s->count;
			continue;
		}
		t->nodes[0].count += s->count;
		err = fg_child(t, node, s->comm, FG_COMM, &node);
		if (err == 0 && s->truncated) {
			t->nodes[node].count += s->count;
			err = fg_child(t, node, 0, FG_TRUNCATED, &node);
		}
		for (k = 0; err == 0 && k < s->nlocations; k++) {
			const struct profile_function *f =
				profile_stack_function(t->p, s, k, PROFILE_ROOT_FIRST);

			t->nodes[node].count += s->count;
			err = fg_child(t, node, f->name, f->kernel ? FG_KERNEL : FG_USER, &node);
		}
		if (err != 0)
			return err;
		t->nodes[node].count += s->count;
		if (t->progress != NULL && (i + 1) % FLAMEGRAPH_PROGRESS_STACKS == 0)
			t->progress(t->progress_arg);
	}
	t->total = t->nodes[0].count;
	return 0;
}

static const char *fg_name(const struct fg_tree *t, const struct fg_node *nd)
{
	const char *s;

	switch (nd->kind) {
	case FG_ROOT:
		return "all";
	case FG_TRUNCATED:
		return PROFILE_TRUNCATED_NAME;
	default:
		s = profile_string(t->p, nd->name);
		return s[0] != '\0' ? s : "[unknown]";
	}
}

/* XML text: escape the five specials; bytes XML 1.0 cannot carry at all
 * (control characters, invalid UTF-8) become '?'. At most max_chars code
 * points are written; returns how many were. The bytes between two escapes
 * go out in one write: a write per character was a seventh of the flame
 * graph's cost. */
static size_t fg_escape(FILE *out, const char *str, size_t max_chars)
{
	const unsigned char *s = (const unsigned char *)str, *run = s;
	size_t left = strlen(str), chars = 0;

	while (left > 0 && chars < max_chars) {
		size_t n = profile_utf8_len(s, left);
		const char *entity = NULL;

		if (n == 0 || (s[0] < 0x20 && s[0] != '\t') || s[0] == 0x7f) {
			entity = "?";
			n = 1;
		} else if (s[0] == '&') {
			entity = "&amp;";
		} else if (s[0] == '<') {
			entity = "&lt;";
		} else if (s[0] == '>') {
			entity = "&gt;";
		} else if (s[0] == '"') {
			entity = "&quot;";
		} else if (s[0] == '\'') {
			entity = "&apos;";
		}
		if (entity != NULL) {
			fwrite(run, 1, (size_t)(s - run), out);
			fputs(entity, out);
			run = s + n;
		}
		s += n;
		left -= n;
		chars++;
	}
	fwrite(run, 1, (size_t)(s - run), out);
	return chars;
}

/* Decimal text for the attributes of every frame, written in place:
 * printf's floating-point path was a third of the flame graph's cost. */
static char *fg_put_u64(char *p, uint64_t v)
{
	char digits[20];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

/* v with `decimals` (1 or 2) digits after the point, rounded to nearest. */
static char *fg_put_fixed(char *p, double v, unsigned int decimals)
{
	uint64_t scale = decimals == 1 ? 10 : 100, n;

	if (v < 0) {
		*p++ = '-';
		v = -v;
	}
	n = (uint64_t)llround(v * (double)scale);
	p = fg_put_u64(p, n / scale);
	*p++ = '.';
	if (decimals == 2)
		*p++ = (char)('0' + n / 10 % 10);
	*p++ = (char)('0' + n % 10);
	return p;
}

static char *fg_put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

static size_t fg_char_count(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t left = strlen(str), chars = 0;

	while (left > 0) {
		size_t n = profile_utf8_len(s, left);

		n = n ? n : 1;
		s += n;
		left -= n;
		chars++;
	}
	return chars;
}

static char fg_class(const struct fg_node *nd, const char *name)
{
	if (nd->kind == FG_USER && name[0] == '[')
		return 'm';
	return fg_kind_class[nd->kind];
}

static void fg_colour(char cls, const char *name, unsigned int rgb[3])
{
	uint32_t h = hash_fnv1a32_update(HASH_FNV1A32_SEED, name, strlen(name));
	double v1, v2, v3;

	v1 = (double)(h & 0xff) / 255.0;
	v2 = (double)((h >> 8) & 0xff) / 255.0;
	v3 = (double)((h >> 16) & 0xff) / 255.0;
	switch (cls) {
	case 'k': /* blues */
		rgb[0] = (unsigned int)(40 + 60 * v1);
		rgb[1] = (unsigned int)(110 + 70 * v2);
		rgb[2] = (unsigned int)(200 + 55 * v3);
		break;
	case 'u': /* flamegraph.pl "hot": reds to yellows */
		rgb[0] = (unsigned int)(205 + 50 * v3);
		rgb[1] = (unsigned int)(230 * v1);
		rgb[2] = (unsigned int)(55 * v2);
		break;
	case 'm': /* greens: lowprof's markers, not code */
		rgb[0] = (unsigned int)(90 + 40 * v1);
		rgb[1] = (unsigned int)(170 + 40 * v2);
		rgb[2] = (unsigned int)(90 + 40 * v3);
		break;
	case 'c': /* purples: the process level is neither user code nor kernel */
		rgb[0] = (unsigned int)(160 + 40 * v1);
		rgb[1] = (unsigned int)(140 + 30 * v2);
		rgb[2] = (unsigned int)(200 + 40 * v3);
		break;
	default: /* grey: the root */
		rgb[0] = rgb[1] = rgb[2] = 200;
		break;
	}
}

static void fg_draw_frame(struct fg_draw *d, const struct fg_node *nd, unsigned int depth,
			  double x)
{
	const char *name = fg_name(d->t, nd);
	const char *suffix = nd->kind == FG_KERNEL ? FOLDED_KERNEL_SUFFIX : "";
	double w = (double)nd->count * d->scale;
	double y = d->height - FG_BOTTOM_PAD - (double)(depth + 1) * FG_FRAME_H;
	double pct = 100.0 * (double)nd->count / (double)d->t->total;
	size_t fit = w > 6 ? (size_t)((w - 6) / FG_CHAR_W) : 0;
	char cls = fg_class(nd, name);
	unsigned int rgb[3], i;
	char line[320], *p = line; /* the fixed parts, at most ~250 bytes */

	fg_colour(cls, name, rgb);
	p = fg_put_str(p, "<g class=\"f ");
	*p++ = cls;
	p = fg_put_str(p, "\" data-s=\"");
	p = fg_put_u64(p, nd->count);
	p = fg_put_str(p, "\"><title>");
	fwrite(line, 1, (size_t)(p - line), d->out);
	fg_escape(d->out, name, SIZE_MAX);
	p = fg_put_str(line, suffix);
	p = fg_put_str(p, " (");
	p = fg_put_u64(p, nd->count);
	p = fg_put_str(p, " samples, ");
	p = fg_put_fixed(p, pct, 2);
	p = fg_put_str(p, "%)</title><rect x=\"");
	p = fg_put_fixed(p, x, 1);
	p = fg_put_str(p, "\" y=\"");
	p = fg_put_fixed(p, y, 1);
	p = fg_put_str(p, "\" width=\"");
	p = fg_put_fixed(p, w, 1);
	p = fg_put_str(p, "\" height=\"");
	p = fg_put_u64(p, FG_FRAME_H - 1);
	p = fg_put_str(p, "\" fill=\"rgb(");
	for (i = 0; i < 3; i++) {
		p = fg_put_u64(p, rgb[i]);
		*p++ = i < 2 ? ',' : ')';
	}
	p = fg_put_str(p, "\" rx=\"2\" ry=\"2\"/>");
	if (fit >= 3) {
		p = fg_put_str(p, "<text x=\"");
		p = fg_put_fixed(p, x + 3, 1);
		p = fg_put_str(p, "\" y=\"");
		p = fg_put_fixed(p, y + FG_FRAME_H - 4.5, 1);
		p = fg_put_str(p, "\">");
		fwrite(line, 1, (size_t)(p - line), d->out);
		/* The label is cut to the frame's width ("..") so it never spills over. */
		if (fg_char_count(name) + strlen(suffix) <= fit) {
			fg_escape(d->out, name, SIZE_MAX);
			fputs(suffix, d->out);
		} else {
			fg_escape(d->out, name, fit - 2);
			fputs("..", d->out);
		}
		fputs("</text></g>\n", d->out);
	} else {
		p = fg_put_str(p, "</g>\n");
		fwrite(line, 1, (size_t)(p - line), d->out);
	}
}

static int fg_name_cmp(const void *a, const void *b, void *arg)
{
	const struct fg_tree *t = arg;
	const struct fg_node *na = &t->nodes[*(const uint32_t *)a];
	const struct fg_node *nb = &t->nodes[*(const uint32_t *)b];
	int r = strcmp(fg_name(t, na), fg_name(t, nb));

	if (r != 0)
		return r;
	return (int)na->kind - (int)nb->kind;
}

/* Draw node idx at depth and its visible subtree; siblings go in name order. */
static void fg_draw_tree(struct fg_draw *d, uint32_t idx, unsigned int depth, double x,
			 uint32_t *buf)
{
	const struct fg_node *nd = &d->t->nodes[idx];
	size_t nkids = 0, i;
	uint32_t c;

	fg_draw_frame(d, nd, depth, x);
	for (c = nd->first_child; c != 0; c = d->t->nodes[c - 1].next_sibling) {
		if (d->t->nodes[c - 1].count >= d->min_count)
			buf[nkids++] = c - 1;
	}
	qsort_r(buf, nkids, sizeof(*buf), fg_name_cmp, d->t);
	for (i = 0; i < nkids; i++) {
		const struct fg_node *kid = &d->t->nodes[buf[i]];

		fg_draw_tree(d, buf[i], depth + 1, x, buf + nkids);
		x += (double)kid->count * d->scale;
	}
}

static unsigned int fg_depth(struct fg_tree *t, uint32_t idx, uint64_t min_count)
{
	unsigned int best = 0;
	uint32_t c;

	for (c = t->nodes[idx].first_child; c != 0; c = t->nodes[c - 1].next_sibling) {
		unsigned int dd;

		if (t->progress != NULL && ++t->visited % FLAMEGRAPH_PROGRESS_NODES == 0)
			t->progress(t->progress_arg);
		if (t->nodes[c - 1].count < min_count)
			continue;
		dd = 1 + fg_depth(t, c - 1, min_count);
		if (dd > best)
			best = dd;
	}
	return best;
}

static void fg_subtitle(const struct fg_tree *t, FILE *out)
{
	uint64_t start, end;
	char a[32] = "", b[32] = "";
	char line[160];
	struct tm tm;
	time_t ts;

	profile_get_time(t->p, &start, &end);
	if (start != 0 && end >= start) {
		ts = (time_t)(start / 1000000000ULL);
		if (gmtime_r(&ts, &tm) != NULL)
			strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", &tm);
		ts = (time_t)(end / 1000000000ULL);
		if (gmtime_r(&ts, &tm) != NULL)
			strftime(b, sizeof(b), "%H:%M:%S", &tm);
		snprintf(line, sizeof(line), "%s - %s UTC, %" PRIu64 " samples", a, b, t->total);
	} else {
		snprintf(line, sizeof(line), "%" PRIu64 " samples", t->total);
	}
	fg_escape(out, line, SIZE_MAX);
	if (t->idle_skipped != 0)
		fprintf(out, " (%" PRIu64 " idle samples not shown)", t->idle_skipped);
}

/* The script's buttons and lines, and the colours' legend. */
static void fg_controls(FILE *out, unsigned int width, unsigned int height)
{
	static const struct {
		char cls;
		const char *what;
	} legend[] = {{'u', "user"}, {'k', "kernel"}, {'m', "lowprof marker"}, {'c', "process"}};
	unsigned int rgb[3], x = FG_SIDE_PAD;
	size_t i;

	fprintf(out, "<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"24\" style=\"display:none\">"
		"Reset zoom</text>\n", FG_SIDE_PAD);
	fprintf(out, "<text id=\"search\" class=\"btn end\" x=\"%u\" y=\"24\">Search</text>\n",
		width - FG_SIDE_PAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", FG_SIDE_PAD, height - 8);
	fprintf(out, "<text id=\"matched\" class=\"end\" x=\"%u\" y=\"%u\"> </text>\n",
		width - FG_SIDE_PAD, height - 8);
	for (i = 0; i < sizeof(legend) / sizeof(legend[0]); i++) {
		/* The colour a name hashing to the middle of the range would get. */
		fg_colour(legend[i].cls, "", rgb);
		fprintf(out, "<rect x=\"%u\" y=\"35\" width=\"10\" height=\"10\" "
			"fill=\"rgb(%u,%u,%u)\"/><text x=\"%u\" y=\"44\">%s</text>\n",
			x, rgb[0], rgb[1], rgb[2], x + 14, legend[i].what);
		x += 14 + (unsigned int)(strlen(legend[i].what) * FG_CHAR_W) + 12;
	}
}

int flamegraph_write_svg(const struct profile *p, FILE *out, const struct flamegraph_options *opts)
{
	struct flamegraph_options o = { 0 };
	struct fg_tree t = { .p = p };
	struct fg_draw d = { .t = &t, .out = out };
	unsigned int width, depth = 0;
	uint32_t *buf = NULL;
	int ret;

	if (opts != NULL)
		o = *opts;
	t.progress = o.progress;
	t.progress_arg = o.progress_arg;
	width = o.width >= 100 ? o.width : 1200;
	if (o.min_width_pct <= 0)
		o.min_width_pct = 0.1;
	ret = fg_build(&t, o.include_idle);
	if (ret != 0)
		goto cleanup;
	/* Frames below this many samples would be under min_width_pct of the width. */
	d.min_count = (uint64_t)((double)t.total * o.min_width_pct / 100.0);
	if (d.min_count == 0)
		d.min_count = 1;
	if (t.total != 0)
		depth = fg_depth(&t, 0, d.min_count);
	d.height = FG_TOP_PAD + (depth + 1) * FG_FRAME_H + FG_BOTTOM_PAD;
	d.scale = t.total ? (double)(width - 2 * FG_SIDE_PAD) / (double)t.total : 0;
	/* A sort buffer: each level uses the slice after its parent's children. */
	buf = calloc(t.n + 1, sizeof(*buf));
	if (buf == NULL) {
		ret = -ENOMEM;
		goto cleanup;
	}

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out, "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\" data-pad=\"%d\">\n", width, d.height, width,
		d.height, FG_SIDE_PAD);
	fputs("<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
	      ".title{font-size:17px;text-anchor:middle}.sub{fill:#444;text-anchor:middle}"
	      ".btn{fill:#33c;cursor:pointer}.end{text-anchor:end}g.f{cursor:pointer}"
	      "g:hover rect{stroke:#000;stroke-width:0.5}</style>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f6f6f0\"/>\n",
		width, d.height);
	fprintf(out, "<text class=\"title\" x=\"%u\" y=\"24\">", width / 2);
	fg_escape(out, o.title != NULL ? o.title : "lowprof CPU flame graph", SIZE_MAX);
	fprintf(out, "</text>\n<text class=\"sub\" x=\"%u\" y=\"44\">", width / 2);
	if (o.subtitle != NULL)
		fg_escape(out, o.subtitle, SIZE_MAX);
	else
		fg_subtitle(&t, out);
	fputs("</text>\n", out);
	fg_controls(out, width, d.height);
	if (t.total != 0)
		fg_draw_tree(&d, 0, 0, FG_SIDE_PAD, buf);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", flamegraph_js);
	fputs("</svg>\n", out);
	if (fflush(out) != 0 || ferror(out))
		ret = -EIO;
cleanup:
	free(buf);
	free(t.nodes);
	free(t.slots);
	return ret;
}
