/* exporter/timeline: overhead figures and the JSON of the throttle's intervals. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/profile/timeline.h"

static struct lowprof_timeline_entry entry(uint64_t end_s, uint64_t bpf_ns, uint64_t agent_ns)
{
	struct lowprof_timeline_entry e;

	memset(&e, 0, sizeof(e));
	e.version = LOWPROF_TIMELINE_VERSION;
	e.flags = LOWPROF_TIMELINE_HOST_VALID;
	e.monotonic_ns = 1000000000ULL * (100 + end_s);
	e.interval_ns = 1000000000ULL;
	e.tier = 2;
	e.frequency_hz = 5;
	e.unwind = LOWPROF_UNWIND_FP;
	e.max_depth = 32;
	e.sample_divisor = 4;
	e.online_cpus = 2;
	e.host_cpu_centipct = 9512;
	e.cpu_budget_centipct = 150;
	e.events = 10;
	e.submitted = 90;
	e.reserve_failures = 10;
	e.bpf_run_time_ns = bpf_ns;
	e.agent_cpu_ns = agent_ns;
	return e;
}

static void test_empty(void **state)
{
	struct timeline *tl = timeline_new(8);
	char *o, *t;

	(void)state;
	o = timeline_overhead_json(tl);
	t = timeline_entries_json(tl, 0);
	assert_string_equal(o, "null");
	assert_string_equal(t, "[]");
	free(o);
	free(t);
	timeline_free(tl);
}

static void test_overhead_and_entries(void **state)
{
	struct timeline *tl = timeline_new(8);
	struct lowprof_timeline_entry a = entry(1, 2000000, 8000000);  /* 10 ms of 2 s: 0.5% */
	struct lowprof_timeline_entry b = entry(2, 1000000, 19000000); /* 20 ms of 2 s: 1.0% */
	char *o, *t;

	(void)state;
	assert_int_equal(timeline_add(tl, &a), 0);
	assert_int_equal(timeline_add(tl, &b), 0);
	o = timeline_overhead_json(tl);
	assert_non_null(strstr(o, "\"budget_pct\": 1.50"));
	assert_non_null(strstr(o, "\"max_pct\": 1.0000"));
	assert_non_null(strstr(o, "\"mean_pct\": 0.7500"));
	/* 3 ms of BPF time over 20 runs. */
	assert_non_null(strstr(o, "\"bpf_ns_per_sample\": 150000.0"));
	t = timeline_entries_json(tl, 100000000000ULL);
	assert_non_null(strstr(t, "{\"t\": 1.000, \"tier\": \"critical\", \"frequency_hz\": 5, "
				  "\"unwind\": \"fp\", \"max_depth\": 32, \"sample_divisor\": 4, "
				  "\"paused\": false, \"host_cpu_pct\": 95.12, \"drop_pct\": 10.00, "
				  "\"overhead_pct\": 0.5000"));
	assert_non_null(strstr(t, "\"t\": 2.000"));
	free(o);
	free(t);
	timeline_free(tl);
}

/* With --off-cpu an entry says the probability, the link and the switch
 * program's share; without it (probability 0) the entry is as before. */
static void test_offcpu_fields(void **state)
{
	struct timeline *tl = timeline_new(8);
	struct lowprof_timeline_entry a = entry(1, 2000000, 0), b = entry(2, 2000000, 0);
	char *t;

	(void)state;
	b.offcpu_prob_ppm = 62500;
	b.offcpu_attached = 1;
	b.offcpu_run_time_ns = 1000000; /* 1 ms of 2 s: 0.05% */
	b.offcpu_records = 17;
	assert_int_equal(timeline_add(tl, &a), 0);
	assert_int_equal(timeline_add(tl, &b), 0);
	t = timeline_entries_json(tl, 0);
	assert_non_null(strstr(t, "\"startup_cpu_ns\": 0}"));
	assert_non_null(strstr(t, "\"startup_cpu_ns\": 0, \"offcpu_probability_pct\": 6.2500, "
				  "\"offcpu_attached\": true, \"offcpu_bpf_pct\": 0.0500, \"offcpu_records\": 17}"));
	free(t);
	timeline_free(tl);
}

static void test_bounded(void **state)
{
	struct timeline *tl = timeline_new(3);
	struct lowprof_timeline_entry e;
	char *t;
	int i;

	(void)state;
	for (i = 1; i <= 5; i++) {
		e = entry((uint64_t)i, 0, (uint64_t)i * 1000000);
		assert_int_equal(timeline_add(tl, &e), 0);
	}
	assert_int_equal(timeline_count(tl), 3);
	t = timeline_entries_json(tl, 100000000000ULL);
	/* The newest three, oldest first. */
	assert_null(strstr(t, "\"t\": 2.000"));
	assert_true(strstr(t, "\"t\": 3.000") < strstr(t, "\"t\": 5.000"));
	free(t);
	timeline_free(tl);
}

