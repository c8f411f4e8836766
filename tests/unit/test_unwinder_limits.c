/*
 * docs/SECURITY.md, "Per-request CPU and memory": the real lowprof-unwinder,
 * on a SOCK_SEQPACKET socketpair as the loader drives it (unwinder_client),
 * fed files an attacker on the host can map:
 *
 * - a costly but well-formed file (tests/integration/make_costly_elf.py:
 *   2 x 256 MiB of CFI inflated from 600 KiB, seconds of CPU to parse) ends
 *   the unwinder by SIGPROF after 900 ms of CPU (ITIMER_PROF), and the
 *   client reports the file STUCK (the loader refuses it);
 * - the timer is per request: requests that each cost well under 900 ms keep
 *   being answered however much CPU they add up to;
 * - its address space is capped at 4 GiB (RLIMIT_AS), a backstop: a sparse
 *   2 GiB file of 32M section headers, for which libelf would allocate about
 *   6 GiB up front (~200 bytes per section) and which once reached the cap,
 *   is now refused by the section-header check before libelf sees it
 *   (unwind_build.c, UNWIND_MAX_SECTIONS), at once and with a few MiB.
 *
 * The unwinder's CPU time and peak RSS are read from wait4() once it ends.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_elf_header.h"

#include "ipc/lowprof_fds.h"
#include "ipc/unwinder_proto.h"
#include "loader/unwinder_client.h"

#define UNWINDER_BIN LOWPROF_BINARY_DIR "/bin/lowprof-unwinder"
#define MAX_TABLE (64u << 20)
/* As docs/SECURITY.md states them (unwinder/main.c). */
#define CPU_LIMIT_MS 900
#define ADDRESS_SPACE (4ull << 30)

#if defined(LOWPROF_SANITIZE) || defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1 /* the unwinder sets no RLIMIT_AS: ASan reserves terabytes */
#else
#define UNDER_ASAN 0
#endif

struct peer {
	int sock;
	pid_t pid;
	struct unwinder_client c;
};

struct ended {
	int status;
	long cpu_ms;
	long maxrss_kb;
};

static void spawn_unwinder(struct peer *p)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		char *const argv[] = {(char *)"lowprof-unwinder", NULL};

		dup2(sv[1], LOWPROF_FD_UNWIND);
		execv(UNWINDER_BIN, argv);
		_exit(127);
	}
	close(sv[1]);
	p->sock = sv[0];
	/* Far longer than the loader's 1 s: the test wants the unwinder's own
	 * end, not the client's patience, even on a loaded machine. */
	unwinder_client_init_fd(&p->c, p->sock, 30000);
}

/* Close our end (the unwinder exits 0 when idle) and reap it, with its CPU and RSS. */
static void reap(struct peer *p, struct ended *e)
{
	struct rusage ru;

	close(p->sock);
	assert_int_equal(wait4(p->pid, &e->status, 0, &ru), p->pid);
	e->cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000L;
	e->maxrss_kb = ru.ru_maxrss;
}

static const char *describe(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", status);
	return buf;
}

