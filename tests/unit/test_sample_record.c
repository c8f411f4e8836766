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

/* A sample in the file encoding: user frames in files 1 and 2, one in the
 * vDSO, one raw; the file list after the frames. */
static size_t make_file_sample(unsigned nfiles)
{
	struct lowprof_sample *s = (struct lowprof_sample *)buf;
	struct lowprof_file_id *f;
	size_t len = make_sample(2, 4);
	unsigned i;

	s->nfiles = nfiles;
	s->user_stop = LOWPROF_STOP_NO_TABLE;
	s->frames[2] = LOWPROF_FRAME_MAKE(1, 0x1136);
	s->frames[3] = LOWPROF_FRAME_MAKE(nfiles, 0x2000);
	s->frames[4] = LOWPROF_FRAME_MAKE(LOWPROF_FRAME_VDSO, 0x9a0);
	s->frames[5] = LOWPROF_FRAME_MAKE(LOWPROF_FRAME_RAW, 0x7f0012345678);
	f = (struct lowprof_file_id *)(s->frames + 6);
	for (i = 0; i < nfiles; i++) {
		f[i].ino = 1000 + i;
		f[i].dev = (8u << 20) | 2;
		f[i].gen = 7;
	}
	return len + nfiles * sizeof(*f);
}

static void test_accepts_file_frames(void **state)
{
	struct sample_view v;
	char err[128];
	size_t len = make_file_sample(2);

	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), 0);
	assert_int_equal(v.hdr->nfiles, 2);
	assert_int_equal(v.hdr->user_stop, LOWPROF_STOP_NO_TABLE);
	assert_int_equal(LOWPROF_FRAME_KIND(v.user_frames[0]), 1);
	assert_int_equal(LOWPROF_FRAME_VALUE(v.user_frames[0]), 0x1136);
	assert_int_equal(LOWPROF_FRAME_KIND(v.user_frames[2]), LOWPROF_FRAME_VDSO);
	assert_int_equal(v.files[1].ino, 1001);
	assert_int_equal(v.files[1].dev, (8u << 20) | 2);
	assert_ptr_equal((const uint8_t *)(v.files + 2), (const uint8_t *)buf + len);
	/* The largest list. */
	len = make_file_sample(LOWPROF_SAMPLE_MAX_FILES);
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), 0);
	assert_int_equal(v.files[LOWPROF_SAMPLE_MAX_FILES - 1].ino, 1000 + LOWPROF_SAMPLE_MAX_FILES - 1);
}

static void test_refuses_bad_file_list(void **state)
{
	struct lowprof_sample *s = (struct lowprof_sample *)buf;
	struct sample_view v;
	char err[128];
	size_t len;

	/* More files than the format allows (the length matching them). */
	len = make_file_sample(2);
	s->nfiles = LOWPROF_SAMPLE_MAX_FILES + 1;
	len += (LOWPROF_SAMPLE_MAX_FILES - 1) * sizeof(struct lowprof_file_id);
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "names 16 files"));
	/* The length must include the list exactly: one entry short, one too many. */
	len = make_file_sample(2);
	assert_int_equal(sample_record_decode(buf, len - 16, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "does not match"));
	assert_int_equal(sample_record_decode(buf, len + 16, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "does not match"));
	/* A frame naming an entry past the list. */
	len = make_file_sample(2);
	s->frames[3] = LOWPROF_FRAME_MAKE(3, 0x2000);
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "names file 3 of 2"));
	/* Kinds between the list's bound and the vDSO's are never valid. */
	len = make_file_sample(LOWPROF_SAMPLE_MAX_FILES);
	s->frames[5] = LOWPROF_FRAME_MAKE(LOWPROF_SAMPLE_MAX_FILES + 1, 0);
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), -EINVAL);
	s->frames[5] = LOWPROF_FRAME_MAKE(0xfe, 0);
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), -EINVAL);
	/* A file frame in a sample without a list. */
	len = make_sample(0, 1);
	s->frames[0] = LOWPROF_FRAME_MAKE(1, 0x10);
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), -EINVAL);
	/* Kernel frames are raw kernel addresses: their top byte is no kind. */
	len = make_sample(1, 0);
	s->frames[0] = 0xffffffff81001234ull;
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), 0);
}

static void test_refuses_bad_stop_takes_any_image_id(void **state)
{
	struct lowprof_sample *s = (struct lowprof_sample *)buf;
	struct sample_view v;
	char err[128];
	size_t len;

	len = make_file_sample(1);
	s->user_stop = LOWPROF_STOP_REASONS - 1;
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), 0);
	s->user_stop = LOWPROF_STOP_REASONS;
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "stop reason"));
	/* An exec count is any 16 bits: it reaches the view as it came. */
	s->user_stop = LOWPROF_STOP_NONE;
	s->image_id = 0xffff;
	assert_int_equal(sample_record_decode(buf, len, &v, err, sizeof(err)), 0);
	assert_int_equal(v.hdr->image_id, 0xffff);
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
	in.version = LOWPROF_LOADER_STATS_VERSION;
	in.offcpu_prob_ppm = 1000000;
	in.offcpu_attached = 1;
	assert_int_equal(loader_stats_decode(&in, sizeof(in), &out), 0);
	in.offcpu_prob_ppm = 1000001;
	assert_int_equal(loader_stats_decode(&in, sizeof(in), &out), -EINVAL);
	in.offcpu_prob_ppm = 0;
	in.offcpu_attached = 2;
	assert_int_equal(loader_stats_decode(&in, sizeof(in), &out), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_well_formed),
		cmocka_unit_test(test_refuses_malformed),
		cmocka_unit_test(test_accepts_file_frames),
		cmocka_unit_test(test_refuses_bad_file_list),
		cmocka_unit_test(test_refuses_bad_stop_takes_any_image_id),
		cmocka_unit_test(test_loader_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
