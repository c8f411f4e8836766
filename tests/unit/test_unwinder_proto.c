/*
 * The loader <-> lowprof-unwinder protocol: a real unwinder process on a
 * SOCK_SEQPACKET socketpair, fed good and malformed requests, and the
 * loader-side checks fed malformed replies (no fd, two fds, truncated
 * frames, oversized or unsealed tables, stale sequence numbers).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipc/lowprof_fds.h"
#include "loader/unwinder_client.h"
#include "ipc/unwinder_proto.h"

#define UNWINDER_BIN LOWPROF_BINARY_DIR "/bin/lowprof-unwinder"
#define MAX_TABLE (64u << 20)

struct peer {
	int sock;
	pid_t pid;
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
}

static int reap(struct peer *p)
{
	int status = 0;

	close(p->sock);
	assert_int_equal(waitpid(p->pid, &status, 0), p->pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

/* A real file through the client: table validated, segments sane. */
static void test_parse_ls_and_libc(void **state)
{
	static const char *const files[] = {"/bin/ls", "/lib/x86_64-linux-gnu/libc.so.6"};
	struct unwinder_client c;
	struct peer p;
	size_t i;

	(void)state;
	spawn_unwinder(&p);
	unwinder_client_init_fd(&c, p.sock, 5000);
	for (i = 0; i < 2; i++) {
		struct unwind_table t;
		struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
		struct unwinder_build_id bid;
		uint32_t nseg;
		char err[256];
		int fd = open_ro(files[i]);

		assert_int_equal(unwinder_client_parse(&c, fd, MAX_TABLE, &t, seg, &nseg, &bid, err,
						       sizeof(err)),
				 UNWINDER_OK);
		close(fd);
		assert_true(t.nrows > 1000);
		assert_true(nseg >= 1);
		/* The build id's place, as the walker reads it: libc is mapped
		 * here, and the bytes at its load bias + vaddr are the reply's. */
		assert_true(bid.offset != 0 && bid.vaddr != 0);
		if (i == 1) {
			/* libc's load bias from its link map (not dladdr of one of
			 * its functions: a sanitizer's interceptor answers for it). */
			void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
			struct link_map *lm = NULL;

			assert_non_null(libc);
			assert_int_equal(dlinfo(libc, RTLD_DI_LINKMAP, &lm), 0);
			assert_memory_equal((const char *)lm->l_addr + bid.vaddr, bid.bytes,
					    sizeof(bid.bytes));
			dlclose(libc);
		}
		unwind_table_free(&t);
	}
	/* A table bigger than the budget allows is refused, not truncated. */
	{
		struct unwind_table t;
		struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
		struct unwinder_build_id bid;
		uint32_t nseg;
		char err[256];
		int fd = open_ro("/lib/x86_64-linux-gnu/libc.so.6");

		assert_int_equal(unwinder_client_parse(&c, fd, 4096, &t, seg, &nseg, &bid, err, sizeof(err)),
				 UNWINDER_REFUSED);
		assert_non_null(strstr(err, "limit"));
		close(fd);
	}
	assert_int_equal(reap(&p), 0);
}

/* Not ELF: a failure reply with a reason, and the unwinder carries on. */
static void test_refused_file(void **state)
{
	struct unwinder_client c;
	struct unwind_table t;
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id bid;
	uint32_t nseg;
	char err[256];
	struct peer p;
	int fd;

	(void)state;
	spawn_unwinder(&p);
	unwinder_client_init_fd(&c, p.sock, 5000);
	fd = open_ro(LOWPROF_SOURCE_DIR "/README.md");
	assert_int_equal(unwinder_client_parse(&c, fd, MAX_TABLE, &t, seg, &nseg, &bid, err, sizeof(err)),
			 UNWINDER_REFUSED);
	close(fd);
	fd = open_ro("/bin/true");
	assert_int_equal(unwinder_client_parse(&c, fd, MAX_TABLE, &t, seg, &nseg, &bid, err, sizeof(err)),
			 UNWINDER_OK);
	unwind_table_free(&t);
	close(fd);
	assert_int_equal(reap(&p), 0);
}

