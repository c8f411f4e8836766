/*
 * The symbol-source wire (ipc/sym_wire.c) over a real SOCK_SEQPACKET
 * socketpair: every request kind round-trips; malformed requests and replies
 * (garbage, oversized, an fd where none belongs, id 0, no kind, bounds) are
 * refused with a reason, every fd that came with them is closed, and the next
 * message is still read intact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_fd_count.h"

#include "ipc/fd_pass.h"
#include "ipc/sym_wire.h"

static int pair[2];

static int setup(void **state)
{
	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
	assert_int_equal(fcntl(pair[1], F_SETFL, O_NONBLOCK), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(pair[0]);
	close(pair[1]);
	return 0;
}

static void send_maps(int sock, uint32_t id, uint32_t pid)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__MapsRequest m = LOWPROF__SYM__MAPS_REQUEST__INIT;

	m.pid = pid;
	req.id = id;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS;
	req.maps = &m;
	assert_int_equal(sym_wire_send_request(sock, &req), 0);
}

/* The next request is the valid maps request (id, pid). */
static void expect_maps(uint32_t id, uint32_t pid)
{
	Lowprof__Sym__SymRequest *got;
	char err[160];

	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), 1);
	assert_int_equal(got->id, id);
	assert_int_equal(got->what_case, LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS);
	assert_int_equal(got->maps->pid, pid);
	sym_wire_free_request(got);
}

static void test_every_kind_round_trips(void **state)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT, *got;
	Lowprof__Sym__MappedFileRequest mf = LOWPROF__SYM__MAPPED_FILE_REQUEST__INIT;
	Lowprof__Sym__DebugFileRequest df = LOWPROF__SYM__DEBUG_FILE_REQUEST__INIT;
	Lowprof__Sym__KallsymsRequest ks = LOWPROF__SYM__KALLSYMS_REQUEST__INIT;
	Lowprof__Sym__ProcessRequest pr = LOWPROF__SYM__PROCESS_REQUEST__INIT;
	char err[160];

	(void)state;
	mf.pid = 42;
	mf.start = 0x400000;
	mf.end = 0x401000;
	mf.inode = 7;
	req.id = 9;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE;
	req.mapped_file = &mf;
	assert_int_equal(sym_wire_send_request(pair[0], &req), 0);
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), 1);
	assert_int_equal(got->what_case, LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE);
	assert_int_equal(got->mapped_file->start, 0x400000);
	assert_int_equal(got->mapped_file->inode, 7);
	assert_int_equal(sym_wire_check_request(got, err, sizeof(err)), 0);
	assert_string_equal(sym_wire_request_name(got->what_case), "mapped_file");
	sym_wire_free_request(got);

	df.build_id = "0123456789abcdef";
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_DEBUG_FILE;
	req.debug_file = &df;
	assert_int_equal(sym_wire_send_request(pair[0], &req), 0);
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), 1);
	assert_string_equal(got->debug_file->build_id, "0123456789abcdef");
	assert_int_equal(sym_wire_check_request(got, err, sizeof(err)), 0);
	sym_wire_free_request(got);

	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_KALLSYMS;
	req.kallsyms = &ks;
	assert_int_equal(sym_wire_send_request(pair[0], &req), 0);
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), 1);
	assert_int_equal(got->what_case, LOWPROF__SYM__SYM_REQUEST__WHAT_KALLSYMS);
	sym_wire_free_request(got);

	pr.pid = 1;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_PROCESS;
	req.process = &pr;
	assert_int_equal(sym_wire_send_request(pair[0], &req), 0);
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), 1);
	assert_int_equal(got->process->pid, 1);
	sym_wire_free_request(got);

	/* A file by identity: every field arrives as sent (a 64-bit inode too). */
	{
		Lowprof__Sym__FileRequest fr = LOWPROF__SYM__FILE_REQUEST__INIT;

		fr.dev = (259u << 20) | 3;
		fr.ino = 0x123456789abull;
		fr.gen = 0xdeadbeef;
		req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_FILE;
		req.file = &fr;
		assert_int_equal(sym_wire_send_request(pair[0], &req), 0);
		assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), 1);
		assert_int_equal(got->what_case, LOWPROF__SYM__SYM_REQUEST__WHAT_FILE);
		assert_int_equal(got->file->dev, (259u << 20) | 3);
		assert_int_equal(got->file->ino, 0x123456789abull);
		assert_int_equal(got->file->gen, 0xdeadbeef);
		assert_int_equal(sym_wire_check_request(got, err, sizeof(err)), 0);
		assert_string_equal(sym_wire_request_name(got->what_case), "file");
		sym_wire_free_request(got);
	}

	/* Nothing left: a non-blocking read says so. */
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), -EAGAIN);
}