static void test_decode_refuses(void **state)
{
	struct lowprof_timeline_entry e = entry(1, 0, 0), out;

	(void)state;
	assert_int_equal(timeline_entry_decode(&e, sizeof(e), &out), 0);
	assert_int_equal(timeline_entry_decode(&e, sizeof(e) - 1, &out), -EINVAL);
	e.tier = 3;
	assert_int_equal(timeline_entry_decode(&e, sizeof(e), &out), -EINVAL);
	e = entry(1, 0, 0);
	e.host_cpu_centipct = 10001;
	assert_int_equal(timeline_entry_decode(&e, sizeof(e), &out), -EINVAL);
	e = entry(1, 0, 0);
	e.flags |= 1u << 7;
	assert_int_equal(timeline_entry_decode(&e, sizeof(e), &out), -EINVAL);
	e = entry(1, 0, 0);
	e.online_cpus = 0;
	assert_int_equal(timeline_entry_decode(&e, sizeof(e), &out), -EINVAL);
	e = entry(1, 0, 0);
	e.offcpu_prob_ppm = 1000001;
	assert_int_equal(timeline_entry_decode(&e, sizeof(e), &out), -EINVAL);
	e = entry(1, 0, 0);
	e.offcpu_attached = 2;
	assert_int_equal(timeline_entry_decode(&e, sizeof(e), &out), -EINVAL);
}

/* The flame graph's title: the share of the time below -F and the lowest rate. */
static void test_sampling(void **state)
{
	struct timeline *tl = timeline_new(8);
	struct lowprof_timeline_entry e = entry(1, 0, 0);
	struct timeline_sampling s;

	assert_int_equal(timeline_sampling(tl, 19, &s), -ENOENT);
	e.frequency_hz = 19;
	e.sample_divisor = 1;
	assert_int_equal(timeline_add(tl, &e), 0);
	assert_int_equal(timeline_add(tl, &e), 0);
	assert_int_equal(timeline_add(tl, &e), 0);
	e.frequency_hz = 11;
	assert_int_equal(timeline_add(tl, &e), 0);
	e.frequency_hz = 10;
	e.sample_divisor = 2; /* 5 Hz in effect */
	assert_int_equal(timeline_add(tl, &e), 0);
	assert_int_equal(timeline_sampling(tl, 19, &s), 0);
	assert_true(s.throttled_fraction > 0.399 && s.throttled_fraction < 0.401);
	assert_int_equal(s.lowest_hz, 5);
	e.paused = 1;
	assert_int_equal(timeline_add(tl, &e), 0);
	assert_int_equal(timeline_sampling(tl, 19, &s), 0);
	assert_int_equal(s.lowest_hz, 0);
	timeline_free(tl);
}

/* The array of a timeline rendered write after write (each entry once,
 * kept while held), as entries come, leave at the bound and leave by
 * trimming, is the array a timeline never rendered before gives for the
 * same entries; a new origin renders every t again. */
static void test_rendered_once(void **state)
{
	struct timeline *tl = timeline_new(8), *fresh;
	struct lowprof_timeline_entry e;
	char *a, *b;
	uint64_t i, k;

	(void)state;
	assert_non_null(tl);
	for (i = 1; i <= 30; i++) {
		e = entry(i, 1000 * i, 7 * i);
		e.tier = (uint32_t)(i % 3);
		assert_int_equal(timeline_add(tl, &e), 0);
		if (i == 20)
			timeline_trim(tl, 1000000000ULL * (100 + 17));
		if (i % 3 != 0)
			continue;
		a = timeline_entries_json(tl, 1000000000ULL * 100);
		/* The same entries into a timeline never rendered. */
		fresh = timeline_new(8);
		assert_non_null(fresh);
		for (k = i - timeline_count(tl) + 1; k <= i; k++) {
			e = entry(k, 1000 * k, 7 * k);
			e.tier = (uint32_t)(k % 3);
			assert_int_equal(timeline_add(fresh, &e), 0);
		}
		b = timeline_entries_json(fresh, 1000000000ULL * 100);
		assert_non_null(a);
		assert_non_null(b);
		assert_string_equal(a, b);
		free(a);
		free(b);
		timeline_free(fresh);
	}
	/* t counted from another origin: from 0, so 100 s more each. */
	a = timeline_entries_json(tl, 0);
	assert_non_null(strstr(a, "{\"t\": 130.000"));
	assert_null(strstr(a, "{\"t\": 30.000"));
	free(a);
	a = timeline_entries_json(tl, 1000000000ULL * 100);
	assert_non_null(strstr(a, "{\"t\": 30.000"));
	free(a);
	timeline_free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_overhead_and_entries),
		cmocka_unit_test(test_offcpu_fields),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_decode_refuses),
		cmocka_unit_test(test_sampling),
		cmocka_unit_test(test_rendered_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
