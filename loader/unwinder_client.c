/* unwinder_client: send a file to lowprof-unwinder, check what comes back. */
#define _GNU_SOURCE
#include "loader/unwinder_client.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "ipc/lowprof_fds.h"
#include "loader/unwind_maps.h"
#include "lowprof_build_config.h"

#define UNWINDER_TIMEOUT_MS 1000
#define UNWINDER_QUIET_NS (10ULL * 1000000000ULL)
#define UNWINDER_RESPAWN_NS 5000000000ULL
#define UNWINDER_NOBODY 65534

static uint64_t uc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int uc_find_binary(char *out, size_t outlen)
{
	char self[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		snprintf(out, outlen, "%s/" UNWINDER_PROGRAM, dirname(self));
		if (access(out, X_OK) == 0)
			return 0;
	}
	snprintf(out, outlen, "%s/" UNWINDER_PROGRAM, LOWPROF_LIBEXECDIR);
	return access(out, X_OK) == 0 ? 0 : -1;
}

/* In the child, before exec: nothing of the loader's privilege may survive. */
static void uc_child(int sock, const char *path)
{
	char *const argv[] = {(char *)UNWINDER_PROGRAM, NULL};
	sigset_t none;

	if (dup2(sock, LOWPROF_FD_UNWIND) != LOWPROF_FD_UNWIND)
		_exit(127);
	/* Only stdio and the socket: the loader's inherited fds stay with it. */
	close_range(3, LOWPROF_FD_UNWIND - 1, 0);
	close_range(LOWPROF_FD_UNWIND + 1, ~0U, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The loader blocks SIGTERM and friends for its signalfd: not the child. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (geteuid() == 0 || getuid() == 0) {
		/* Changing every uid away from 0 clears all capability sets. */
		if (setgroups(0, NULL) != 0 ||
		    setresgid(UNWINDER_NOBODY, UNWINDER_NOBODY, UNWINDER_NOBODY) != 0 ||
		    setresuid(UNWINDER_NOBODY, UNWINDER_NOBODY, UNWINDER_NOBODY) != 0)
			_exit(127);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		_exit(127);
	execv(path, argv);
	_exit(127);
}

static int uc_spawn(struct unwinder_client *c, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int sv[2];
	pid_t pid;

	c->next_spawn_ns = uc_now_ns() + UNWINDER_RESPAWN_NS;
	if (uc_find_binary(path, sizeof(path)) != 0) {
		snprintf(err, errlen, "lowprof-unwinder not found next to the loader nor in %s",
			 LOWPROF_LIBEXECDIR);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0)
		uc_child(sv[1], path);
	close(sv[1]);
	if (c->sock >= 0)
		close(c->sock);
	c->sock = sv[0];
	c->child = pid;
	c->spawns++;
	log_info("started %s (pid %d) to parse unwind tables", path, (int)pid);
	return 0;
}

void unwinder_client_init_fd(struct unwinder_client *c, int sock, unsigned timeout_ms)
{
	memset(c, 0, sizeof(*c));
	c->sock = sock;
	c->child = -1;
	c->timeout_ms = timeout_ms;
}

int unwinder_client_init(struct unwinder_client *c, char *err, size_t errlen)
{
	struct stat st;

	unwinder_client_init_fd(c, -1, UNWINDER_TIMEOUT_MS);
	/* The supervisor's socket, if it runs the unwinder as a component. */
	if (fstat(LOWPROF_FD_UNWIND, &st) == 0 && S_ISSOCK(st.st_mode)) {
		fcntl(LOWPROF_FD_UNWIND, F_SETFD, FD_CLOEXEC);
		c->sock = LOWPROF_FD_UNWIND;
		return 0;
	}
	return uc_spawn(c, err, errlen);
}

/* Our own unwinder died (a hostile file may have crashed it): reap, restart later. */
static void uc_check_child(struct unwinder_client *c)
{
	int status;
	char err[256];

	if (c->child <= 0)
		return;
	if (waitpid(c->child, &status, WNOHANG) == c->child) {
		log_warn("lowprof-unwinder (pid %d) exited (status 0x%x)", (int)c->child, status);
		c->child = 0;
	}
	if (c->child == 0 && uc_now_ns() >= c->next_spawn_ns) {
		if (uc_spawn(c, err, sizeof(err)) != 0)
			log_warn("%s", err);
	}
}

/* Wait for the reply to c->seq; older replies (of requests that timed out) are dropped. */
static enum unwinder_result uc_wait_reply(struct unwinder_client *c, struct unwinder_reply *r,
					  size_t *len, int *memfd, char *err, size_t errlen)
{
	uint64_t deadline = uc_now_ns() + (uint64_t)c->timeout_ms * 1000000ULL;
	struct pollfd pfd = {.fd = c->sock, .events = POLLIN};
	ssize_t n;
	int rc;

	for (;;) {
		uint64_t now = uc_now_ns();

		if (now >= deadline) {
			c->timeouts++;
			snprintf(err, errlen, "no reply from lowprof-unwinder in %u ms", c->timeout_ms);
			return UNWINDER_STUCK;
		}
		rc = poll(&pfd, 1, (int)((deadline - now) / 1000000ULL) + 1);
		if (rc < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return UNWINDER_UNAVAILABLE;
		}
		if (rc <= 0)
			continue;
		n = fdpass_recv(c->sock, r, sizeof(*r), memfd, err, errlen);
		if (n == 0) {
			/* It died while working on our file: a parse past its CPU limit. */
			snprintf(err, errlen, "lowprof-unwinder closed its socket");
			return UNWINDER_STUCK;
		}
		if (n == -EPROTO)
			return UNWINDER_REFUSED; /* err says what was wrong; fds closed */
		if (n < 0)
			return UNWINDER_UNAVAILABLE;
		if ((size_t)n >= offsetof(struct unwinder_reply, status) && r->seq != c->seq) {
			if (*memfd >= 0)
				close(*memfd);
			*memfd = -1;
			continue; /* a late reply to an abandoned request */
		}
		*len = (size_t)n;
		return UNWINDER_OK;
	}
}

/* The table's bytes, checked by the protocol (seals, size), decoded and validated here. */
static int uc_read_table(int memfd, size_t len, size_t max_table, struct unwind_table *t,
			 char *err, size_t errlen)
{
	const void *bytes;
	int rc;

	rc = unwinder_table_memfd_map(memfd, len, max_table, &bytes, err, errlen);
	if (rc != 0)
		return rc;
	rc = unwind_table_deserialize(bytes, len, t, err, errlen);
	munmap((void *)bytes, len);
	return rc;
}

enum unwinder_result unwinder_client_parse(struct unwinder_client *c, int file_fd,
					   size_t max_table, struct unwind_table *t,
					   struct unwinder_segment *seg, uint32_t *nseg,
					   struct unwinder_build_id *bid, char *err, size_t errlen)
{
	struct unwinder_request req;
	struct unwinder_reply r;
	enum unwinder_result res;
	size_t len = 0;
	int memfd = -1, rc;

	memset(t, 0, sizeof(*t));
	*nseg = 0;
	memset(bid, 0, sizeof(*bid));
	uc_check_child(c);
	if (uc_now_ns() < c->quiet_until_ns) {
		snprintf(err, errlen, "lowprof-unwinder did not answer recently");
		return UNWINDER_UNAVAILABLE;
	}
	if (c->sock < 0 || c->child == 0) {
		snprintf(err, errlen, "lowprof-unwinder is not running");
		return UNWINDER_UNAVAILABLE;
	}
	c->requests++;
	req.magic = UNWINDER_REQUEST_MAGIC;
	req.seq = ++c->seq;
	rc = fdpass_send(c->sock, &req, sizeof(req), file_fd);
	if (rc != 0) {
		c->failures++;
		snprintf(err, errlen, "sending to lowprof-unwinder: %s", strerror(-rc));
		return UNWINDER_UNAVAILABLE;
	}
	memset(&r, 0, sizeof(r));
	res = uc_wait_reply(c, &r, &len, &memfd, err, errlen);
	if (res == UNWINDER_UNAVAILABLE || res == UNWINDER_STUCK) {
		/* A dead or stuck unwinder must not stall the loader's loop once per file:
		 * those files fall back to frame pointers until it answers again. */
		c->quiet_until_ns = uc_now_ns() + UNWINDER_QUIET_NS;
		goto out;
	}
	if (res != UNWINDER_OK)
		goto out;
	res = UNWINDER_REFUSED;
	if (unwinder_reply_check(&r, len, memfd, max_table, err, errlen) != 0)
		goto out;
	if (r.status != 0) {
		snprintf(err, errlen, "%s", r.msg);
		goto out;
	}
	if (uc_read_table(memfd, (size_t)r.table_len, max_table, t, err, errlen) != 0)
		goto out;
	if (unwind_maps_check_table(t, r.seg, r.nsegments, err, errlen) != 0) {
		unwind_table_free(t);
		goto out;
	}
	memcpy(seg, r.seg, r.nsegments * sizeof(*seg));
	*nseg = r.nsegments;
	*bid = r.build_id;
	res = UNWINDER_OK;
out:
	if (memfd >= 0)
		close(memfd);
	if (res == UNWINDER_REFUSED)
		c->refused++;
	return res;
}

void unwinder_client_fini(struct unwinder_client *c)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
	if (c->child > 0) {
		kill(c->child, SIGTERM);
		waitpid(c->child, NULL, 0);
	}
	c->child = -1;
}
