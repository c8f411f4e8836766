#define _GNU_SOURCE /* vasprintf */
#include "supervisor/component.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "ipc/lowprof_fds.h"

int component_find_binary(const char *program, const char *libexec_dir, char *out, size_t outlen,
			  char *err, size_t errlen)
{
	char self[PATH_MAX], dir[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		snprintf(dir, sizeof(dir), "%s", dirname(self));
		/* Beside us: the build tree. */
		snprintf(out, outlen, "%s/%s", dir, program);
		if (access(out, X_OK) == 0)
			return 0;
		/* BINDIR/../libexec/lowprof: an installation under any prefix (a package
		 * installs into /usr whatever prefix the build was configured with). */
		snprintf(out, outlen, "%s/../%s/%s", dir, COMPONENT_LIBEXEC_RELATIVE, program);
		if (access(out, X_OK) == 0)
			return 0;
	} else {
		snprintf(dir, sizeof(dir), "(unknown)");
	}
	snprintf(out, outlen, "%s/%s", libexec_dir, program);
	if (access(out, X_OK) == 0)
		return 0;
	snprintf(err, errlen, "cannot find %s: looked in %s, %s/../%s and %s", program, dir, dir,
		 COMPONENT_LIBEXEC_RELATIVE, libexec_dir);
	return -1;
}

void component_init(struct component *c, const char *name, const struct restart_settings *rs)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->notify_fd = -1;
	c->state = COMPONENT_STOPPED;
	c->pings = true;
	restart_state_init(&c->restart, rs);
}

void component_add_arg(struct component *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (c->argc + 1 >= COMPONENT_MAX_ARGS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s != NULL)
		c->argv[c->argc++] = s;
}

void component_add_fd(struct component *c, int source, int target)
{
	if (c->nfds < COMPONENT_MAX_FDS) {
		c->fds[c->nfds].source = source;
		c->fds[c->nfds].target = target;
		c->nfds++;
	}
}

void component_free_args(struct component *c)
{
	size_t i;

	for (i = 0; i < c->argc; i++)
		free(c->argv[i]);
	c->argc = 0;
}

/* In the child: put every fd on its fixed number without clobbering another
 * source that happens to sit there; dup2 clears close-on-exec on the targets. */
static void component_child_fds(const struct component_fd *fds, size_t nfds)
{
	int moved[COMPONENT_MAX_FDS + 1];
	size_t i;

	for (i = 0; i < nfds; i++) {
		moved[i] = fcntl(fds[i].source, F_DUPFD_CLOEXEC, 64);
		if (moved[i] < 0)
			_exit(LOWPROF_EXIT_FAILURE);
	}
	for (i = 0; i < nfds; i++) {
		if (dup2(moved[i], fds[i].target) < 0)
			_exit(LOWPROF_EXIT_FAILURE);
		close(moved[i]);
	}
}

int component_spawn(struct component *c, int64_t now_ms)
{
	struct component_fd fds[COMPONENT_MAX_FDS + 1];
	int chan[2];
	sigset_t none;
	pid_t pid, parent;

	/* SEQPACKET: every message is one line, no framing to get wrong. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) != 0)
		return -errno;
	memcpy(fds, c->fds, c->nfds * sizeof(fds[0]));
	fds[c->nfds].source = chan[1];
	fds[c->nfds].target = LOWPROF_FD_NOTIFY;
	c->argv[c->argc] = NULL;
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		int rc = -errno;

		close(chan[0]);
		close(chan[1]);
		return rc;
	}
	if (pid == 0) {
		component_child_fds(fds, c->nfds + 1);
		/* The supervisor blocks signals for its signalfd; the child starts clean. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (c->run_as != NULL) {
			char err[256];

			if (privdrop_apply(c->run_as, err, sizeof(err)) != 0) {
				fprintf(stderr, "lowprof: %s: %s\n", c->name, err);
				_exit(LOWPROF_EXIT_CONFIG);
			}
		}
		/* If the supervisor is killed, each component stops cleanly (SIGTERM) instead
		 * of running on unsupervised; a supervisor already gone means stop now. After
		 * the switch to --user: changing credentials clears the parent-death signal. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(LOWPROF_EXIT_FAILURE);
		execv(c->path, c->argv);
		fprintf(stderr, "lowprof: exec %s: %s\n", c->path, strerror(errno));
		_exit(LOWPROF_EXIT_CONFIG);
	}
	close(chan[1]);
	fcntl(chan[0], F_SETFL, O_NONBLOCK);
	if (c->notify_fd >= 0)
		close(c->notify_fd);
	c->notify_fd = chan[0];
	c->pid = pid;
	c->state = COMPONENT_STARTING;
	c->started_ms = now_ms;
	c->last_message_ms = now_ms;
	c->suspect_ms = 0;
	c->kill_reason_liveness = false;
	return 0;
}

static void component_store_state(struct component *c, const struct notify_message *m)
{
	memcpy(c->state_pairs, m->pairs, m->npairs * sizeof(m->pairs[0]));
	c->nstate_pairs = m->npairs;
}

bool component_read_messages(struct component *c, int64_t now_ms)
{
	struct notify_message m;
	char buf[NOTIFY_MESSAGE_MAX + 2], err[128];
	bool became_ready = false;
	ssize_t n;

	while (c->notify_fd >= 0) {
		n = recv(c->notify_fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0)
			break; /* EAGAIN: nothing more for now */
		if (n == 0) {
			/* The component closed its end (it is exiting). */
			close(c->notify_fd);
			c->notify_fd = -1;
			break;
		}
		c->last_message_ms = now_ms;
		if ((size_t)n > sizeof(buf) ||
		    notify_message_parse(buf, (size_t)n, &m, err, sizeof(err)) != 0) {
			if (c->bad_messages++ < 5)
				log_warn("%s sent a bad notification (%s): ignored", c->name,
					 (size_t)n > sizeof(buf) ? "too long" : err);
			continue;
		}
		if (m.kind == NOTIFY_READY && c->state == COMPONENT_STARTING) {
			c->state = COMPONENT_RUNNING;
			c->ready_ms = now_ms;
			c->ever_ready = true;
			restart_policy_ready(&c->restart, now_ms);
			became_ready = true;
		} else if (m.kind == NOTIFY_STATE) {
			component_store_state(c, &m);
		}
	}
	return became_ready;
}

void component_send(struct component *c, const char *msg)
{
	if (c->notify_fd >= 0)
		send(c->notify_fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void component_describe_exit(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "stopped (status 0x%x)", status);
}

const char *component_state_name(enum component_state s)
{
	static const char *const names[] = {"stopped", "starting", "running", "backoff", "failed"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

int64_t component_run_delay_ns(const struct component *c)
{
	char path[64], buf[128];
	unsigned long long run_ns, wait_ns;
	ssize_t n;
	int fd;

	if (c->pid == 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)c->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run_ns, &wait_ns) != 2 || wait_ns > INT64_MAX)
		return -1;
	return (int64_t)wait_ns;
}
