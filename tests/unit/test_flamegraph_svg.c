/* SVG flame graph: well-formed XML, titles with counts, escaping, colours, elision. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "exporter/formats/flamegraph_svg.h"
#include "exporter/profile/profile.h"
#include "test_support.h"

#define APP "/bin/app"

static struct profile *make_profile(void)
{
	struct profile *p = profile_new();
	struct frame sys[] = { ts_kernel_frame("ksys_write", 0xffffffff81000100ULL),
			       ts_user_frame("write", APP, 0x10), ts_user_frame("main", APP, 0x20) };
	struct frame calc[] = { ts_user_frame("operator<<&\">'", APP, 0x30),
				ts_user_frame("main", APP, 0x20) };
	struct frame bad[] = { ts_user_frame("bad\xff\x01utf8", APP, 0x40),
			       ts_user_frame("main", APP, 0x20) };
	struct frame tiny[] = { ts_user_frame("tiny_leaf", APP, 0x50),
				ts_user_frame("main", APP, 0x20) };
	struct frame cut[] = { ts_user_frame("deep", APP, 0x60) };
	struct frame idle[] = { ts_kernel_frame("default_idle", 0xffffffff81000200ULL) };

	assert_int_equal(profile_add_sample(p, 1, 1, "app", sys, 3, false, 600, 0), 0);
	assert_int_equal(profile_add_sample(p, 2, 2, "app", sys, 3, false, 400, 0), 0);
	assert_int_equal(profile_add_sample(p, 1, 1, "app", calc, 2, false, 500, 0), 0);
	assert_int_equal(profile_add_sample(p, 1, 1, "app", bad, 2, false, 300, 0), 0);
	assert_int_equal(profile_add_sample(p, 3, 3, "db<x>", cut, 1, true, 199, 0), 0);
	/* 1 of 2000 samples: under 0.1% of the width, elided into main. */
	assert_int_equal(profile_add_sample(p, 1, 1, "app", tiny, 2, false, 1, 0), 0);
	/* The idle task: left out by default. */
	assert_int_equal(profile_add_sample(p, 0, 0, "swapper/0", idle, 1, false, 5000, 0), 0);
	profile_set_time(p, 1700000000000000000ULL, 1700000060000000000ULL);
	return p;
}

static char *render(const struct profile *p, const struct flamegraph_options *o, const char *name)
{
	char path[512], cmd[1024];
	char *buf = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&buf, &len);

	assert_non_null(ms);
	assert_int_equal(flamegraph_write_svg(p, ms, o), 0);
	fclose(ms);
	snprintf(path, sizeof(path), "%s/%s", ts_tmpdir, name);
	ts_write_file(path, buf, len);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	assert_int_equal(system(cmd), 0);
	return buf;
}

/* What follows the <title> starting with prefix, from the first `what` on. */
static const char *after_title(const char *svg, const char *prefix, const char *what)
{
	char needle[256];
	const char *t, *found;

	snprintf(needle, sizeof(needle), "<title>%s", prefix);
	t = strstr(svg, needle);
	assert_non_null(t);
	found = strstr(t, what);
	assert_non_null(found);
	return found;
}

/* The fill of the <rect> that follows the <title> starting with prefix. */
static void fill_of(const char *svg, const char *prefix, unsigned int rgb[3])
{
	assert_int_equal(sscanf(after_title(svg, prefix, "fill=\"rgb("), "fill=\"rgb(%u,%u,%u)", &rgb[0],
				&rgb[1], &rgb[2]),
			 3);
}

/* The geometry of the <rect> that follows the <title> starting with prefix. */
static void rect_of(const char *svg, const char *prefix, double *x, double *y, double *w, int *h)
{
	assert_int_equal(sscanf(after_title(svg, prefix, "<rect "),
				"<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%d\"", x, y, w, h),
			 4);
}

