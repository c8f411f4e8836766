/*
 * intern_: indices in the order first added, one copy per distinct key
 * (binary keys and the empty key included), copies that keep their address
 * while the table grows, lookups that add nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/intern.h"

static void test_dedup_and_order(void **state)
{
	struct intern t = { 0 };
	uint32_t a, b, c, d, e;

	(void)state;
	assert_int_equal(intern_add(&t, "", 0, &a), 0);
	assert_int_equal(intern_add(&t, "main", 4, &b), 0);
	assert_int_equal(intern_add(&t, "mainly", 4, &c), 0); /* the first 4 bytes: "main" */
	assert_int_equal(intern_add(&t, "a\0b", 3, &d), 0);
	assert_int_equal(intern_add(&t, "a\0c", 3, &e), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(c, 1);
	assert_int_equal(d, 2);
	assert_int_equal(e, 3);
	assert_int_equal(t.n, 4);
	assert_string_equal(intern_str(&t, 1), "main");
	assert_int_equal(t.lens[2], 3);
	assert_memory_equal(intern_str(&t, 3), "a\0c", 4); /* NUL-terminated copy */
	assert_int_equal(t.bytes, 1 + 5 + 4 + 4);
	intern_free(&t);
	assert_int_equal(t.n, 0);
	assert_null(t.keys);
}

static void test_growth_keeps_copies(void **state)
{
	struct intern t = { 0 };
	const char *first;
	char key[32];
	uint32_t idx, i;

	(void)state;
	assert_int_equal(intern_add(&t, "first", 5, &idx), 0);
	first = intern_str(&t, idx);
	for (i = 1; i < 20000; i++) {
		snprintf(key, sizeof(key), "key-%u", i);
		assert_int_equal(intern_add(&t, key, strlen(key), &idx), 0);
		assert_int_equal(idx, i);
	}
	assert_ptr_equal(intern_str(&t, 0), first);
	for (i = 1; i < 20000; i += 997) {
		snprintf(key, sizeof(key), "key-%u", i);
		assert_true(intern_find(&t, key, strlen(key), &idx));
		assert_int_equal(idx, i);
		assert_int_equal(intern_add(&t, key, strlen(key), &idx), 0);
		assert_int_equal(idx, i);
	}
	assert_int_equal(t.n, 20000);
	assert_true(t.nslots * 3 >= t.n * 4);
	assert_true(intern_memory(&t) > t.bytes);
	intern_free(&t);
}

static void test_find_adds_nothing(void **state)
{
	struct intern t = { 0 };
	uint32_t idx = 77;

	(void)state;
	assert_false(intern_find(&t, "x", 1, &idx));
	assert_int_equal(intern_add(&t, "x", 1, &idx), 0);
	assert_false(intern_find(&t, "y", 1, &idx));
	assert_int_equal(idx, 0);
	assert_int_equal(t.n, 1);
	intern_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedup_and_order),
		cmocka_unit_test(test_growth_keeps_copies),
		cmocka_unit_test(test_find_adds_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
