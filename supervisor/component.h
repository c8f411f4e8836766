/*
 * A component the supervisor runs: one helper program, its inherited fds and
 * its readiness pipe. The table of components lives in main.c.
 */
#ifndef LOWPROF_SUPERVISOR_COMPONENT_H
#define LOWPROF_SUPERVISOR_COMPONENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define COMPONENT_MAX_ARGS 2200
#define COMPONENT_MAX_FDS 8

/* Which of the supervisor's fds lands on which fixed number in the child. */
struct component_fd {
	int source;
	int target;
};

struct component {
	const char *name;        /* "loader", "exporter" */
	char path[4096];         /* absolute path of the binary */
	char *argv[COMPONENT_MAX_ARGS];
	size_t argc;
	struct component_fd fds[COMPONENT_MAX_FDS];
	size_t nfds;
	pid_t pid;               /* 0 when not running */
	int notify_fd;           /* read end of the readiness pipe, -1 when closed */
	bool ready;
	int exit_status;         /* wait status of the last exit */
};

/*
 * Find PROGRAM beside the running executable, else in libexec_dir.
 * Returns 0 with the path in out, or -1 with a message naming both places.
 */
int component_find_binary(const char *program, const char *libexec_dir, char *out, size_t outlen,
			  char *err, size_t errlen);
void component_init(struct component *c, const char *name);
void component_add_arg(struct component *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void component_add_fd(struct component *c, int source, int target);
/* fork + exec with the fds in place; 0 or -errno. */
int component_spawn(struct component *c);
/* Read readiness lines; returns true once "ready" has been seen. */
bool component_poll_ready(struct component *c);
/* "exited with status 3", "killed by signal 9" */
void component_describe_exit(int status, char *buf, size_t len);
void component_free_args(struct component *c);

#endif