static void test_check_request_bounds(void **state)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__MapsRequest m = LOWPROF__SYM__MAPS_REQUEST__INIT;
	Lowprof__Sym__MappedFileRequest mf = LOWPROF__SYM__MAPPED_FILE_REQUEST__INIT;
	Lowprof__Sym__DebugFileRequest df = LOWPROF__SYM__DEBUG_FILE_REQUEST__INIT;
	/* The last: 130 hex digits, two past the longest build id taken. */
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	static const char *const bad_ids[] = {"", "a", "abc", "ABCD", "../etc", "ab/cd", "abcg",
					      HEX64 HEX64 "00"};
#undef HEX64
	char err[160];
	size_t i;

	(void)state;
	req.id = 1;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS;
	req.maps = &m;
	m.pid = 0;
	assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pid"));
	m.pid = SYM_WIRE_MAX_PID + 1;
	assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), -EINVAL);
	m.pid = SYM_WIRE_MAX_PID;
	assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), 0);

	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE;
	req.mapped_file = &mf;
	mf.pid = 5;
	mf.start = mf.end = 0x1000;
	mf.inode = 3;
	assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), -EINVAL);
	mf.end = 0x2000;
	mf.inode = 0;
	assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), -EINVAL);
	mf.inode = 3;
	assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), 0);

	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_DEBUG_FILE;
	req.debug_file = &df;
	for (i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		df.build_id = (char *)bad_ids[i];
		assert_false(sym_wire_build_id_valid(bad_ids[i]));
		assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), -EINVAL);
	}
	assert_true(sym_wire_build_id_valid("ab"));

	/* A file: inode 0 and device 0:0 name nothing the BPF program reports. */
	{
		Lowprof__Sym__FileRequest fr = LOWPROF__SYM__FILE_REQUEST__INIT;

		req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_FILE;
		req.file = &fr;
		fr.dev = 2049;
		fr.ino = 0;
		assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "inode 0"));
		fr.ino = 12;
		fr.dev = 0;
		assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "device"));
		fr.dev = 0xffffffffu;
		fr.gen = 0xffffffffu;
		assert_int_equal(sym_wire_check_request(&req, err, sizeof(err)), 0);
	}
}

static void test_malformed_requests_refused(void **state)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT, *got;
	Lowprof__Sym__MapsRequest m = LOWPROF__SYM__MAPS_REQUEST__INIT;
	uint8_t junk[64], big[SYM_WIRE_MAX_REQUEST + 100], packed[64];
	char err[160];
	int before = test_fd_count(), devnull, i;

	(void)state;
	/* Garbage protobuf. */
	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (uint8_t)(0xff - i);
	assert_int_equal(fdpass_send(pair[0], junk, sizeof(junk), -1), 0);
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), -EBADMSG);
	assert_null(got);
	send_maps(pair[0], 1, 100);
	expect_maps(1, 100);

	/* Longer than any request. */
	memset(big, 0, sizeof(big));
	assert_int_equal(fdpass_send(pair[0], big, sizeof(big), -1), 0);
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "longer"));

	/* A valid request with an fd attached: refused, the fd closed here. */
	m.pid = 3;
	req.id = 2;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS;
	req.maps = &m;
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(devnull >= 0);
	assert_int_equal(fdpass_send(pair[0], packed, lowprof__sym__sym_request__pack(&req, packed), devnull), 0);
	close(devnull);
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "file descriptor"));

	/* id 0, and no kind at all. */
	req.id = 0;
	assert_int_equal(fdpass_send(pair[0], packed, lowprof__sym__sym_request__pack(&req, packed), -1), 0);
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), -EBADMSG);
	req.id = 5;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT__NOT_SET;
	assert_int_equal(fdpass_send(pair[0], packed, lowprof__sym__sym_request__pack(&req, packed), -1), 0);
	assert_int_equal(sym_wire_recv_request(pair[1], &got, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "kind"));

	/* Still in step, and nothing leaked. */
	send_maps(pair[0], 3, 200);
	expect_maps(3, 200);
	assert_int_equal(test_fd_count(), before);
}