static void test_svg(void **state)
{
	struct profile *p = make_profile();
	struct flamegraph_options o = { .title = "CPU <host & co>" };
	unsigned int user[3], kern[3];
	char *svg;

	(void)state;
	svg = render(p, &o, "fg.svg");
	assert_non_null(strstr(svg, "<svg "));
	/* One inline script, nothing fetched: no reference to another resource. */
	assert_non_null(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA["));
	assert_null(strstr(strstr(svg, "<script") + 1, "<script"));
	assert_null(strstr(svg, "href"));
	assert_null(strstr(svg, "src="));
	assert_null(strstr(svg, "fetch("));
	assert_null(strstr(svg, "XMLHttpRequest"));
	assert_null(strstr(svg, "import("));
	/* The script's controls and the frames' classes and counts. */
	assert_non_null(strstr(svg, "id=\"reset\""));
	assert_non_null(strstr(svg, "id=\"search\""));
	assert_non_null(strstr(svg, "id=\"matched\""));
	assert_non_null(strstr(svg, "<g class=\"f r\" data-s=\"2000\"><title>all "));
	assert_non_null(strstr(svg, "<g class=\"f k\" data-s=\"1000\"><title>ksys_write_[k] "));
	assert_non_null(strstr(svg, "<g class=\"f m\" data-s=\"199\"><title>[truncated] "));
	assert_non_null(strstr(svg, "<g class=\"f c\" data-s=\"1801\"><title>app "));
	assert_non_null(strstr(svg, "CPU &lt;host &amp; co&gt;"));
	assert_non_null(strstr(svg, "2000 samples"));
	assert_non_null(strstr(svg, "5000 idle samples not shown"));
	assert_non_null(strstr(svg, "2023-11-14 22:13:20 - 22:14:20 UTC"));
	/* Every frame named with its count; merged across pids by name. */
	assert_non_null(strstr(svg, "<title>all (2000 samples, 100.00%)</title>"));
	assert_non_null(strstr(svg, "<title>app (1801 samples, 90.05%)</title>"));
	assert_non_null(strstr(svg, "<title>main (1801 samples, 90.05%)</title>"));
	assert_non_null(strstr(svg, "<title>write (1000 samples, 50.00%)</title>"));
	assert_non_null(strstr(svg, "<title>ksys_write_[k] (1000 samples, 50.00%)</title>"));
	assert_non_null(strstr(svg, "<title>db&lt;x&gt; (199 samples, 9.95%)</title>"));
	assert_non_null(strstr(svg, "<title>[truncated] (199 samples, 9.95%)</title>"));
	assert_non_null(strstr(svg, "<title>deep (199 samples, 9.95%)</title>"));
	/* Escaping; invalid UTF-8 and control bytes replaced. */
	assert_non_null(strstr(svg, "<title>operator&lt;&lt;&amp;&quot;&gt;&apos; (500 samples, 25.00%)</title>"));
	assert_non_null(strstr(svg, "<title>bad??utf8 (300 samples, 15.00%)</title>"));
	/* Elided and idle frames are not drawn. */
	assert_null(strstr(svg, "tiny_leaf"));
	assert_null(strstr(svg, "default_idle"));
	assert_null(strstr(svg, "swapper"));
	/* The truncated marker sits right above comm, root side. */
	assert_true(strstr(svg, "<title>[truncated]") < strstr(svg, "<title>deep"));
	/* Warm user frames, blue kernel frames. */
	fill_of(svg, "write ", user);
	fill_of(svg, "ksys_write_[k]", kern);
	assert_true(user[0] > user[2]);
	assert_true(kern[2] > kern[0]);
	assert_true(user[0] != kern[0] || user[2] != kern[2]);
	{
		unsigned int mark[3];

		/* lowprof's markers: green, apart from both. */
		fill_of(svg, "[truncated]", mark);
		assert_true(mark[1] > mark[0] && mark[1] > mark[2]);
	}
	/* The layout, to a tenth of a pixel: the root spans the width but its
	 * pads (1200 - 2 x 10), each frame its share of it, siblings in name
	 * order from the parent's left edge, each level a frame higher. */
	{
		double x, y, w, ax, ay, aw, dx, dy, dw;
		int h;

		rect_of(svg, "all ", &x, &y, &w, &h);
		assert_int_equal(h, 15);
		assert_true(x == 10.0 && w == 1180.0);
		rect_of(svg, "app ", &ax, &ay, &aw, &h);
		rect_of(svg, "db&lt;x&gt; ", &dx, &dy, &dw, &h);
		assert_true(ax == 10.0 && aw == 1062.6); /* 1801 of 2000 samples */
		assert_true(dx == 1072.6 && dw == 117.4); /* 199, after app */
		assert_true(ay == y - 16 && dy == ay);
		assert_non_null(strstr(svg, "<text x=\"13.0\" y=\""));
	}
	/* Stable: the same name always gets the same colour. */
	{
		char *again = render(p, &o, "fg2.svg");

		assert_string_equal(svg, again);
		free(again);
	}
	free(svg);
	profile_free(p);
}

static void test_svg_options(void **state)
{
	struct profile *p = make_profile();
	struct flamegraph_options o = { .subtitle = "sub", .include_idle = true, .width = 800,
					.min_width_pct = 0.01 };
	char *svg;

	(void)state;
	svg = render(p, &o, "idle.svg");
	assert_non_null(strstr(svg, "width=\"800\""));
	assert_non_null(strstr(svg, ">sub</text>"));
	assert_non_null(strstr(svg, "<title>default_idle_[k] (5000 samples, 71.43%)</title>"));
	/* 1 of 7000 samples is over 0.01%: drawn now. */
	assert_non_null(strstr(svg, "<title>tiny_leaf (1 samples, 0.01%)</title>"));
	free(svg);
	profile_free(p);

	/* An empty profile still gives a valid document. */
	p = profile_new();
	svg = render(p, NULL, "empty.svg");
	assert_non_null(strstr(svg, "0 samples"));
	free(svg);
	profile_free(p);
}

static void count_call(void *arg)
{
	(*(unsigned *)arg)++;
}

/* Built in pieces: the hook is called as the stacks are merged into the tree
 * (a paced writer pauses there), and the file is the same as without it. */
static void test_built_in_pieces(void **state)
{
	enum { STACKS = 3000 };
	struct profile *p = profile_new();
	struct flamegraph_options o = { .subtitle = "pieces" };
	struct frame f[3];
	char leaf[32], mid[32];
	unsigned calls = 0, k;
	char *plain, *paced;

	(void)state;
	for (k = 0; k < STACKS; k++) {
		snprintf(leaf, sizeof(leaf), "leaf_%u", k);
		snprintf(mid, sizeof(mid), "mid_%u", k % 37);
		f[0] = ts_user_frame(leaf, APP, 0x1000 + k);
		f[1] = ts_user_frame(mid, APP, 0x100 + k % 37);
		f[2] = ts_user_frame("main", APP, 0x10);
		assert_int_equal(profile_add_sample(p, 1 + k % 5, 1 + k % 5, "app", f, 3, false,
						    1 + k % 3, 0), 0);
	}
	assert_true(profile_stack_count(p) >= STACKS);
	plain = render(p, &o, "plain.svg");
	o.progress = count_call;
	o.progress_arg = &calls;
	paced = render(p, &o, "paced.svg");
	assert_true(calls >= profile_stack_count(p) / FLAMEGRAPH_PROGRESS_STACKS);
	assert_string_equal(plain, paced);
	assert_non_null(strstr(paced, "<title>mid_0 ("));
	free(plain);
	free(paced);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_svg_options),
		cmocka_unit_test(test_built_in_pieces),
	};

	return cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
}
