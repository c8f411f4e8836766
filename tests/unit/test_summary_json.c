/* summary.json (parsed back with python3's json) and output_file's atomic replace. */
#define _GNU_SOURCE /* setresuid */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "exporter/formats/output_file.h"
#include "exporter/profile/profile.h"
#include "exporter/formats/summary_json.h"
#include "test_support.h"

#define APP "/bin/app"

static char *summary(const struct profile *p, const struct summary_info *info, int expect)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&buf, &len);

	assert_non_null(ms);
	assert_int_equal(summary_json_write(p, info, ms), expect);
	fclose(ms);
	return buf;
}

/* Writes json to a file and runs a python check script over it (as d). */
static void check_json(const char *json, const char *name, const char *python)
{
	char path[512], script[512], cmd[1200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ts_tmpdir, name);
	ts_write_file(path, json, strlen(json));
	snprintf(script, sizeof(script), "%s/%s.py", ts_tmpdir, name);
	f = fopen(script, "w");
	assert_non_null(f);
	fprintf(f, "import json, sys\nd = json.load(open(sys.argv[1], encoding='utf-8'))\n%s\n",
		python);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 %s %s", script, path);
	if (system(cmd) != 0) {
		printf("# JSON under test:\n%s\n", json);
		fail_msg("python check failed for %s", name);
	}
}

static void test_summary_values(void **state)
{
	struct profile *p = profile_new();
	struct frame s1[] = { ts_user_frame("hot", APP, 1), ts_user_frame("main", APP, 2) };
	struct frame s2[] = { ts_user_frame("warm", APP, 3), ts_user_frame("main", APP, 2) };
	struct frame s3[] = { ts_user_frame("hot", APP, 1), ts_user_frame("other", APP, 4) };
	static const struct summary_extra extras[] = {
		{ "overhead", "{\"cpu_pct\": 0.42, \"budget_pct\": 1.5}" },
		{ "timeline", "[1, 2, 3]" },
	};
	struct summary_info info = { .duration_s = 9.5, .lost_samples = 12, .idle_samples = 40,
				     .extras = extras, .nextras = 2 };
	char *json;

	(void)state;
	assert_int_equal(profile_add_sample(p, 1, 1, "app", s1, 2, false, 60, 600), 0);
	assert_int_equal(profile_add_sample(p, 2, 2, "app", s2, 2, false, 30, 300), 0);
	assert_int_equal(profile_add_sample(p, 2, 2, "app", s3, 2, false, 10, 100), 0);
	json = summary(p, &info, 0);
	check_json(json, "values.json",
		   "assert d['version'] == 1, d\n"
		   "assert d['duration_s'] == 9.5\n"
		   "assert d['samples'] == 100 and d['cpu_ns'] == 1000\n"
		   "assert d['lost_samples'] == 12 and d['idle_samples'] == 40\n"
		   "assert d['processes'] == 2 and d['stacks'] == 3\n"
		   "t = d['top']\n"
		   "assert [x['function'] for x in t] == ['hot', 'warm'], t\n"
		   "assert t[0]['samples'] == 70 and t[0]['self_pct'] == 70.0\n"
		   "assert t[1]['samples'] == 30 and t[1]['self_pct'] == 30.0\n"
		   "assert t[0]['module'] == '/bin/app' and t[0]['kernel'] is False\n"
		   "assert d['overhead'] == {'cpu_pct': 0.42, 'budget_pct': 1.5}\n"
		   "assert d['timeline'] == [1, 2, 3]\n");
	free(json);

	/* Duration from the profile's span when the caller has none; no info at all. */
	profile_set_time(p, 1000000000ULL, 3500000000ULL);
	json = summary(p, NULL, 0);
	check_json(json, "noinfo.json",
		   "assert d['duration_s'] == 2.5\n"
		   "assert d['lost_samples'] == 0\n"
		   "assert d['start_unix_ns'] == 1000000000\n");
	free(json);
	profile_free(p);
}

static void test_summary_top_ten(void **state)
{
	struct profile *p = profile_new();
	char name[32];
	size_t i;
	char *json;

	(void)state;
	for (i = 0; i < 15; i++) {
		struct frame f;

		snprintf(name, sizeof(name), "fn%02zu", i);
		f = ts_user_frame(name, APP, i);
		assert_int_equal(profile_add_sample(p, 1, 1, "x", &f, 1, false, 100 - i, 0), 0);
	}
	json = summary(p, NULL, 0);
	check_json(json, "top.json",
		   "assert len(d['top']) == 10\n"
		   "assert d['top'][0]['function'] == 'fn00' and d['top'][9]['function'] == 'fn09'\n");
	free(json);
	profile_free(p);
}

