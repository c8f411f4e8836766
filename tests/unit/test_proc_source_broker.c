/*
 * The exporter's side of the symbol socket (exporter/symbols/proc_source_broker.c)
 * against a scripted loader on a real SOCK_SEQPACKET socketpair: answers with
 * real fds are used; stale answers (other ids) are skipped and their fds
 * closed; a malformed answer, an fd missing where one is due, or one where
 * none belongs is refused; silence times out with -EAGAIN, after which the
 * source asks nothing for a while instead of waiting again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_fd_count.h"

#include "exporter/symbols/proc_source.h"
#include "ipc/fd_pass.h"
#include "ipc/sym_wire.h"

enum script {
	ANSWER_FD,        /* a stale answer first, then the right one with an fd */
	ANSWER_NO_FD,     /* success without the fd an open needs */
	ANSWER_GARBAGE,   /* bytes that are no reply, then silence */
	ANSWER_PROCESS,   /* exe path and cgroup text, no fd */
	ANSWER_ERROR,     /* ENOENT */
	ANSWER_NOTHING,   /* silence */
	ANSWER_MANY,      /* three requests, answered in reverse order, the middle one ENOENT */
	ANSWER_FILE,      /* a file request: checked field by field, an fd and the path */
};

struct loader_script {
	int sock;
	enum script what;
	uint32_t last_kind;
};

/* One request in, the scripted answer out. */
static void *fake_loader(void *arg)
{
	struct loader_script *ls = arg;
	Lowprof__Sym__SymRequest *req = NULL;
	Lowprof__Sym__SymReply rep = LOWPROF__SYM__SYM_REPLY__INIT;
	char err[160];
	int fd;

	if (ls->what == ANSWER_MANY) {
		Lowprof__Sym__SymRequest *reqs[3];
		int i;

		for (i = 0; i < 3; i++) {
			struct pollfd p = {.fd = ls->sock, .events = POLLIN};

			poll(&p, 1, 2000);
			if (sym_wire_recv_request(ls->sock, &reqs[i], err, sizeof(err)) != 1)
				return NULL;
		}
		for (i = 2; i >= 0; i--) {
			rep.id = reqs[i]->id;
			rep.error = i == 1 ? ENOENT : 0;
			fd = i == 1 ? -1 : open(i == 0 ? "/dev/null" : "/proc/self/maps", O_RDONLY | O_CLOEXEC);
			sym_wire_send_reply(ls->sock, &rep, fd);
			if (fd >= 0)
				close(fd);
			sym_wire_free_request(reqs[i]);
		}
		return NULL;
	}
	if (sym_wire_recv_request(ls->sock, &req, err, sizeof(err)) != 1)
		return NULL;
	ls->last_kind = req->what_case;
	rep.id = req->id;
	switch (ls->what) {
	case ANSWER_FD:
		rep.id = req->id + 1000; /* stale, with an fd the source must close */
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		sym_wire_send_reply(ls->sock, &rep, fd);
		close(fd);
		rep.id = req->id;
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
		sym_wire_send_reply(ls->sock, &rep, fd);
		close(fd);
		break;
	case ANSWER_NO_FD:
		sym_wire_send_reply(ls->sock, &rep, -1);
		break;
	case ANSWER_GARBAGE:
		fdpass_send(ls->sock, "\xff\xff\xff", 3, -1);
		break;
	case ANSWER_PROCESS:
		rep.exe_path = "/usr/bin/sleep";
		rep.cgroup.data = (uint8_t *)"0::/system.slice/docker-0123.scope\n";
		rep.cgroup.len = strlen((const char *)rep.cgroup.data);
		sym_wire_send_reply(ls->sock, &rep, -1);
		break;
	case ANSWER_ERROR:
		rep.error = ENOENT;
		rep.reason = "no such file";
		sym_wire_send_reply(ls->sock, &rep, -1);
		break;
	case ANSWER_FILE:
		/* Only the identity asked for is answered; anything else is ENOENT. */
		if (req->what_case == LOWPROF__SYM__SYM_REQUEST__WHAT_FILE && req->file->dev == ((8u << 20) | 2) &&
		    req->file->ino == 1234567 && req->file->gen == 9) {
			rep.path = "/usr/lib/libgolden.so (deleted)";
			fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
			sym_wire_send_reply(ls->sock, &rep, fd);
			close(fd);
		} else {
			rep.error = ENOENT;
			sym_wire_send_reply(ls->sock, &rep, -1);
		}
		break;
	case ANSWER_NOTHING:
	case ANSWER_MANY: /* handled above */
		break;
	}
	sym_wire_free_request(req);
	return NULL;
}

static int pair[2];
static struct proc_source *src;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
	src = proc_source_broker_new(pair[0], 200, -1);
	assert_non_null(src);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	proc_source_free(src);
	close(pair[0]);
	close(pair[1]);
	return 0;
}

/* Run one call against the scripted loader; returns the call's result. */
#define WITH_LOADER(script, call, result)                                                  \
	do {                                                                               \
		struct loader_script ls = {pair[1], (script), 0};                          \
		pthread_t t;                                                               \
		assert_int_equal(pthread_create(&t, NULL, fake_loader, &ls), 0);          \
		(result) = (call);                                                         \
		pthread_join(t, NULL);                                                     \
	} while (0)