static void test_replies(void **state)
{
	Lowprof__Sym__SymReply rep = LOWPROF__SYM__SYM_REPLY__INIT, *got;
	static char cgroup[SYM_WIRE_MAX_CGROUP + 1];
	char err[160], buf[8];
	int before = test_fd_count(), fd, pipefd[2];

	(void)state;
	/* Success with an fd: the fd works on the other side. */
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	assert_int_equal(write(pipefd[1], "hi", 2), 2);
	rep.id = 4;
	rep.exe_path = "/usr/bin/x";
	assert_int_equal(sym_wire_send_reply(pair[1], &rep, pipefd[0]), 0);
	assert_int_equal(sym_wire_recv_reply(pair[0], &got, &fd, err, sizeof(err)), 1);
	assert_int_equal(got->id, 4);
	assert_string_equal(got->exe_path, "/usr/bin/x");
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 2);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	sym_wire_free_reply(got);
	close(pipefd[0]);

	/* A failure that carries an fd anyway: refused, the fd closed. */
	rep.error = ENOENT;
	assert_int_equal(sym_wire_send_reply(pair[1], &rep, pipefd[1]), 0);
	assert_int_equal(sym_wire_recv_reply(pair[0], &got, &fd, err, sizeof(err)), -EPROTO);
	assert_int_equal(fd, -1);
	assert_null(got);
	close(pipefd[1]);

	/* A negative error, id 0, an over-long cgroup. */
	rep.error = -1;
	assert_int_equal(sym_wire_send_reply(pair[1], &rep, -1), 0);
	assert_int_equal(sym_wire_recv_reply(pair[0], &got, &fd, err, sizeof(err)), -EPROTO);
	rep.error = 0;
	rep.id = 0;
	assert_int_equal(sym_wire_send_reply(pair[1], &rep, -1), 0);
	assert_int_equal(sym_wire_recv_reply(pair[0], &got, &fd, err, sizeof(err)), -EPROTO);
	rep.id = 6;
	memset(cgroup, 'a', sizeof(cgroup));
	rep.cgroup.data = (uint8_t *)cgroup;
	rep.cgroup.len = sizeof(cgroup);
	assert_int_equal(sym_wire_send_reply(pair[1], &rep, -1), 0);
	assert_int_equal(sym_wire_recv_reply(pair[0], &got, &fd, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "cgroup"));

	/* A file's path over the bound. */
	rep.cgroup.len = 0;
	memset(cgroup, 'p', SYM_WIRE_MAX_EXE_PATH + 1);
	cgroup[SYM_WIRE_MAX_EXE_PATH + 1] = '\0';
	rep.exe_path = "";
	rep.path = cgroup;
	assert_int_equal(sym_wire_send_reply(pair[1], &rep, -1), 0);
	assert_int_equal(sym_wire_recv_reply(pair[0], &got, &fd, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "too long"));
	rep.path = "/usr/lib/libc.so.6 (deleted)";
	assert_int_equal(sym_wire_send_reply(pair[1], &rep, -1), 0);
	assert_int_equal(sym_wire_recv_reply(pair[0], &got, &fd, err, sizeof(err)), 1);
	assert_string_equal(got->path, "/usr/lib/libc.so.6 (deleted)");
	sym_wire_free_reply(got);

	/* Garbage. */
	assert_int_equal(fdpass_send(pair[1], "\xff\xff\xff\xff", 4, -1), 0);
	assert_int_equal(sym_wire_recv_reply(pair[0], &got, &fd, err, sizeof(err)), -EBADMSG);

	/* A failure reply is fine, and everything is still in step. */
	rep.cgroup.len = 0;
	rep.error = EACCES;
	rep.reason = "not mapped";
	assert_int_equal(sym_wire_send_reply(pair[1], &rep, -1), 0);
	assert_int_equal(sym_wire_recv_reply(pair[0], &got, &fd, err, sizeof(err)), 1);
	assert_int_equal(got->error, EACCES);
	assert_string_equal(got->reason, "not mapped");
	sym_wire_free_reply(got);
	assert_int_equal(test_fd_count(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_kind_round_trips, setup, teardown),
		cmocka_unit_test(test_check_request_bounds),
		cmocka_unit_test_setup_teardown(test_malformed_requests_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replies, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
