/* Folded-stack encoder: exact lines for a small profile. */
#include <setjmp.h>
#include <stdarg.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_sorting_prefixes),
		cmocka_unit_test(test_sanitise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