/* Malformed requests are fatal for the unwinder (exit 1), never a crash. */
static void expect_unwinder_dies(const void *buf, size_t len, int nfds)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg;
	struct cmsghdr *cm;
	struct peer p;
	int fds[2];

	spawn_unwinder(&p);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		fds[0] = open_ro("/bin/true");
		fds[1] = open_ro("/bin/true");
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	}
	assert_true(sendmsg(p.sock, &msg, 0) == (ssize_t)len);
	if (nfds > 0) {
		close(fds[0]);
		close(fds[1]);
	}
	assert_int_equal(reap(&p), 1);
}

static void test_bad_requests(void **state)
{
	struct unwinder_request req = {UNWINDER_REQUEST_MAGIC, 1};
	struct unwinder_request bad = {0xdeadbeef, 1};
	uint8_t longer[sizeof(req) + 4] = {0};

	(void)state;
	expect_unwinder_dies(&req, sizeof(req), 0);      /* no fd */
	expect_unwinder_dies(&req, sizeof(req), 2);      /* two fds */
	expect_unwinder_dies(&bad, sizeof(bad), 1);      /* bad magic */
	expect_unwinder_dies(&req, sizeof(req) - 1, 1);  /* truncated */
	memcpy(longer, &req, sizeof(req));
	expect_unwinder_dies(longer, sizeof(longer), 1); /* oversized */
}

/* A fake unwinder: the test plays its part and sends crafted replies. */
static enum unwinder_result client_against(void (*reply)(int sock, uint32_t seq), char *err,
					   size_t errlen)
{
	struct unwinder_client c;
	struct unwind_table t;
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id bid;
	struct unwinder_request req;
	enum unwinder_result res;
	uint32_t nseg;
	int sv[2], fd, file = open_ro("/bin/true");
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char e[128];

		close(sv[0]);
		if (fdpass_recv(sv[1], &req, sizeof(req), &fd, e, sizeof(e)) != sizeof(req))
			_exit(1);
		close(fd);
		reply(sv[1], req.seq);
		pause();
		_exit(0);
	}
	close(sv[1]);
	unwinder_client_init_fd(&c, sv[0], 1000);
	res = unwinder_client_parse(&c, file, MAX_TABLE, &t, seg, &nseg, &bid, err, errlen);
	if (res == UNWINDER_OK)
		unwind_table_free(&t);
	close(file);
	close(sv[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return res;
}

static void base_reply(struct unwinder_reply *r, uint32_t seq)
{
	memset(r, 0, sizeof(*r));
	r->magic = UNWINDER_REPLY_MAGIC;
	r->seq = seq;
	r->nsegments = 1;
	r->seg[0].vaddr = 0x1000;
	r->seg[0].memsz = 0x1000;
	r->seg[0].offset = 0x1000;
	r->seg[0].filesz = 0x1000;
}

/* A well-formed table of two rows inside [0x1000, 0x2000) in a memfd. */
static int table_memfd(bool seal, size_t *len)
{
	struct unwind_row rows[2];
	struct unwind_table t = {.rows = rows, .nrows = 2};
	uint8_t *buf;
	int fd;
	char err[128];

	memset(rows, 0, sizeof(rows));
	rows[0].pc = 0x1000;
	rows[0].cfa_kind = UNWIND_CFA_RSP;
	rows[0].cfa_off = 8;
	rows[1].pc = 0x1100;
	assert_int_equal(unwind_table_serialize(&t, &buf, len, err, sizeof(err)), 0);
	fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(write(fd, buf, *len) == (ssize_t)*len);
	free(buf);
	if (seal)
		fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW);
	return fd;
}

static void reply_ok(int sock, uint32_t seq)
{
	struct unwinder_reply r;
	size_t len;
	int fd = table_memfd(true, &len);

	base_reply(&r, seq);
	r.table_len = len;
	fdpass_send(sock, &r, sizeof(r), fd);
}

static void reply_stale_then_ok(int sock, uint32_t seq)
{
	struct unwinder_reply r;

	base_reply(&r, seq - 1);
	r.status = EINVAL;
	r.nsegments = 0;
	fdpass_send(sock, &r, sizeof(r), -1);
	reply_ok(sock, seq);
}

static void reply_no_fd(int sock, uint32_t seq)
{
	struct unwinder_reply r;

	base_reply(&r, seq);
	r.table_len = 48;
	fdpass_send(sock, &r, sizeof(r), -1);
}

