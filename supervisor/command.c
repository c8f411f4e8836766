#define _GNU_SOURCE /* pipe2, strchrnul */
#include "supervisor/command.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/errbuf.h"

/* Where execvp would look when PATH is not set (glibc's default). */
#define COMMAND_DEFAULT_PATH "/bin:/usr/bin"

/* Could path be exec'd: a regular file we may execute? 0 or -errno. (As
 * root, access() says yes to a directory or any file with one x bit.) */
static int command_runnable(const char *path)
{
	struct stat st;

	if (access(path, X_OK) != 0)
		return -errno;
	if (stat(path, &st) != 0)
		return -errno;
	return S_ISREG(st.st_mode) ? 0 : -EACCES;
}

/* argv0 as execvp would find it, into out. 0 or -errno. */
static int command_find(const char *argv0, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;
	int rc = -ENOENT;

	if (argv0[0] == '\0')
		return -ENOENT;
	if (strchr(argv0, '/') != NULL) {
		if (snprintf(out, len, "%s", argv0) >= (int)len)
			return -ENAMETOOLONG;
		return command_runnable(out);
	}
	if (path == NULL)
		path = COMMAND_DEFAULT_PATH;
	for (p = path;; p = end + 1) {
		end = strchrnul(p, ':');
		/* An empty entry is the current directory. */
		if (snprintf(out, len, "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/", argv0) <
		    (int)len) {
			int r = command_runnable(out);

			if (r == 0)
				return 0;
			/* Found but not runnable: said so if nothing else is found. */
			if (r == -EACCES)
				rc = -EACCES;
		}
		if (*end == '\0')
			return rc;
	}
}

int command_spawn(struct command *c, char *const argv[], char *err, size_t errlen)
{
	char path[PATH_MAX], go;
	int pipefd[2], rc;
	sigset_t none;

	c->pid = 0;
	c->release_fd = -1;
	c->reaped = false;
	rc = command_find(argv[0], path, sizeof(path));
	if (rc == -ENOENT)
		return errbuf_fail(rc, err, errlen, "%s: command not found", argv[0]);
	if (rc != 0)
		return errbuf_fail(rc, err, errlen, "%s: %s", argv[0], strerror(-rc));
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return errbuf_fail(-errno, err, errlen, "pipe: %s", strerror(errno));
	c->pid = fork();
	if (c->pid < 0) {
		rc = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		c->pid = 0;
		return errbuf_fail(rc, err, errlen, "fork: %s", strerror(-rc));
	}
	if (c->pid == 0) {
		close(pipefd[1]);
		/* No byte: lowprof did not start. The exec closes the pipe. */
		if (read(pipefd[0], &go, 1) != 1)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv(path, argv);
		fprintf(stderr, "lowprof: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pipefd[0]);
	c->release_fd = pipefd[1];
	return 0;
}

void command_release(struct command *c)
{
	if (c->release_fd < 0)
		return;
	if (write(c->release_fd, "", 1) != 1)
		fprintf(stderr, "lowprof: releasing the command: %s\n", strerror(errno));
	close(c->release_fd);
	c->release_fd = -1;
}

bool command_take_status(struct command *c, pid_t pid, int status)
{
	if (c->pid == 0 || pid != c->pid)
		return false;
	c->reaped = true;
	c->status = status;
	return true;
}

void command_describe_end(struct command *c, char *out, size_t len)
{
	int status;

	if (!c->reaped && c->pid > 0 && waitpid(c->pid, &status, WNOHANG) == c->pid)
		(void)command_take_status(c, c->pid, status);
	if (!c->reaped)
		snprintf(out, len, "has exited");
	else if (WIFEXITED(c->status))
		snprintf(out, len, "exited with status %d", WEXITSTATUS(c->status));
	else if (WIFSIGNALED(c->status))
		snprintf(out, len, "was killed by signal %d (%s)", WTERMSIG(c->status),
			 strsignal(WTERMSIG(c->status)));
	else
		snprintf(out, len, "has exited");
}

void command_close(struct command *c)
{
	if (c->release_fd >= 0)
		close(c->release_fd);
	c->release_fd = -1;
}
