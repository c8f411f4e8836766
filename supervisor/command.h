/*
 * The command lowprof runs and profiles: `lowprof [OPTION]... -- COMMAND
 * [ARG]...`, as `perf record -- COMMAND` does.
 *
 * It is forked at start, before anything is loaded, and held: it waits for
 * one byte on a pipe before it execs, so that its first instructions are
 * sampled. The supervisor gives it to the loader as a -p target that
 * follows (its new processes become targets too: bpf/follow.bpf.h) and
 * releases it once sampling runs. If lowprof fails first, the pipe closes
 * without the byte and the held child exits (127) without running anything.
 * The command runs as lowprof was run (its user, environment, directory,
 * terminal); lowprof stops when it exits, and leaves it running when
 * lowprof stops first (--duration, a signal).
 */
#ifndef LOWPROF_SUPERVISOR_COMMAND_H
#define LOWPROF_SUPERVISOR_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct command {
	pid_t pid;      /* 0: no command */
	int release_fd; /* the pipe's write end while held; -1 */
	bool reaped;
	int status;     /* waitpid's, once reaped */
};

/*
 * Find argv[0] as execvp would (PATH when it has no slash) and fork it,
 * held. 0, or -errno with one line in err (not found, not executable,
 * fork failed).
 */
int command_spawn(struct command *c, char *const argv[], char *err, size_t errlen);
/* Let the held command exec (once; nothing without a command). */
void command_release(struct command *c);
/* The supervisor reaped pid with status: true when it was the command. */
bool command_take_status(struct command *c, pid_t pid, int status);
/* How it ended, for a log line ("exited with status 0", "was killed by
 * signal 9"); reaps it first if it has exited and nobody has. */
void command_describe_end(struct command *c, char *out, size_t len);
/* Closes the release pipe (a held command then exits without running). */
void command_close(struct command *c);

#endif
