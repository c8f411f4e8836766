/* agent_cpu: /proc/PID/stat parsing, and real readings of this process tree against schedstat. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "measure/agent_cpu.h"

static void test_parse_plain(void **state)
{
	static const char line[] =
		"1234 (lowprof-loader) S 1200 1234 1200 0 -1 4194560 300 0 0 0 "
		"17 5 3 2 20 0 1 0 100 1000 200";
	struct agent_cpu_stat st;

	(void)state;
	assert_int_equal(agent_cpu_parse_stat(line, strlen(line), &st), 0);
	assert_string_equal(st.comm, "lowprof-loader");
	assert_int_equal(st.ppid, 1200);
	assert_int_equal(st.utime, 17);
	assert_int_equal(st.stime, 5);
	assert_int_equal(st.cutime, 3);
	assert_int_equal(st.cstime, 2);
}

static void test_parse_hostile_comm(void **state)
{
	/* A command name with spaces and parentheses cannot shift the fields. */
	static const char line[] =
		"77 (a) b (c) d) R 1 77 77 0 -1 0 0 0 0 0 9 8 7 6 20 0 1 0 1 1 1";
	struct agent_cpu_stat st;

	(void)state;
	assert_int_equal(agent_cpu_parse_stat(line, strlen(line), &st), 0);
	assert_string_equal(st.comm, "a) b (c) d");
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.utime, 9);
	assert_int_equal(st.cstime, 6);
}

static void test_parse_refuses(void **state)
{
	static const char *const bad[] = {
		"",
		"12 no-parens S 1 2 3",
		"12 (x) S 1 2 3 4",               /* too few fields */
		"12 (x) S one 2 3 4 5 6 7 8 9 10 11 12 13 14",
		"12 (x)S 1 2 3 4 5 6 7 8 9 10 11 12 13 14",
	};
	struct agent_cpu_stat st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(agent_cpu_parse_stat(bad[i], strlen(bad[i]), &st), -EINVAL);
}

/* Burn CPU (not wall) time: the host may be busy. */
static void burn_cpu_ms(clockid_t clk, long ms)
{
	struct timespec t0, t1;
	volatile uint64_t x = 0;

	clock_gettime(clk, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x = x + (uint64_t)i; /* volatile: each add is done */
		clock_gettime(clk, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static void *burner_thread(void *arg)
{
	(void)arg;
	for (;;)
		burn_cpu_ms(CLOCK_THREAD_CPUTIME_ID, 1000);
	return NULL;
}

/* A child burning CPU on two threads until killed, under name (NULL: this
 * program's) as its command name. */
static pid_t spawn_burner_named(const char *name)
{
	pid_t kid = fork();
	pthread_t t;

	assert_true(kid >= 0);
	if (kid == 0) {
		/* The process's name is its first thread's. */
		if (name != NULL && prctl(PR_SET_NAME, name, 0, 0, 0) != 0)
			_exit(1);
		pthread_create(&t, NULL, burner_thread, NULL);
		burner_thread(NULL);
		_exit(0);
	}
	return kid;
}

static pid_t spawn_burner(void)
{
	return spawn_burner_named(NULL);
}

/* Sum of /proc/PID/task/TID/schedstat's first field: every live thread's run time. */
static uint64_t schedstat_ns(pid_t pid)
{
	char path[96];
	struct dirent *de;
	uint64_t total = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (dir == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL) {
		unsigned long long v;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%llu", &v) == 1)
			total += v;
		fclose(f);
	}
	closedir(dir);
	return total;
}

static void test_first_reading_is_startup(void **state)
{
	struct agent_cpu a;
	struct agent_cpu_totals t0, t1;

	(void)state;
	burn_cpu_ms(CLOCK_PROCESS_CPUTIME_ID, 20);
	agent_cpu_init(&a, getpid(), getpid(), true);
	a.startup_window_ns = 0; /* this test process is young: count its growth */
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t0), 0);
	assert_true(t0.startup_ns >= 20000000ULL);
	assert_true(t0.charged_ns == 0);
	burn_cpu_ms(CLOCK_PROCESS_CPUTIME_ID, 50);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t1), 0);
	assert_true(t1.charged_ns >= 50000000ULL);
	assert_true(t1.startup_ns == t0.startup_ns);
	assert_int_equal(agent_cpu_sample(&(struct agent_cpu){.root = 0x7ffffff0}, "/proc", &t1), -ESRCH);
}