static void test_summary_escaping(void **state)
{
	struct profile *p = profile_new();
	/* Quotes, backslashes, control bytes, valid UTF-8, invalid bytes. */
	struct frame f = ts_user_frame("evil\"\\\n\t\x01\x1f\x7f caf\xc3\xa9 \xe2\x82\xac \xff\xc0\xaf end",
				       APP, 1);
	static const struct summary_extra clash[] = { { "samples", "1" } };
	static const struct summary_extra empty[] = { { "x", "  " } };
	static const struct summary_extra dup[] = { { "x", "1" }, { "x", "2" } };
	struct summary_info info = { 0 };
	char *json;

	(void)state;
	assert_int_equal(profile_add_sample(p, 1, 1, "x", &f, 1, false, 1, 0), 0);
	json = summary(p, NULL, 0);
	check_json(json, "escape.json",
		   "name = d['top'][0]['function']\n"
		   "want = 'evil\"\\\\\\n\\t\\x01\\x1f\\x7f caf\\u00e9 \\u20ac \\ufffd\\ufffd\\ufffd end'\n"
		   "assert name == want, repr(name)\n");
	/* Raw control bytes never reach the file. */
	assert_null(strchr(json, '\x01'));
	assert_null(strchr(json, '\x7f'));
	assert_null(strstr(json, "\xff"));
	free(json);

	info.extras = clash;
	info.nextras = 1;
	free(summary(p, &info, -EINVAL));
	info.extras = empty;
	free(summary(p, &info, -EINVAL));
	info.extras = dup;
	info.nextras = 2;
	free(summary(p, &info, -EINVAL));
	profile_free(p);
}

struct writer_ctx {
	const char *text;
	int dirfd;
	const char *name;
	char seen_during_write[64];
	int fail;
};