static void reply_two_fds(int sock, uint32_t seq)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct unwinder_reply r;
	struct iovec iov = {.iov_base = &r, .iov_len = sizeof(r)};
	struct msghdr msg;
	struct cmsghdr *cm;
	size_t len;
	int fds[2];

	fds[0] = table_memfd(true, &len);
	fds[1] = table_memfd(true, &len);
	base_reply(&r, seq);
	r.table_len = len;
	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	sendmsg(sock, &msg, 0);
}

static void reply_truncated(int sock, uint32_t seq)
{
	struct unwinder_reply r;
	size_t len;
	int fd = table_memfd(true, &len);

	base_reply(&r, seq);
	r.table_len = len;
	fdpass_send(sock, &r, offsetof(struct unwinder_reply, msg), fd);
}

static void reply_oversized(int sock, uint32_t seq)
{
	uint8_t big[sizeof(struct unwinder_reply) + 64];
	struct unwinder_reply r;
	size_t len;
	int fd = table_memfd(true, &len);

	base_reply(&r, seq);
	r.table_len = len;
	memset(big, 0, sizeof(big));
	memcpy(big, &r, sizeof(r));
	fdpass_send(sock, big, sizeof(big), fd);
}

static void reply_huge_table(int sock, uint32_t seq)
{
	struct unwinder_reply r;
	size_t len;
	int fd = table_memfd(true, &len);

	base_reply(&r, seq);
	r.table_len = (uint64_t)MAX_TABLE + 16;
	fdpass_send(sock, &r, sizeof(r), fd);
}

static void reply_unsealed(int sock, uint32_t seq)
{
	struct unwinder_reply r;
	size_t len;
	int fd = table_memfd(false, &len);

	base_reply(&r, seq);
	r.table_len = len;
	fdpass_send(sock, &r, sizeof(r), fd);
}

static void reply_wrong_len(int sock, uint32_t seq)
{
	struct unwinder_reply r;
	size_t len;
	int fd = table_memfd(true, &len);

	base_reply(&r, seq);
	r.table_len = len - 16;
	fdpass_send(sock, &r, sizeof(r), fd);
}

static void reply_rows_outside(int sock, uint32_t seq)
{
	struct unwinder_reply r;
	size_t len;
	int fd = table_memfd(true, &len);

	base_reply(&r, seq);
	r.seg[0].vaddr = 0x100000; /* the rows at 0x1000 are outside the code */
	r.table_len = len;
	fdpass_send(sock, &r, sizeof(r), fd);
}

static void reply_nothing(int sock, uint32_t seq)
{
	(void)sock;
	(void)seq;
}

static void test_bad_replies(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(client_against(reply_ok, err, sizeof(err)), UNWINDER_OK);
	assert_int_equal(client_against(reply_stale_then_ok, err, sizeof(err)), UNWINDER_OK);
	assert_int_equal(client_against(reply_no_fd, err, sizeof(err)), UNWINDER_REFUSED);
	assert_non_null(strstr(err, "without"));
	assert_int_equal(client_against(reply_two_fds, err, sizeof(err)), UNWINDER_REFUSED);
	assert_non_null(strstr(err, "more than one fd"));
	assert_int_equal(client_against(reply_truncated, err, sizeof(err)), UNWINDER_REFUSED);
	assert_int_equal(client_against(reply_oversized, err, sizeof(err)), UNWINDER_REFUSED);
	assert_non_null(strstr(err, "MSG_TRUNC"));
	assert_int_equal(client_against(reply_huge_table, err, sizeof(err)), UNWINDER_REFUSED);
	assert_int_equal(client_against(reply_unsealed, err, sizeof(err)), UNWINDER_REFUSED);
	assert_non_null(strstr(err, "sealed"));
	assert_int_equal(client_against(reply_wrong_len, err, sizeof(err)), UNWINDER_REFUSED);
	assert_int_equal(client_against(reply_rows_outside, err, sizeof(err)), UNWINDER_REFUSED);
	assert_non_null(strstr(err, "outside"));
	/* No answer in time: the file is the suspect (refused from now on). */
	assert_int_equal(client_against(reply_nothing, err, sizeof(err)), UNWINDER_STUCK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ls_and_libc),
		cmocka_unit_test(test_refused_file),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_bad_replies),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