/* Over a run, the charged CPU of a tree of busy processes matches schedstat within 5%. */
static void test_matches_schedstat(void **state)
{
	pid_t kids[2] = {spawn_burner(), spawn_burner()};
	struct agent_cpu a;
	struct agent_cpu_totals t0, t1;
	uint64_t s0, s1, want, got;
	int i;

	(void)state;
	/* A restarted reader: the burners' past is neither start-up nor charged. */
	usleep(100000);
	agent_cpu_init(&a, getpid(), getpid(), false);
	a.startup_window_ns = 0; /* the burners are young: count their growth */
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t0), 0);
	s0 = schedstat_ns(getpid()) + schedstat_ns(kids[0]) + schedstat_ns(kids[1]);
	for (i = 0; i < 15; i++) {
		usleep(100000);
		assert_int_equal(agent_cpu_sample(&a, "/proc", &t1), 0);
	}
	s1 = schedstat_ns(getpid()) + schedstat_ns(kids[0]) + schedstat_ns(kids[1]);
	for (i = 0; i < 2; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	want = s1 - s0;
	got = t1.charged_ns - t0.charged_ns;
	fprintf(stderr, "charged %llu ns, schedstat %llu ns, startup %llu ns\n", (unsigned long long)got,
		(unsigned long long)want, (unsigned long long)t1.startup_ns);
	assert_true(want > 100000000ULL);
	assert_true(got * 100 >= want * 95 && got * 100 <= want * 105);
	/* Only this process (the reader) counted as starting. */
	assert_true(t1.startup_ns < 1000000000ULL);
}

/* A process that appears later (a restarted component): what it used before is start-up. */
/* A process still starting (younger than the window) keeps counting as start-up. */
static void test_young_growth_is_startup(void **state)
{
	pid_t kid = spawn_burner();
	struct agent_cpu a;
	struct agent_cpu_totals t0, t1;

	(void)state;
	agent_cpu_init(&a, getpid(), getpid(), false);
	a.startup_window_ns = 60ULL * 1000000000ULL;
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t0), 0);
	usleep(300000);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t1), 0);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	assert_true(t1.startup_ns - t0.startup_ns > 0);
	assert_true(t1.charged_ns == t0.charged_ns);
}

/* While the reader says start-up goes on (the loader's start-up tables), the
 * growth of a process past its own start is start-up, and so is it in the
 * interval in which start-up ended (most of that interval was the start's);
 * after, it is charged. */
static void test_starting_phase_is_startup(void **state)
{
	struct agent_cpu a;
	struct agent_cpu_totals t0, t1, t2;

	(void)state;
	agent_cpu_init(&a, getpid(), getpid(), false);
	a.startup_window_ns = 0; /* past its own start */
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t0), 0);
	a.starting = true;
	burn_cpu_ms(CLOCK_PROCESS_CPUTIME_ID, 30);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t1), 0);
	assert_true(t1.startup_ns - t0.startup_ns >= 30000000ULL);
	assert_true(t1.charged_ns == t0.charged_ns);
	a.starting = false;
	burn_cpu_ms(CLOCK_PROCESS_CPUTIME_ID, 30);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t2), 0);
	assert_true(t2.startup_ns - t1.startup_ns >= 30000000ULL);
	assert_true(t2.charged_ns == t1.charged_ns);
	t1 = t2;
	burn_cpu_ms(CLOCK_PROCESS_CPUTIME_ID, 30);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t2), 0);
	assert_true(t2.charged_ns - t1.charged_ns >= 30000000ULL);
	assert_true(t2.startup_ns == t1.startup_ns);
}

/* A process young at the previous reading: its growth since is start-up,
 * even though it is past the window now (the interval began in its start);
 * one reading later it is charged. */
static void test_interval_begun_young_is_startup(void **state)
{
	pid_t kid = spawn_burner();
	struct agent_cpu a;
	struct agent_cpu_totals t0, t1, t2, t3;

	(void)state;
	agent_cpu_init(&a, getpid(), getpid(), false);
	a.startup_window_ns = 300ULL * 1000000ULL;
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t0), 0);
	usleep(100000);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t1), 0); /* the kid ~100 ms old */
	usleep(400000);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t2), 0); /* ~500 ms: past the window */
	usleep(300000);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t3), 0);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	agent_cpu_fini(&a);
	/* The burner runs on two threads: a quarter of a CPU's worth of each
	 * wait at least, on a busy host. */
	assert_true(t2.startup_ns - t1.startup_ns >= 100000000ULL);
	assert_true(t2.charged_ns - t1.charged_ns < 50000000ULL);
	assert_true(t3.charged_ns - t2.charged_ns >= 75000000ULL);
}