static void read_file(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

static int test_writer(FILE *f, void *arg)
{
	struct writer_ctx *c = arg;

	fputs(c->text, f);
	fflush(f);
	/* Mid-write, readers of NAME still see the old content. */
	read_file(c->dirfd, c->name, c->seen_during_write, sizeof(c->seen_during_write));
	return c->fail;
}

static void test_output_file(void **state)
{
	struct writer_ctx c = { 0 };
	char err[256], buf[64], dir[600];
	struct stat st;
	int dirfd, ro, status;
	mode_t um = umask(022);
	pid_t child;

	(void)state;
	dirfd = open(ts_tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	c.dirfd = dirfd;
	c.name = "out.txt";

	c.text = "first\n";
	assert_int_equal(output_file_write_atomic(dirfd, "out.txt", test_writer, &c, err, sizeof(err)), 0);
	read_file(dirfd, "out.txt", buf, sizeof(buf));
	assert_string_equal(buf, "first\n");
	assert_int_equal(fstatat(dirfd, "out.txt", &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0640); /* user and group only, whatever the umask */
	assert_int_not_equal(fstatat(dirfd, "out.txt.tmp", &st, 0), 0);

	c.text = "second\n";
	assert_int_equal(output_file_write_atomic(dirfd, "out.txt", test_writer, &c, err, sizeof(err)), 0);
	assert_string_equal(c.seen_during_write, "first\n");
	read_file(dirfd, "out.txt", buf, sizeof(buf));
	assert_string_equal(buf, "second\n");

	/* A failing writer: old content kept, tmp removed, error reported. */
	c.text = "third\n";
	c.fail = -ENOSPC;
	err[0] = '\0';
	assert_int_equal(output_file_write_atomic(dirfd, "out.txt", test_writer, &c, err, sizeof(err)),
			 -ENOSPC);
	assert_true(strlen(err) > 0);
	read_file(dirfd, "out.txt", buf, sizeof(buf));
	assert_string_equal(buf, "second\n");
	assert_int_not_equal(fstatat(dirfd, "out.txt.tmp", &st, 0), 0);
	c.fail = 1; /* a non-errno failure is still a failure */
	assert_int_equal(output_file_write_atomic(dirfd, "out.txt", test_writer, &c, err, sizeof(err)),
			 -EIO);
	assert_int_not_equal(fstatat(dirfd, "out.txt.tmp", &st, 0), 0);
	c.fail = 0;

	/* Unwritable directories: procfs refuses creates even for root; a 0555
	 * directory refuses them to anyone without CAP_DAC_OVERRIDE, so as root the
	 * check runs in a child that drops to nobody. */
	err[0] = '\0';
	ro = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(ro >= 0);
	assert_true(output_file_write_atomic(ro, "x.txt", test_writer, &c, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "x.txt.tmp"));
	close(ro);
	snprintf(dir, sizeof(dir), "%s/ro", ts_tmpdir);
	assert_int_equal(mkdir(dir, 0555), 0);
	assert_int_equal(chmod(ts_tmpdir, 0755), 0);
	ro = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(ro >= 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int r;

		if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
				       setresuid(65534, 65534, 65534) != 0))
			_exit(2);
		r = output_file_write_atomic(ro, "x.txt", test_writer, &c, err, sizeof(err));
		_exit(r == -EACCES && strstr(err, "Permission denied") != NULL ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(ro);
	assert_int_equal(output_file_write_atomic(dirfd, "", test_writer, &c, err, sizeof(err)), -EINVAL);
	close(dirfd);
	umask(um);
}

/* Content equal to what the file holds: the file stays (same inode, no
 * fsync or rename); new content, or a file changed or removed by someone
 * else, is written. Large content (past the remembered size) is always written. */
static void test_output_file_unchanged(void **state)
{
	struct writer_ctx c = { 0 };
	char err[256], buf[64];
	struct stat st1, st2;
	static char big[80 * 1024 + 1];
	int dirfd, fd;

	(void)state;
	dirfd = open(ts_tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	c.dirfd = dirfd;
	c.name = "same.txt";
	c.text = "stable\n";
	assert_int_equal(output_file_write_atomic(dirfd, "same.txt", test_writer, &c, err, sizeof(err)), 0);
	assert_int_equal(fstatat(dirfd, "same.txt", &st1, 0), 0);
	assert_int_equal(output_file_write_atomic(dirfd, "same.txt", test_writer, &c, err, sizeof(err)), 0);
	assert_int_equal(fstatat(dirfd, "same.txt", &st2, 0), 0);
	assert_true(st1.st_ino == st2.st_ino); /* not replaced */
	assert_int_not_equal(fstatat(dirfd, "same.txt.tmp", &st2, 0), 0);
	read_file(dirfd, "same.txt", buf, sizeof(buf));
	assert_string_equal(buf, "stable\n");

	/* A prefix of the old content, then longer content: both written. */
	c.text = "stab";
	assert_int_equal(output_file_write_atomic(dirfd, "same.txt", test_writer, &c, err, sizeof(err)), 0);
	read_file(dirfd, "same.txt", buf, sizeof(buf));
	assert_string_equal(buf, "stab");
	c.text = "stable!\n";
	assert_int_equal(output_file_write_atomic(dirfd, "same.txt", test_writer, &c, err, sizeof(err)), 0);
	read_file(dirfd, "same.txt", buf, sizeof(buf));
	assert_string_equal(buf, "stable!\n");
	assert_int_equal(fstatat(dirfd, "same.txt", &st1, 0), 0);

	/* Someone else rewrote it (same size): ours is written again. The pause:
	 * a file system with coarse timestamps could give both writes one mtime. */
	usleep(20000);
	fd = openat(dirfd, "same.txt", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "XXXXXXX\n", 8, 0), 8);
	close(fd);
	assert_int_equal(output_file_write_atomic(dirfd, "same.txt", test_writer, &c, err, sizeof(err)), 0);
	read_file(dirfd, "same.txt", buf, sizeof(buf));
	assert_string_equal(buf, "stable!\n");

	/* Removed: written again. */
	assert_int_equal(unlinkat(dirfd, "same.txt", 0), 0);
	assert_int_equal(output_file_write_atomic(dirfd, "same.txt", test_writer, &c, err, sizeof(err)), 0);
	read_file(dirfd, "same.txt", buf, sizeof(buf));
	assert_string_equal(buf, "stable!\n");

	/* Past the remembered size: replaced every time. */
	memset(big, 'b', sizeof(big) - 1);
	c.text = big;
	c.name = "big.txt";
	assert_int_equal(output_file_write_atomic(dirfd, "big.txt", test_writer, &c, err, sizeof(err)), 0);
	assert_int_equal(fstatat(dirfd, "big.txt", &st1, 0), 0);
	assert_int_equal(output_file_write_atomic(dirfd, "big.txt", test_writer, &c, err, sizeof(err)), 0);
	assert_int_equal(fstatat(dirfd, "big.txt", &st2, 0), 0);
	assert_true(st1.st_ino != st2.st_ino || st1.st_mtim.tv_nsec != st2.st_mtim.tv_nsec ||
		    st1.st_mtim.tv_sec != st2.st_mtim.tv_sec);
	assert_int_equal((size_t)st2.st_size, sizeof(big) - 1);
	close(dirfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_values),
		cmocka_unit_test(test_summary_top_ten),
		cmocka_unit_test(test_summary_escaping),
		cmocka_unit_test(test_output_file),
		cmocka_unit_test(test_output_file_unchanged),
	};

	return cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
}
