/* Sample and statistics records from the shared ring are untrusted bytes:
 * only exactly well-formed ones are accepted. */
#include <errno.h>
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ipc/loader_stats.h"
#include "ipc/sample_record.h"

static uint64_t buf[LOWPROF_SAMPLE_MAX_SIZE / 8 + 8];

static size_t make_sample(unsigned kdepth, unsigned udepth)
{
	struct lowprof_sample *s = (struct lowprof_sample *)buf;
	unsigned i;

	memset(buf, 0, sizeof(buf));
	s->pid = 42;
	s->tid = 43;
	s->kernel_depth = kdepth;
	s->user_depth = udepth;
	memcpy(s->comm, "0123456789abcdef", 16); /* no NUL: decode must terminate it */
	for (i = 0; i < kdepth + udepth; i++)
		s->frames[i] = 0x1000 + i;
	return LOWPROF_SAMPLE_HEADER_SIZE + (kdepth + udepth) * 8;
}

static void test_accepts_well_formed(void **state)
{
	struct sample_view v;
	char err[128];
	size_t len = make_sample(3, 5);

	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), 0);
	assert_int_equal(v.hdr->pid, 42);
	assert_int_equal(v.kernel_frames[0], 0x1000);
	assert_int_equal(v.user_frames[0], 0x1003);
	assert_int_equal(v.user_frames[4], 0x1007);
	assert_string_equal(v.comm, "0123456789abcdef");
	len = make_sample(LOWPROF_MAX_KERNEL_DEPTH, LOWPROF_MAX_USER_DEPTH);
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), 0);
}

static void test_refuses_malformed(void **state)
{
	struct lowprof_sample *s = (struct lowprof_sample *)buf;
	struct sample_view v;
	char err[128];
	size_t len;

	assert_int_equal(sample_record_decode(buf, 10, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "shorter than its header"));
	len = make_sample(3, 5);
	assert_int_equal(sample_record_decode(buf, len - 8, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(sample_record_decode(buf, len + 8, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "does not match"));
	s->user_depth = LOWPROF_MAX_USER_DEPTH + 1;
	assert_int_equal(sample_record_decode(buf, sizeof(buf), &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range"));
	len = make_sample(1, 1);
	s->flags = 0x80000000u;
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown flags"));
}

static void test_loader_stats(void **state)
{
	struct lowprof_loader_stats in, out;

	memset(&in, 0, sizeof(in));
	in.version = LOWPROF_LOADER_STATS_VERSION;
	in.submitted = 7;
	assert_int_equal(loader_stats_decode(&in, sizeof(in), &out), 0);
	assert_int_equal(out.submitted, 7);
	assert_int_equal(loader_stats_decode(&in, sizeof(in) - 1, &out), -EINVAL);
	in.version = 99;
	assert_int_equal(loader_stats_decode(&in, sizeof(in), &out), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_well_formed),
		cmocka_unit_test(test_refuses_malformed),
		cmocka_unit_test(test_loader_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