static void test_new_child_is_startup(void **state)
{
	struct agent_cpu a;
	struct agent_cpu_totals t0, t1;
	int done[2], status;
	char byte;
	pid_t kid;

	(void)state;
	agent_cpu_init(&a, getpid(), getpid(), true);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t0), 0);
	assert_int_equal(pipe(done), 0);
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		burn_cpu_ms(CLOCK_PROCESS_CPUTIME_ID, 200);
		if (write(done[1], "x", 1) != 1)
			_exit(1);
		sleep(1);
		_exit(0);
	}
	close(done[1]);
	assert_int_equal(read(done[0], &byte, 1), 1);
	close(done[0]);
	/* The children files were opened by the first reading and are read again
	 * from the start: the child forked since is in this one. */
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t1), 0);
	agent_cpu_fini(&a);
	assert_true(t1.startup_ns - t0.startup_ns >= 190000000ULL);
	assert_true(t1.charged_ns - t0.charged_ns < 100000000ULL);
	kill(kid, SIGKILL);
	assert_int_equal(waitpid(kid, &status, 0), kid);
}

/* The table builder's charged CPU is counted apart as well (its name as the
 * kernel cuts it: 15 bytes); another process's is not. */
static void test_tables_builder_counted_apart(void **state)
{
	pid_t builder = spawn_burner_named("lowprof-unwinder"), other = spawn_burner_named("lowprof-exporter");
	struct agent_cpu a;
	struct agent_cpu_totals t0, t1;
	uint64_t b0, b1, o0, o1, tables, charged;

	(void)state;
	usleep(100000);
	agent_cpu_init(&a, getpid(), getpid(), false);
	agent_cpu_set_tables_comm(&a, "lowprof-unwinder");
	a.startup_window_ns = 0; /* the burners are young: count their growth */
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t0), 0);
	b0 = schedstat_ns(builder);
	o0 = schedstat_ns(other);
	usleep(500000);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t1), 0);
	b1 = schedstat_ns(builder);
	o1 = schedstat_ns(other);
	kill(builder, SIGKILL);
	kill(other, SIGKILL);
	waitpid(builder, NULL, 0);
	waitpid(other, NULL, 0);
	agent_cpu_fini(&a);
	tables = t1.tables_ns - t0.tables_ns;
	charged = t1.charged_ns - t0.charged_ns;
	fprintf(stderr, "tables %llu ns (builder's schedstat %llu), charged %llu ns (other's %llu)\n",
		(unsigned long long)tables, (unsigned long long)(b1 - b0), (unsigned long long)charged,
		(unsigned long long)(o1 - o0));
	assert_true(b1 - b0 > 100000000ULL && o1 - o0 > 100000000ULL);
	assert_true(tables * 100 >= (b1 - b0) * 95 && tables * 100 <= (b1 - b0) * 105);
	/* The other burner's CPU is charged, not tables. */
	assert_true(charged >= tables + (o1 - o0) * 95 / 100);
	/* Without the name set, nothing is tables. */
	agent_cpu_init(&a, getpid(), getpid(), false);
	a.startup_window_ns = 0;
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t0), 0);
	burn_cpu_ms(CLOCK_PROCESS_CPUTIME_ID, 20);
	assert_int_equal(agent_cpu_sample(&a, "/proc", &t1), 0);
	agent_cpu_fini(&a);
	assert_true(t1.charged_ns - t0.charged_ns >= 20000000ULL);
	assert_true(t1.tables_ns == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_plain),
		cmocka_unit_test(test_parse_hostile_comm),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_first_reading_is_startup),
		cmocka_unit_test(test_matches_schedstat),
		cmocka_unit_test(test_new_child_is_startup),
		cmocka_unit_test(test_young_growth_is_startup),
		cmocka_unit_test(test_starting_phase_is_startup),
		cmocka_unit_test(test_interval_begun_young_is_startup),
		cmocka_unit_test(test_tables_builder_counted_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
