/* Folded-stack encoder: exact lines for a small profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exporter/folded_writer.h"
#include "exporter/profile.h"

static struct frame uf(const char *fn, const char *mod, uint64_t off)
{
	struct frame f = { .function = fn, .module = mod, .address = 0x400000 + off,
			   .module_offset = off, .map_start = 0x400000, .map_end = 0x500000,
			   .symbolized = true };
	return f;
}

static struct frame kf(const char *fn, uint64_t addr)
{
	struct frame f = { .function = fn, .module = "[kernel.kallsyms]", .address = addr,
			   .kernel = true, .symbolized = true };
	return f;
}

static char *folded(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&buf, &len);

	assert_non_null(ms);
	assert_int_equal(folded_write(p, ms), 0);
	fclose(ms);
	return buf;
}

static void test_lines(void **state)
{
	struct profile *p = profile_new();
	/* Leaf first, as sampled: kernel frames, then user frames. */
	struct frame sys[] = { kf("do_syscall_64", 0xffffffff81000100ULL),
			       uf("write", "/lib/libc.so.6", 0x10), uf("main", "/bin/app", 0x20) };
	struct frame cut[] = { uf("work", "/bin/app", 0x30), uf("loop", "/bin/app", 0x40) };
	struct frame odd[] = { uf("a;b c\nd\x01" "e", "/bin/my prog", 0x50) };
	/* Same name, different module: one line in folded output. */
	struct frame f1[] = { uf("f", "/bin/one", 0x60) };
	struct frame f2[] = { uf("f", "/bin/two", 0x70) };
	char *text;

	(void)state;
	assert_int_equal(profile_add_sample(p, 1, 1, "app", sys, 3, false, 3, 0), 0);
	assert_int_equal(profile_add_sample(p, 2, 2, "app", sys, 3, false, 2, 0), 0); /* other pid */
	assert_int_equal(profile_add_sample(p, 1, 3, "app", cut, 2, true, 1, 0), 0);
	assert_int_equal(profile_add_sample(p, 5, 5, "my prog", odd, 1, false, 2, 0), 0);
	assert_int_equal(profile_add_sample(p, 6, 6, "", f1, 1, false, 1, 0), 0);
	assert_int_equal(profile_add_sample(p, 7, 7, "", f2, 1, false, 4, 0), 0);
	assert_int_equal(profile_add_sample(p, 8, 8, "idle", NULL, 0, false, 9, 0), 0);
	text = folded(p);
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
	struct frame ab[] = { uf("b", "/x", 1), uf("a", "/x", 2) };
	struct frame a[] = { uf("a", "/x", 2) };
	struct frame a_b[] = { uf("a!", "/x", 3) };
	char *text;

	(void)state;
	/* "x;a" < "x;a!" < "x;a;b" bytewise, as LC_ALL=C sort orders the lines. */
	assert_int_equal(profile_add_sample(p, 1, 1, "x", ab, 2, false, 1, 0), 0);
	assert_int_equal(profile_add_sample(p, 1, 1, "x", a_b, 1, false, 1, 0), 0);
	assert_int_equal(profile_add_sample(p, 1, 1, "x", a, 1, false, 1, 0), 0);
	text = folded(p);
	assert_string_equal(text, "x;a 1\nx;a! 1\nx;a;b 1\n");
	free(text);
	profile_free(p);

	p = profile_new();
	text = folded(p);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_sorting_prefixes),
		cmocka_unit_test(test_sanitise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
