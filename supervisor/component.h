/*
 * A component the supervisor runs: one helper program, the fds it inherits at
 * fixed numbers, its notification channel, and its life (state, restarts).
 */
#ifndef LOWPROF_SUPERVISOR_COMPONENT_H
#define LOWPROF_SUPERVISOR_COMPONENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervisor/notify_message.h"
#include "supervisor/privdrop.h"
#include "supervisor/restart_policy.h"

#define COMPONENT_MAX_ARGS 2200
#define COMPONENT_MAX_FDS 12

enum component_state {
	COMPONENT_STOPPED,  /* not started yet, or stopped on purpose */
	COMPONENT_STARTING, /* running, not ready yet */
	COMPONENT_RUNNING,  /* ready */
	COMPONENT_BACKOFF,  /* died; waiting to be restarted */
	COMPONENT_FAILED,   /* crash loop or permanent error: not restarted */
};

/* Which of the supervisor's fds lands on which fixed number in the child. */
struct component_fd {
	int source;
	int target;
};

struct component {
	const char *name;        /* "loader", "exporter", ... */
	char path[4096];         /* absolute path of the binary */
	char *argv[COMPONENT_MAX_ARGS];
	size_t argc;
	struct component_fd fds[COMPONENT_MAX_FDS];
	size_t nfds;
	const struct privdrop_user *run_as; /* NULL: keep the supervisor's identity */
	bool pings;              /* sends liveness pings (else only its exit is watched) */

	enum component_state state;
	pid_t pid;               /* 0 when not running */
	int notify_fd;           /* our end of the SOCK_SEQPACKET channel, -1 when closed */
	int64_t started_ms;
	int64_t ready_ms;
	int64_t last_message_ms; /* liveness: any message counts (when read) */
	/* Past its deadline with nothing read: judged again a moment later
	 * (supervise.c), valid while later than last_message_ms; and its run
	 * delay then (ns, -1: unknown). */
	int64_t suspect_ms;
	int64_t suspect_delay_ns;
	bool ever_ready;
	bool kill_reason_liveness; /* we killed it for missing its deadline */
	bool reloading;          /* stopped by a reload: started again at once */
	int exit_status;         /* wait status of the last exit */
	char last_exit[128];     /* "killed by signal 9 (Killed)", "" if none */
	struct restart_state restart;
	/* The latest "state" message, shown by `lowprof status`. */
	struct notify_pair state_pairs[NOTIFY_MAX_PAIRS];
	size_t nstate_pairs;
	uint64_t bad_messages;
};

/* The helpers' directory relative to the installed lowprof's. */
#define COMPONENT_LIBEXEC_RELATIVE "libexec/lowprof"

/*
 * Find PROGRAM beside the running executable, else in
 * ../COMPONENT_LIBEXEC_RELATIVE from it, else in libexec_dir.
 * Returns 0 with the path in out, or -1 with a message naming the places.
 */
int component_find_binary(const char *program, const char *libexec_dir, char *out, size_t outlen,
			  char *err, size_t errlen);
void component_init(struct component *c, const char *name, const struct restart_settings *rs);
void component_add_arg(struct component *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void component_add_fd(struct component *c, int source, int target);
/* fork + exec with the fds in place and a fresh notification channel; 0 or -errno. */
int component_spawn(struct component *c, int64_t now_ms);
/*
 * Read every pending message from the component. Returns true if the
 * component became ready during this call.
 */
bool component_read_messages(struct component *c, int64_t now_ms);
/* Send one message to the component on its channel (best effort, never blocks). */
void component_send(struct component *c, const char *msg);
/* "exited with status 3", "killed by signal 9 (Killed)" */
void component_describe_exit(int status, char *buf, size_t len);
const char *component_state_name(enum component_state s);
void component_free_args(struct component *c);
/* How long c's main thread has waited for a CPU in all (ns, the second field
 * of /proc/PID/schedstat), or -1 when unknown. */
int64_t component_run_delay_ns(const struct component *c);

#endif
