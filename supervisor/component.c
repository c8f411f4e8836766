#define _GNU_SOURCE /* vasprintf, pipe2 */
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
#include <sys/wait.h>
#include <unistd.h>

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
		snprintf(out, outlen, "%s/%s", dir, program);
		if (access(out, X_OK) == 0)
			return 0;
	} else {
		snprintf(dir, sizeof(dir), "(unknown)");
	}
	snprintf(out, outlen, "%s/%s", libexec_dir, program);
	if (access(out, X_OK) == 0)
		return 0;
	snprintf(err, errlen, "cannot find %s: looked in %s and %s", program, dir, libexec_dir);
	return -1;
}

void component_init(struct component *c, const char *name)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->notify_fd = -1;
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
 * source that happens to sit there, and clear close-on-exec on the targets. */
static void component_child_fds(struct component *c)
{
	int moved[COMPONENT_MAX_FDS];
	size_t i;

	for (i = 0; i < c->nfds; i++) {
		moved[i] = fcntl(c->fds[i].source, F_DUPFD_CLOEXEC, 64);
		if (moved[i] < 0)
			_exit(LOWPROF_EXIT_FAILURE);
	}
	for (i = 0; i < c->nfds; i++) {
		if (dup2(moved[i], c->fds[i].target) < 0)
			_exit(LOWPROF_EXIT_FAILURE);
		close(moved[i]);
	}
}

int component_spawn(struct component *c)
{
	int pipefd[2];
	sigset_t all;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -errno;
	c->argv[c->argc] = NULL;
	pid = fork();
	if (pid < 0) {
		int rc = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		return rc;
	}
	if (pid == 0) {
		component_add_fd(c, pipefd[1], LOWPROF_FD_NOTIFY);
		component_child_fds(c);
		/* The supervisor blocks signals for its signalfd; the child starts clean. */
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGPIPE, SIG_DFL);
		execv(c->path, c->argv);
		fprintf(stderr, "lowprof: exec %s: %s\n", c->path, strerror(errno));
		_exit(LOWPROF_EXIT_CONFIG);
	}
	close(pipefd[1]);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	c->notify_fd = pipefd[0];
	c->pid = pid;
	c->ready = false;
	return 0;
}

bool component_poll_ready(struct component *c)
{
	char buf[256];
	ssize_t n;

	if (c->notify_fd < 0)
		return c->ready;
	for (;;) {
		n = read(c->notify_fd, buf, sizeof(buf));
		if (n > 0) {
			/* Any line counts as ready; later lines are liveness pings. */
			if (memchr(buf, '\n', (size_t)n) != NULL)
				c->ready = true;
			continue;
		}
		if (n == 0) {
			close(c->notify_fd);
			c->notify_fd = -1;
		}
		break;
	}
	return c->ready;
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