/* The unwinder's CPU time so far (utime + stime of /proc/PID/stat), in ms. */
static long cpu_ms_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long utime, stime;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	p = strrchr(buf, ')'); /* after comm, which may hold spaces */
	assert_non_null(p);
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime */
	assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				&utime, &stime), 2);
	return (long)((utime + stime) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

static enum unwinder_result parse_path(struct peer *p, const char *path, char *err, size_t errlen)
{
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id bid;
	struct unwind_table t;
	enum unwinder_result res;
	uint32_t nseg;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail_msg("%s: %s", path, strerror(errno));
	err[0] = '\0';
	res = unwinder_client_parse(&p->c, fd, MAX_TABLE, &t, seg, &nseg, &bid, err, errlen);
	close(fd);
	if (res == UNWINDER_OK)
		unwind_table_free(&t);
	return res;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A file that takes seconds of CPU: the unwinder ends by SIGPROF after its 900 ms. */
static void test_cpu_timer_ends_a_costly_request(void **state)
{
	char err[256], how[64];
	enum unwinder_result res;
	struct ended e;
	struct peer p;
	double t0;

	(void)state;
	spawn_unwinder(&p);
	t0 = now_s();
	res = parse_path(&p, COSTLY_ELF, err, sizeof(err));
	print_message("  costly file: result %d (\"%s\") after %.2f s\n", res, err, now_s() - t0);
	if (res == UNWINDER_STUCK && strstr(err, "no reply") != NULL)
		kill(p.pid, SIGKILL); /* still parsing after 30 s: reaped below, reported */
	reap(&p, &e);
	print_message("  the unwinder %s after %ld ms of CPU (peak RSS %ld KiB)\n",
		      describe(e.status, how, sizeof(how)), e.cpu_ms, e.maxrss_kb);
	if (!WIFSIGNALED(e.status) || WTERMSIG(e.status) != SIGPROF)
		fail_msg("the unwinder %s after %ld ms of CPU on a file that costs seconds: no "
			 "per-request CPU timer ended it (expected SIGPROF after %d ms)",
			 describe(e.status, how, sizeof(how)), e.cpu_ms, CPU_LIMIT_MS);
	/* Its start-up (exec, libc, seccomp) counts too, but only a little. */
	if (e.cpu_ms < CPU_LIMIT_MS - 50 || e.cpu_ms > CPU_LIMIT_MS + 600)
		fail_msg("SIGPROF after %ld ms of CPU: the timer is not the %d ms one", e.cpu_ms,
			 CPU_LIMIT_MS);
	/* What the loader sees: the file is the suspect, refused from now on. */
	assert_int_equal(res, UNWINDER_STUCK);
	assert_non_null(strstr(err, "closed its socket"));
}

/* Many requests of ~60 ms each (~200 under ASan): answered however much CPU they add up to. */
static void test_cpu_timer_is_per_request(void **state)
{
	char err[256], how[64];
	enum unwinder_result res;
	struct ended e;
	struct peer p;
	long cpu = 0;
	int n = 0;

	(void)state;
	spawn_unwinder(&p);
	while (cpu < 2 * CPU_LIMIT_MS && n < 300) {
		res = parse_path(&p, COSTLY_SMALL_ELF, err, sizeof(err));
		n++;
		if (res != UNWINDER_OK) {
			kill(p.pid, SIGKILL);
			reap(&p, &e);
			fail_msg("request %d (after %ld ms of the unwinder's CPU in all) not answered: "
				 "result %d (\"%s\"); the unwinder %s: its CPU limit is not per request",
				 n, cpu, res, err, describe(e.status, how, sizeof(how)));
		}
		cpu = cpu_ms_of(p.pid);
	}
	reap(&p, &e);
	print_message("  %d requests, %ld ms of CPU in all: each answered; the unwinder %s\n", n,
		      e.cpu_ms, describe(e.status, how, sizeof(how)));
	assert_true(cpu >= 2 * CPU_LIMIT_MS);
	assert_true(WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0);
}

/* /proc/PID/limits of a running unwinder: "Max address space" soft and hard. */
static void address_space_limit(pid_t pid, unsigned long long *soft, unsigned long long *hard)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char s[32], h[32];

		if (strncmp(line, "Max address space", 17) != 0)
			continue;
		assert_int_equal(sscanf(line + 17, "%31s %31s", s, h), 2);
		*soft = strcmp(s, "unlimited") == 0 ? ~0ull : strtoull(s, NULL, 10);
		*hard = strcmp(h, "unlimited") == 0 ? ~0ull : strtoull(h, NULL, 10);
		found = true;
	}
	fclose(f);
	assert_true(found);
}

static void test_address_space_cap_is_set(void **state)
{
	unsigned long long soft, hard;
	char err[256];
	struct ended e;
	struct peer p;

	(void)state;
	if (UNDER_ASAN) {
		print_message("  SKIP: built with AddressSanitizer, the unwinder sets no RLIMIT_AS\n");
		skip();
	}
	spawn_unwinder(&p);
	/* Once it answers, it is past its set-up (the limit comes before the first request). */
	assert_int_equal(parse_path(&p, "/bin/true", err, sizeof(err)), UNWINDER_OK);
	address_space_limit(p.pid, &soft, &hard);
	print_message("  Max address space: %llu %llu\n", soft, hard);
	if (soft != ADDRESS_SPACE || hard != ADDRESS_SPACE)
		fail_msg("the unwinder's RLIMIT_AS is %s%llu (hard %s%llu), not 4 GiB",
			 soft == ~0ull ? "unlimited: " : "", soft, hard == ~0ull ? "unlimited: " : "",
			 hard);
	reap(&p, &e);
	assert_true(WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0);
}

