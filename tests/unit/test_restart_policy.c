/* The supervisor's restart policy as traces of deaths and readiness. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "supervisor/restart_policy.h"

static struct restart_settings set;

static int setup(void **state)
{
	restart_settings_default(&set);
	return 0;
}

static void test_backoff_doubles_to_cap(void **state)
{
	static const int64_t want[] = {200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000};
	struct restart_state st;
	int64_t now = 0;
	size_t i;

	set.crash_limit = 60; /* not what this test is about */
	restart_state_init(&st, &set);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(restart_policy_died(&st, &set, now, false), RESTART_AFTER_DELAY);
		assert_int_equal(st.restart_at_ms - now, want[i]);
		now = st.restart_at_ms + 10;
	}
	assert_int_equal(restart_policy_died(&st, &set, now, false), RESTART_AFTER_DELAY);
	assert_int_equal(st.restart_at_ms - now, 30000);
	assert_int_equal(st.total_restarts, 10);
}

static void test_reset_after_stable_run(void **state)
{
	struct restart_state st;

	restart_state_init(&st, &set);
	restart_policy_died(&st, &set, 0, false);
	restart_policy_died(&st, &set, 1000, false);
	restart_policy_died(&st, &set, 3000, false);
	assert_int_equal(st.restart_at_ms - 3000, 800);
	/* Ready for 59 s: not yet stable, the backoff keeps growing. */
	restart_policy_ready(&st, 4000);
	restart_policy_died(&st, &set, 63000, false);
	assert_int_equal(st.restart_at_ms - 63000, 1600);
	/* Ready for 60 s: back to the floor. */
	restart_policy_ready(&st, 70000);
	restart_policy_died(&st, &set, 130000, false);
	assert_int_equal(st.restart_at_ms - 130000, 200);
}

static void test_crash_loop_fails(void **state)
{
	struct restart_state st;
	int64_t now = 0;
	int i;

	restart_state_init(&st, &set);
	for (i = 0; i < 10; i++) {
		assert_int_equal(restart_policy_died(&st, &set, now, false), RESTART_AFTER_DELAY);
		now += 1000;
	}
	/* The 11th death within 5 minutes: more than the 10 tolerated. */
	assert_int_equal(restart_policy_died(&st, &set, now, false), RESTART_FAILED);
	assert_true(st.failed);
	/* `lowprof restart` clears it, and keeps the tally of restarts. */
	restart_policy_reset(&st, &set);
	assert_false(st.failed);
	assert_int_equal(st.total_restarts, 10);
	assert_int_equal(restart_policy_died(&st, &set, now + 1, false), RESTART_AFTER_DELAY);
	assert_int_equal(st.restart_at_ms - (now + 1), 200);
}

static void test_deaths_spread_out_never_fail(void **state)
{
	struct restart_state st;
	int64_t now = 0;
	int i;

	restart_state_init(&st, &set);
	/* One death every 40 s: never 10 within 5 minutes. */
	for (i = 0; i < 50; i++) {
		assert_int_equal(restart_policy_died(&st, &set, now, false), RESTART_AFTER_DELAY);
		now += 40000;
	}
	assert_false(st.failed);
}

static void test_permanent_exit_fails_at_once(void **state)
{
	struct restart_state st;

	restart_state_init(&st, &set);
	assert_int_equal(restart_policy_died(&st, &set, 5, true), RESTART_FAILED);
	assert_true(st.failed);
	assert_int_equal(st.total_restarts, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_backoff_doubles_to_cap, setup),
		cmocka_unit_test_setup(test_reset_after_stable_run, setup),
		cmocka_unit_test_setup(test_crash_loop_fails, setup),
		cmocka_unit_test_setup(test_deaths_spread_out_never_fail, setup),
		cmocka_unit_test_setup(test_permanent_exit_fails_at_once, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
