/* Folded-stack encoder: exact lines for a small profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exporter/formats/folded_writer.h"
#include "exporter/profile/profile.h"
#include "test_support.h"

static void test_lines(void **state)
{
	struct profile *p = profile_new();
	/* Leaf first, as sampled: kernel frames, then user frames. */
	struct frame sys[] = { ts_kernel_frame("do_syscall_64", 0xffffffff81000100ULL),
			       ts_user_frame("write", "/lib/libc.so.6", 0x10),
			       ts_user_frame("main", "/bin/app", 0x20) };
	struct frame cut[] = { ts_user_frame("work", "/bin/app", 0x30),
			       ts_user_frame("loop", "/bin/app", 0x40) };
	struct frame odd[] = { ts_user_frame("a;b c\nd\x01" "e", "/bin/my prog", 0x50) };
	/* Same name, different module: one line in folded output. */
	struct frame f1[] = { ts_user_frame("f", "/bin/one", 0x60) };
	struct frame f2[] = { ts_user_frame("f", "/bin/two", 0x70) };
	char *text;

	(void)state;
	assert_int_equal(profile_add_sample(p, 1, 1, "app", sys, 3, false, 3, 0), 0);
	assert_int_equal(profile_add_sample(p, 2, 2, "app", sys, 3, false, 2, 0), 0); /* other pid */
	assert_int_equal(profile_add_sample(p, 1, 3, "app", cut, 2, true, 1, 0), 0);
	assert_int_equal(profile_add_sample(p, 5, 5, "my prog", odd, 1, false, 2, 0), 0);
	assert_int_equal(profile_add_sample(p, 6, 6, "", f1, 1, false, 1, 0), 0);
	assert_int_equal(profile_add_sample(p, 7, 7, "", f2, 1, false, 4, 0), 0);
	assert_int_equal(profile_add_sample(p, 8, 8, "idle", NULL, 0, false, 9, 0), 0);
	text = ts_folded_text(p);
	assert_string_equal(text,
			    "[unknown];f 5\n"
			    "app;[truncated];loop;work 1\n"
			    "app;main;write;do_syscall_64_[k] 5\n"
			    "idle 9\n"
			    "my_prog;a:b_c_d?e 2\n");
	free(text);
	profile_free(p);
}

static void test_sorting_prefixes(void **state)
{
	struct profile *p = profile_new();
	struct frame ab[] = { ts_user_frame("b", "/x", 1), ts_user_frame("a", "/x", 2) };
	struct frame a[] = { ts_user_frame("a", "/x", 2) };
	struct frame a_b[] = { ts_user_frame("a!", "/x", 3) };
	char *text;

	(void)state;
	/* "x;a" < "x;a!" < "x;a;b" bytewise, as LC_ALL=C sort orders the lines. */
	assert_int_equal(profile_add_sample(p, 1, 1, "x", ab, 2, false, 1, 0), 0);
	assert_int_equal(profile_add_sample(p, 1, 1, "x", a_b, 1, false, 1, 0), 0);
	assert_int_equal(profile_add_sample(p, 1, 1, "x", a, 1, false, 1, 0), 0);
	text = ts_folded_text(p);
	assert_string_equal(text, "x;a 1\nx;a! 1\nx;a;b 1\n");
	free(text);
	profile_free(p);

	p = profile_new();
	text = ts_folded_text(p);
	assert_string_equal(text, "");
	free(text);
	profile_free(p);
}

static void test_sanitise(void **state)
{
	(void)state;
	assert_int_equal(folded_sanitise_char(';'), ':');
	assert_int_equal(folded_sanitise_char(' '), '_');
	assert_int_equal(folded_sanitise_char('\n'), '_');
	assert_int_equal(folded_sanitise_char('\t'), '_');
	assert_int_equal(folded_sanitise_char(0x7f), '?');
	assert_int_equal(folded_sanitise_char(0xc3), 0xc3);
	assert_int_equal(folded_sanitise_char('x'), 'x');
}