/*
 * A file libelf would need more than 4 GiB for: 32M section headers (extended
 * numbering: e_shnum 0, the count in section 0's sh_size), a 2 GiB file made
 * sparse. elf_begin() allocates libelf's per-section state for all of them
 * (32M x ~200 bytes) before it returns, so the count is checked before.
 */
static int many_sections_file(uint32_t nsections)
{
	char path[] = "/tmp/lowprof-unwinder-limits-XXXXXX";
	const uint64_t shoff = 0x1000;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr sh0;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	/* e_shnum 0: the count is in section 0's sh_size. */
	test_elf_header(&eh, shoff, 0, SHN_UNDEF);
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_filesz = ph.p_memsz = 0x1000;
	ph.p_align = 0x1000;
	memset(&sh0, 0, sizeof(sh0));
	sh0.sh_size = nsections;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	assert_int_equal(pwrite(fd, &ph, sizeof(ph), sizeof(eh)), (ssize_t)sizeof(ph));
	assert_int_equal(pwrite(fd, &sh0, sizeof(sh0), (off_t)shoff), (ssize_t)sizeof(sh0));
	assert_int_equal(ftruncate(fd, (off_t)(shoff + (uint64_t)nsections * sizeof(sh0))), 0);
	return fd;
}

/* Refused before libelf allocates for it; without that check the 4 GiB cap
 * was what stopped it ("out of memory", about 4 GiB of address space used). */
static void test_many_section_headers_refused(void **state)
{
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id bid;
	struct unwind_table t;
	enum unwinder_result res;
	char err[256], how[64];
	struct ended e;
	struct peer p;
	uint32_t nseg;
	double t0;
	int fd;

	(void)state;
	fd = many_sections_file(32u << 20);
	spawn_unwinder(&p);
	t0 = now_s();
	res = unwinder_client_parse(&p.c, fd, MAX_TABLE, &t, seg, &nseg, &bid, err, sizeof(err));
	close(fd);
	print_message("  32M sections: result %d (\"%s\") after %.2f s\n", res, err, now_s() - t0);
	if (res == UNWINDER_OK)
		unwind_table_free(&t);
	if (res != UNWINDER_REFUSED ||
	    strstr(err, "33554432 section headers, more than 65536") == NULL) {
		if (res == UNWINDER_STUCK && strstr(err, "no reply") != NULL)
			kill(p.pid, SIGKILL);
		reap(&p, &e);
		fail_msg("a file of 32M section headers was not refused by their count "
			 "(result %d, \"%s\"): the unwinder %s after %ld ms of CPU, peak RSS %ld MiB",
			 res, err, describe(e.status, how, sizeof(how)), e.cpu_ms, e.maxrss_kb / 1024);
	}
	/* It carries on with the next file. */
	assert_int_equal(parse_path(&p, "/bin/true", err, sizeof(err)), UNWINDER_OK);
	reap(&p, &e);
	print_message("  the unwinder %s: %ld ms of CPU, peak RSS %ld KiB\n",
		      describe(e.status, how, sizeof(how)), e.cpu_ms, e.maxrss_kb);
	assert_true(WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0);
	/* /bin/true's table and the process itself: a few MiB (ASan: more). */
	if (e.maxrss_kb > (UNDER_ASAN ? 256 : 64) * 1024)
		fail_msg("the refusal cost %ld MiB of RSS", e.maxrss_kb / 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_timer_ends_a_costly_request),
		cmocka_unit_test(test_cpu_timer_is_per_request),
		cmocka_unit_test(test_address_space_cap_is_set),
		cmocka_unit_test(test_many_section_headers_refused),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
