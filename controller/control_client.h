/*
 * The controller's side of the control socket (LOWPROF_FD_CONTROL), the
 * mirror of the loader's control server (loader/control_server.h): connect
 * (the inherited socket checked and made non-blocking) and greet (Hello, then
 * GetState), ask (StatsRequest, SetThrottle), and check every answer: of the
 * type asked for, or a Reply. Every wait goes through poll with the signalfd
 * beside it, so a stop request ends a wait for a loader that never answers.
 */
#ifndef LOWPROF_CONTROLLER_CONTROL_CLIENT_H
#define LOWPROF_CONTROLLER_CONTROL_CLIENT_H

#include <stdint.h>

#include "ipc/throttle.h"
#include "ipc/wire.h"

/* Longest wait for the loader's answer: it answers from its main loop at once. */
#define CONTROL_CLIENT_REPLY_TIMEOUT_MS 2000
/* Unexpected (late) answers skipped while waiting for the one asked for. */
#define CONTROL_CLIENT_MAX_STALE 4

/* Besides 0 and -errno: what an answer asks of the caller. */
enum control_client_status {
	CONTROL_CLIENT_NO_ANSWER = 1,  /* nothing this time (a timeout, a refusal): go on */
	CONTROL_CLIENT_HELLO_AGAIN = 2, /* the loader went to its fail-safe and forgot our Hello */
};

struct control_client {
	int fd;
	int cancel_fd; /* readable: stop waiting (the signalfd); -1: none */
	struct wire_reader rd;
	/* The loader's unasked Stats (the push) that came while we waited for
	 * another answer: kept for control_client_pushed, not dropped. */
	Lowprof__Ctl__Envelope *pushed;
};

/* The interval's counters, as the loader sent them (deltas since the previous Stats). */
struct control_stats {
	uint64_t interval_ns;
	uint64_t samples_submitted;
	uint64_t reserve_failures;
	uint64_t bpf_run_time_ns;
	uint64_t bpf_run_count;
	uint64_t agent_cpu_ns;
	uint64_t startup_cpu_ns;
	uint64_t tables_cpu_ns; /* part of agent_cpu_ns */
	uint64_t ringbuf_used_bytes;
	uint64_t ringbuf_size_bytes;
	uint32_t online_cpus;
	uint64_t offcpu_run_time_ns; /* part of bpf_run_time_ns */
	uint64_t offcpu_records;
	uint64_t offcpu_switches;
	uint64_t offcpu_floor_runs;   /* switch program runs that recorded nothing */
	uint64_t offcpu_floor_run_ns; /* ... and their run time */
	/* The host over the interval (/proc/stat, read by the loader): USER_HZ
	 * ticks busy and in all (0: unknown), and its context switches. */
	uint64_t host_busy_ticks;
	uint64_t host_total_ticks;
	uint64_t host_context_switches;
	bool host_have_switches;
	/* The next push comes this many intervals on (0: not said, as in an answer). */
	uint32_t next_push_intervals;
};
#define CONTROL_MAX_PUSH_INTERVALS 64

/* Use fd (checked to be a socket, made non-blocking). 0, or -errno with why in err. */
int control_client_open(struct control_client *cc, int fd, int cancel_fd, char *err, size_t errlen);

/*
 * Hello, then GetState: a restarted controller starts from what is in force
 * (*state). 0, -ECANCELED (stopped while waiting), -EPROTO (refused), or
 * another -errno when the loader is gone.
 */
int control_client_hello(struct control_client *cc, struct throttle *state);

/*
 * The interval's counters: 0, CONTROL_CLIENT_NO_ANSWER, _HELLO_AGAIN, or
 * -errno. every_interval: the loader sends them unasked at the end of each
 * of its control intervals from now on (control_client_pushed reads them).
 */
int control_client_stats(struct control_client *cc, bool every_interval, struct control_stats *out);

/*
 * A Stats the loader pushed, without waiting: 1 and *out, 0 when none has
 * come, or -errno when the loader is gone or broke the protocol. Anything
 * else that comes unasked is dropped (a late answer).
 */
int control_client_pushed(struct control_client *cc, struct control_stats *out);

/* Frees what the client holds (the socket stays). */
void control_client_close(struct control_client *cc);

/* Ask for t: 0 (applied), CONTROL_CLIENT_NO_ANSWER (refused, logged), _HELLO_AGAIN, or -errno. */
int control_client_set_throttle(struct control_client *cc, const struct throttle *t);

#endif /* LOWPROF_CONTROLLER_CONTROL_CLIENT_H */