static void test_fd_answer_and_stale_skipped(void **state)
{
	int before = test_fd_count(), fd;
	char buf[64];

	(void)state;
	WITH_LOADER(ANSWER_FD, proc_source_open_maps(src, 42), fd);
	assert_true(fd >= 0);
	/* The right fd: /proc/self/maps of the "loader" (this process) reads as maps. */
	assert_true(read(fd, buf, sizeof(buf)) > 0);
	assert_non_null(memchr(buf, '-', sizeof(buf)));
	close(fd);
	assert_int_equal(test_fd_count(), before); /* the stale answer's fd was closed */
}

static void test_refusals(void **state)
{
	struct proc_maps_entry e;
	int rc;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.start = 0x1000;
	e.end = 0x2000;
	e.inode = 5;
	WITH_LOADER(ANSWER_NO_FD, proc_source_open_mapped_file(src, 7, &e), rc);
	assert_int_equal(rc, -EPROTO);
	WITH_LOADER(ANSWER_ERROR, proc_source_open_debug_file(src, "abcdef"), rc);
	assert_int_equal(rc, -ENOENT);
	/* A malformed build id never leaves the exporter. */
	assert_int_equal(proc_source_open_debug_file(src, "../../etc/shadow"), -EINVAL);
}

/* A file by identity: the fields reach the loader as given, the fd and the
 * path come back; a failure leaves the path empty. */
static void test_file_answer(void **state)
{
	struct lowprof_file_id id = {.ino = 1234567, .dev = (8u << 20) | 2, .gen = 9};
	int before = test_fd_count(), fd;
	char path[64] = "x";

	(void)state;
	WITH_LOADER(ANSWER_FILE, proc_source_open_file(src, &id, path, sizeof(path)), fd);
	assert_true(fd >= 0);
	assert_string_equal(path, "/usr/lib/libgolden.so (deleted)");
	close(fd);
	id.gen = 8;
	WITH_LOADER(ANSWER_FILE, proc_source_open_file(src, &id, path, sizeof(path)), fd);
	assert_int_equal(fd, -ENOENT);
	assert_string_equal(path, "");
	assert_int_equal(test_fd_count(), before);
}

static void test_process_answer(void **state)
{
	char exe[64], *cgroup;
	size_t len;
	int rc;

	(void)state;
	WITH_LOADER(ANSWER_PROCESS, proc_source_process(src, 9, exe, sizeof(exe), &cgroup, &len), rc);
	assert_int_equal(rc, 0);
	assert_string_equal(exe, "/usr/bin/sleep");
	assert_non_null(cgroup);
	assert_int_equal(len, strlen("0::/system.slice/docker-0123.scope\n"));
	assert_memory_equal(cgroup, "0::/", 4);
	free(cgroup);
}

/* Pipelined: all three asked before any answer, answers matched by id in any order. */
static void test_many_at_once(void **state)
{
	static const uint32_t pids[3] = {10, 11, 12};
	struct loader_script ls = {pair[1], ANSWER_MANY, 0};
	int before = test_fd_count(), fds[3];
	struct stat a, b;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, fake_loader, &ls), 0);
	proc_source_open_maps_many(src, pids, 3, fds);
	pthread_join(t, NULL);
	assert_true(fds[0] >= 0);
	assert_int_equal(fds[1], -ENOENT);
	assert_true(fds[2] >= 0);
	/* Each fd is its own request's: /dev/null for the first, maps for the last. */
	assert_int_equal(fstat(fds[0], &a), 0);
	assert_true(S_ISCHR(a.st_mode));
	assert_int_equal(fstat(fds[2], &b), 0);
	assert_true(S_ISREG(b.st_mode));
	close(fds[0]);
	close(fds[2]);
	assert_int_equal(test_fd_count(), before);
}

static void test_silence_then_backoff(void **state)
{
	struct proc_source_stats st;
	struct timespec a, b;
	long ms;
	int rc;

	(void)state;
	WITH_LOADER(ANSWER_GARBAGE, proc_source_open_kallsyms(src), rc);
	assert_int_equal(rc, -EAGAIN);
	/* Backing off: the next call does not wait for the loader at all. */
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(proc_source_open_maps(src, 1), -EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	assert_true(ms < 50);
	proc_source_get_stats(src, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.unavailable, 1);
	/* After the back-off the loader is asked again. */
	usleep(1100 * 1000);
	WITH_LOADER(ANSWER_NOTHING, proc_source_open_maps(src, 1), rc);
	assert_int_equal(rc, -EAGAIN);
	proc_source_get_stats(src, &st);
	assert_int_equal(st.timeouts, 2);
}

/* A stop asked for ends the wait for a loader that does not answer (one that
 * never started): no wait of the whole timeout, the request fails as after a
 * timeout, and the stop is left for the program's own signal fd to read. */
static void test_stop_ends_the_wait(void **state)
{
	struct proc_source_stats st;
	struct proc_source *patient;
	struct timespec a, b;
	int stop[2], rc;
	long ms;
	char c;

	(void)state;
	assert_int_equal(pipe(stop), 0);
	patient = proc_source_broker_new(pair[0], 10000, stop[0]);
	assert_non_null(patient);
	assert_int_equal(write(stop[1], "x", 1), 1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	WITH_LOADER(ANSWER_NOTHING, proc_source_open_kallsyms(patient), rc);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_int_equal(rc, -EAGAIN);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	assert_true(ms < 5000); /* not the 10 s timeout */
	proc_source_get_stats(patient, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(read(stop[0], &c, 1), 1); /* polled, not read */
	proc_source_free(patient);
	close(stop[0]);
	close(stop[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fd_answer_and_stale_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silence_then_backoff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_ends_the_wait, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
