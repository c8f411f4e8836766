/*
 * lowprof-unwinder: turns ELF files into unwind tables for the loader, so
 * that parsing untrusted files never happens in a process holding
 * capabilities.
 *
 * Inherited fd LOWPROF_FD_UNWIND: a SOCK_SEQPACKET socket to the loader;
 * LOWPROF_FD_NOTIFY (optional): "ready" once started (ipc/notify.h). No
 * liveness pings: it sleeps in recvmsg between requests.
 * Per request (one fd: the file) it answers with one reply: the table in a
 * sealed memfd, or the reason the file was refused (ipc/unwinder_proto.h).
 * It keeps no state between requests. A malformed request is fatal: the
 * loader never sends one, so a bad message means something is wrong.
 *
 * Syscalls it needs (for the seccomp filter to come): recvmsg, sendmsg,
 * pread64, fstat/newfstatat, mmap, munmap, brk, memfd_create, write,
 * fcntl (F_ADD_SEALS), close, exit_group.
 *
 * Exit codes: 0 the loader closed the socket, 1 protocol or system error,
 * 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/heap_bound.h"
#include "common/log.h"
#include "ipc/lowprof_fds.h"
#include "ipc/notify.h"
#include "ipc/unwinder_proto.h"
#include "seccomp/sandbox.h"
#include "unwind/unwind_table.h"
#include "unwinder/exec_segments.h"

/* The serialised table in a memfd sealed so that the loader can trust its size
 * and content stay what it checks. -1 with reply->msg set on failure. */
static int unwinder_table_memfd(const struct unwind_table *t, struct unwinder_reply *reply)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int fd;

	if (unwind_table_serialize(t, &buf, &len, reply->msg, sizeof(reply->msg)) != 0)
		return -1;
	fd = unwinder_table_memfd_create(buf, len, reply->msg, sizeof(reply->msg));
	free(buf);
	if (fd < 0)
		return -1;
	reply->table_len = len;
	return fd;
}

/*
 * What one file may cost: CPU time per request (ITIMER_PROF, whose SIGPROF
 * ends the process: the supervisor starts a new one, the loader refuses the
 * file), about the loader's wait for a reply; and address space for the whole
 * process (a table is at most a few hundred MiB).
 */
#define UNWINDER_CPU_PER_REQUEST_MS 900
#define UNWINDER_ADDRESS_SPACE (4ULL << 30)

static void unwinder_cpu_limit(unsigned ms)
{
	struct itimerval it = {.it_value = {ms / 1000, (ms % 1000) * 1000}};

	/* 0 disarms. A failure leaves the loader's timeout as the only limit. */
	if (setitimer(ITIMER_PROF, &it, NULL) != 0)
		log_warn("setitimer: %s", strerror(errno));
}

static void unwinder_memory_limit(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
	/* AddressSanitizer reserves terabytes of address space. */
	return;
#endif
#endif
	struct rlimit rl = {UNWINDER_ADDRESS_SPACE, UNWINDER_ADDRESS_SPACE};

	if (setrlimit(RLIMIT_AS, &rl) != 0)
		log_warn("RLIMIT_AS: %s", strerror(errno));
}

/* Build the reply for one file; returns the memfd to send, or -1 (reply says why). */
static int unwinder_handle(int file_fd, struct unwinder_reply *reply)
{
	struct unwind_table t;
	int memfd;

	memset(&t, 0, sizeof(t));
	if (unwinder_exec_segments(file_fd, reply->seg, &reply->nsegments, &reply->build_id,
				   reply->msg, sizeof(reply->msg)) != 0) {
		reply->status = EINVAL;
		return -1;
	}
	if (unwind_table_build_fd(file_fd, &t, reply->msg, sizeof(reply->msg)) != 0) {
		reply->status = EINVAL;
		return -1;
	}
	memfd = unwinder_table_memfd(&t, reply);
	unwind_table_free(&t);
	if (memfd < 0) {
		reply->status = EIO;
		return -1;
	}
	return memfd;
}

int main(int argc, char **argv)
{
	struct unwinder_reply reply;
	uint8_t buf[sizeof(struct unwinder_request) + 1]; /* one more: an oversized request shows */
	char err[256];
	uint32_t seq;
	ssize_t n;
	int fd, memfd, rc;
	bool seccomp_log;

	heap_bound();
	log_init("lowprof-unwinder", LOG_LEVEL_INFO);
	sandbox_not_dumpable("unwinder");
	seccomp_log = sandbox_take_seccomp_log(&argc, argv);
	if (argc != 1) {
		fprintf(stderr, "usage: lowprof-unwinder (started by lowprof with its socket on fd %d)\n",
			LOWPROF_FD_UNWIND);
		return LOWPROF_EXIT_USAGE;
	}
	/* Before the first request (an untrusted file) is read. */
	unwinder_memory_limit();
	sandbox_enter("unwinder", seccomp_log);
	/* s6-style readiness when the supervisor passed a notification fd. */
	notify_ready();
	for (;;) {
		n = fdpass_recv(LOWPROF_FD_UNWIND, buf, sizeof(buf), &fd, err, sizeof(err));
		if (n == 0)
			return LOWPROF_EXIT_OK; /* the loader is gone */
		if (n < 0)
			fatal(LOWPROF_EXIT_FAILURE, "%s", err);
		if (unwinder_request_check(buf, (size_t)n, fd, &seq, err, sizeof(err)) != 0) {
			if (fd >= 0)
				close(fd);
			fatal(LOWPROF_EXIT_FAILURE, "protocol error: %s", err);
		}
		memset(&reply, 0, sizeof(reply));
		reply.magic = UNWINDER_REPLY_MAGIC;
		reply.seq = seq;
		unwinder_cpu_limit(UNWINDER_CPU_PER_REQUEST_MS);
		memfd = unwinder_handle(fd, &reply);
		unwinder_cpu_limit(0);
		close(fd);
		if (memfd < 0) {
			reply.nsegments = 0;
			memset(&reply.build_id, 0, sizeof(reply.build_id));
		}
		/* The table was freed: give its heap back between requests (a large
		 * library's table left ~8 MiB resident in an idle unwinder). */
		(void)heap_bound_trim();
		rc = fdpass_send(LOWPROF_FD_UNWIND, &reply, sizeof(reply), memfd);
		if (memfd >= 0)
			close(memfd);
		if (rc == -EPIPE || rc == -ECONNRESET)
			return LOWPROF_EXIT_OK;
		if (rc != 0)
			fatal(LOWPROF_EXIT_FAILURE, "sending a reply: %s", strerror(-rc));
	}
}