static void count_call(void *arg)
{
	(*(unsigned *)arg)++;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * More stacks than one sorted run holds (the sort goes in runs, then merges
 * them, calling the progress hook between pieces): every line once, in
 * bytewise order (as `LC_ALL=C sort`), stacks of other pids with the same
 * text merged into one line with their counts added, and the hook called
 * at least once per run.
 */
static void test_paced_sort(void **state)
{
	enum { NAMES = 1500, PIDS = 3 };
	struct profile *p = profile_new();
	struct frame f[2];
	char leaf[32], *mem = NULL, **lines, *line, *save = NULL, *plain;
	size_t memlen = 0, n = 0, i;
	unsigned calls = 0, k, pid;
	uint64_t total = 0;
	FILE *ms;

	(void)state;
	for (k = 0; k < NAMES; k++) {
		/* A spread of texts, not in their sorted order. */
		snprintf(leaf, sizeof(leaf), "fn_%u", (k * 7919u) % NAMES);
		f[0] = ts_user_frame(leaf, "/bin/app", 0x1000 + k);
		f[1] = ts_user_frame("main", "/bin/app", 0x10);
		for (pid = 1; pid <= PIDS; pid++)
			assert_int_equal(profile_add_sample(p, pid, pid, "app", f, 2, false, pid, 0), 0);
	}
	assert_true(profile_stack_count(p) > 1024);
	ms = open_memstream(&mem, &memlen);
	assert_non_null(ms);
	assert_int_equal(folded_write_paced(p, ms, count_call, &calls), 0);
	fclose(ms);
	assert_true(calls >= profile_stack_count(p) / 256);
	lines = calloc(NAMES + 1, sizeof(*lines));
	for (line = strtok_r(mem, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		assert_true(n < NAMES);
		lines[n++] = line;
		total += strtoull(strrchr(line, ' ') + 1, NULL, 10);
		/* 1 + 2 + 3: the three pids' counts on one line. */
		assert_int_equal(strtoull(strrchr(line, ' ') + 1, NULL, 10), 6);
	}
	assert_int_equal(n, NAMES);
	assert_int_equal(total, (uint64_t)NAMES * 6);
	for (i = 1; i < n; i++)
		assert_true(cmp_line(&lines[i - 1], &lines[i]) < 0);
	free(lines);
	free(mem);

	/* The same file as without the hook (folded_write). */
	mem = NULL;
	ms = open_memstream(&mem, &memlen);
	assert_int_equal(folded_write_paced(p, ms, count_call, &calls), 0);
	fclose(ms);
	plain = ts_folded_text(p);
	assert_string_equal(plain, mem);
	free(plain);
	free(mem);
	profile_free(p);
}

/*
 * The lines' order against a plain reference: random stacks over names that
 * are prefixes of one another, sort below and above ';' and ' ' (".", "!",
 * "0", ":", "~"), and give the same text in different ways (a ';' and a ':'
 * sanitise alike; a user function named "f_[k]" and the kernel's "f"; an
 * empty comm and one named "[unknown]"). Each line's text is built here
 * from the frames as the header describes it, counts summed per text, and
 * the lines sorted with strcmp: the writer's file must be exactly that.
 */
#define REF_SAMPLES 3000
#define REF_DEPTH 6

struct ref_line {
	char text[256];
	uint64_t count;
};

static int cmp_ref(const void *a, const void *b)
{
	return strcmp(((const struct ref_line *)a)->text, ((const struct ref_line *)b)->text);
}

static void ref_append(char *text, const char *name, const char *suffix, bool first)
{
	size_t n = strlen(text);

	if (!first)
		text[n++] = ';';
	for (; *name; name++)
		text[n++] = (char)folded_sanitise_char((unsigned char)*name);
	text[n] = '\0';
	strcat(text, suffix);
}

static void test_order_matches_reference(void **state)
{
	static const char *names[] = { "f", "f_[k]", "f.", "f!", "f0", "f:g", "f;g", "f g", "f_g",
				       "fa", "f~", "g", "[truncated]", "a\tb" };
	static const char *comms[] = { "", "[unknown]", "app", "app!", "app;x", "app:x", "ap" };
	enum { NNAMES = sizeof(names) / sizeof(names[0]), NCOMMS = sizeof(comms) / sizeof(comms[0]) };
	struct profile *p = profile_new();
	struct ref_line *ref = calloc(REF_SAMPLES, sizeof(*ref));
	size_t nref = 0, i, len = 0;
	unsigned seed = 12345;
	char *got, *want = NULL;
	FILE *ms;

	(void)state;
	assert_non_null(ref);
	for (i = 0; i < REF_SAMPLES; i++) {
		struct frame f[REF_DEPTH];
		char text[256] = "";
		unsigned depth = 1 + (unsigned)(rand_r(&seed) % REF_DEPTH), d;
		bool truncated = rand_r(&seed) % 7 == 0;
		const char *comm = comms[rand_r(&seed) % NCOMMS];
		uint64_t count = 1 + (uint64_t)(rand_r(&seed) % 5);
		size_t r;

		for (d = 0; d < depth; d++) {
			const char *name = names[rand_r(&seed) % NNAMES];

			/* Kernel frames leafmost, as sampled. */
			f[d] = d == 0 && rand_r(&seed) % 3 == 0
				       ? ts_kernel_frame(name, 0xffffffff81000000ULL + d)
				       : ts_user_frame(name, "/bin/app", 0x100 + 0x10 * d);
		}
		assert_int_equal(profile_add_sample(p, 1 + (uint32_t)(i % 3), 1, comm, f, depth,
						    truncated, count, 0), 0);
		ref_append(text, comm[0] ? comm : "[unknown]", "", true);
		if (truncated)
			ref_append(text, "[truncated]", "", false);
		for (d = depth; d-- > 0;)
			ref_append(text, f[d].function,
				   f[d].kernel ? FOLDED_KERNEL_SUFFIX : "", false);
		for (r = 0; r < nref && strcmp(ref[r].text, text) != 0; r++)
			;
		if (r == nref)
			snprintf(ref[nref++].text, sizeof(ref[0].text), "%s", text);
		ref[r].count += count;
	}
	qsort(ref, nref, sizeof(*ref), cmp_ref);
	ms = open_memstream(&want, &len);
	assert_non_null(ms);
	for (i = 0; i < nref; i++)
		fprintf(ms, "%s %llu\n", ref[i].text, (unsigned long long)ref[i].count);
	fclose(ms);
	got = ts_folded_text(p);
	/* Many stacks, fewer lines: texts given in several ways were merged. */
	assert_true(profile_stack_count(p) > nref);
	assert_true(profile_stack_count(p) > 256); /* sorted in runs, then merged */
	assert_string_equal(got, want);
	free(got);
	free(want);
	free(ref);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_sorting_prefixes),
		cmocka_unit_test(test_sanitise),
		cmocka_unit_test(test_paced_sort),
		cmocka_unit_test(test_order_matches_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
