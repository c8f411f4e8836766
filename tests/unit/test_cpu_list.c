/* The kernel's CPU list format, as in /sys/devices/system/cpu/online. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <cmocka.h>

#include "loader/cpu_list.h"

static bool online[CPU_LIST_MAX];

static void test_ranges_and_singles(void **state)
{
	assert_int_equal(cpu_list_parse("0-3,5,7-8\n", online), 7);
	assert_true(online[0] && online[3] && online[5] && online[7] && online[8]);
	assert_false(online[4] || online[6] || online[9]);
	assert_int_equal(cpu_list_parse("0\n", online), 1);
	assert_int_equal(cpu_list_parse("2", online), 1);
	assert_false(online[0]);
	assert_true(online[2]);
}

static void test_malformed(void **state)
{
	assert_int_equal(cpu_list_parse("", online), -1);
	assert_int_equal(cpu_list_parse("3-1", online), -1);
	assert_int_equal(cpu_list_parse("0-", online), -1);
	assert_int_equal(cpu_list_parse("a", online), -1);
	assert_int_equal(cpu_list_parse("0,,1", online), -1);
	assert_int_equal(cpu_list_parse("0-99999", online), -1);
	assert_int_equal(cpu_list_parse("0 1", online), -1);
}

static void test_real_file(void **state)
{
	int n = cpu_list_read_online("/sys/devices/system/cpu/online", online);

	assert_true(n >= 1);
	assert_true(online[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges_and_singles),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_real_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
