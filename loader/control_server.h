/*
 * The loader's side of the control socket (LOWPROF_FD_CONTROL): an
 * OpenSSH-style monitor. A fixed table of request types, each with its own
 * validation, is all the controller can ask:
 *
 *   Hello         -> Reply       (version and component checked)
 *   StatsRequest  -> Stats       (counters since the previous Stats; with
 *                                 every_interval, a Stats at each control
 *                                 interval's end from then on: the push)
 *   SetThrottle   -> Reply       (every field checked, then applied)
 *   GetState      -> ThrottleState (what is in force)
 *
 * Any other payload is refused with an error Reply; a request before Hello is
 * refused with EPERM. A frame that cannot be parsed (zero or oversized
 * length, unpack failure, no payload) or a bad Hello breaks the protocol: the
 * peer is cut off for good (the socket is closed) and the fail-safe applies.
 *
 * Fail-safe: when the peer is gone or has sent nothing (nor, subscribed to
 * the push, read what it was sent) for
 * CONTROL_SILENCE_INTERVALS control intervals, the loader applies the
 * critical tier itself and keeps it until a controller says Hello again.
 *
 * The monitor's checks (docs/SECURITY.md), done by the shared core
 * (loader/monitor.h): each request type may be asked only in certain states
 * (control_requests[] in control_server.c); every message carries the
 * sender's SCM_CREDENTIALS and, with check_peer, a sender whose uid is not the
 * controller's, whose parent is not our supervisor or whose program is not
 * lowprof-controller (with expected_exe) is cut off, as is a
 * message with truncated or unexpected control data (an fd, MSG_CTRUNC);
 * requests beyond a token bucket are refused. Every refusal and cut-off is an
 * audit record (loader/audit_log.h).
 *
 * The socket is SOCK_SEQPACKET: each message is exactly one frame of
 * ipc/wire.h (its length prefix still checked against the message and the
 * protocol's cap); a message that is longer than the largest frame or ends
 * inside one is a protocol violation.
 *
 * The server does no BPF itself: it calls the loader through control_ops, so
 * that the unit tests can drive it over a real socketpair without a kernel.
 */
#ifndef LOWPROF_LOADER_CONTROL_SERVER_H
#define LOWPROF_LOADER_CONTROL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/throttle.h"
#include "ipc/wire.h"
#include "loader/monitor.h"

/* Intervals of silence after which the loader goes critical by itself. */
#define CONTROL_SILENCE_INTERVALS 3
/* Messages handled per wake-up, so a flooding peer cannot starve the drain. */
#define CONTROL_MAX_MESSAGES_PER_WAKE 32

/* Token bucket defaults: a controller asks 2-3 times per control interval. */
#define CONTROL_RATE_BURST 32
#define CONTROL_RATE_PER_S 20

/* Cumulative counters, read when a Stats is due; the server sends deltas. */
struct control_counters {
	uint64_t monotonic_ns;
	uint64_t submitted;
	uint64_t reserve_failures;
	uint64_t bpf_run_time_ns;
	uint64_t bpf_run_count;
	uint64_t agent_cpu_ns;       /* start-ups left out */
	uint64_t startup_cpu_ns;     /* what processes had used when first seen */
	uint64_t tables_cpu_ns;      /* part of agent_cpu_ns: building unwind tables */
	uint64_t ringbuf_used_bytes; /* instantaneous */
	uint64_t ringbuf_size_bytes;
	uint32_t online_cpus;
	/* The off-CPU program (zero without --off-cpu); its run time is also in bpf_run_time_ns. */
	uint64_t offcpu_run_time_ns;
	uint64_t offcpu_records;
	uint64_t offcpu_switches;
	/* Its floor: runs that recorded nothing, and their run time. */
	uint64_t offcpu_floor_runs;
	uint64_t offcpu_floor_run_ns;
	/* /proc/stat's aggregate line, cumulative (measure/host_load.h's
	 * host_ticks): host_total_ticks 0 when it could not be read. */
	uint64_t host_busy_ticks;
	uint64_t host_total_ticks;
	uint64_t host_ctxt;
	bool host_have_ctxt;
};

/*
 * out = now - base, field by field, for the cumulative counters (a smaller
 * value, never expected, reads as 0); the instantaneous ones (ring buffer,
 * CPUs) are now's. The host's ticks are unknown (0) unless both read them.
 */
void control_counters_delta(const struct control_counters *now, const struct control_counters *base,
			    struct control_counters *out);

struct control_ops {
	/* Apply t (already validated). 0, or -errno with the reason in err. */
	int (*apply)(void *arg, const struct throttle *t, char *err, size_t errlen);
	/* Read the cumulative counters. 0 or -errno. */
	int (*counters)(void *arg, struct control_counters *out);
	void *arg;
};

struct control_server_config {
	struct wire_limits limits;  /* max frequency = the user's -F; divisor cap */
	unsigned max_depth;         /* the user's --max-depth: deeper requests are cut to it */
	/* The user's --off-cpu-probability in ppm: higher requests are cut to it;
	 * 0 without --off-cpu (the field is then always 0). */
	uint32_t offcpu_max_ppm;
	uint64_t interval_ns;       /* the control interval (silence clock) */
	bool fixed;                 /* --no-throttle: refuse any change, no fail-safe */
	struct throttle failsafe; /* the critical tier */
	bool check_peer;            /* check each sender's credentials (below) */
	uid_t expected_uid;         /* the controller's uid (the supervisor's --user) */
	pid_t expected_ppid;        /* the sender's parent must be this (our supervisor); 0: unchecked */
	const char *expected_exe;   /* the sender's /proc/PID/exe must have this name; NULL: unchecked */
	unsigned rate_per_s;        /* token bucket refill; 0: no rate limit */
	unsigned rate_burst;        /* bucket size */
};

/* Where a peer is in the protocol: what it may ask depends on it. */
enum control_peer_state {
	CONTROL_PEER_AWAIT_HELLO = 1u << 0, /* new, or after the fail-safe */
	CONTROL_PEER_ACTIVE = 1u << 1,      /* said a valid Hello */
};

struct control_server {
	/* The socket (mon.fd -1 once the peer is gone or cut off), the peer, the rate. */
	struct monitor mon;
	bool served;                 /* there was a control socket at all */
	struct control_server_config cfg;
	struct control_ops ops;
	struct wire_reader rd;
	bool hello;                  /* the peer said a valid Hello */
	bool failsafe;               /* the fail-safe state is in force */
	struct throttle applied;
	struct control_counters base; /* counters at the previous Stats */
	bool have_base;
	uint64_t last_heard_ns;
	const char *actor;           /* who the current apply is for: "controller" or "loader" */
	uint64_t stats_served;       /* Stats sent (answers and pushes) */
	bool subscribed;             /* the peer asked for a Stats every interval (StatsRequest.every_interval) */
};

/*
 * Start serving fd (a SOCK_SEQPACKET socket, made non-blocking here; the
 * server owns it from now on and closes it). fd may be -1: no controller at all (fixed settings, no
 * fail-safe). initial is the state already applied. now_ns starts the
 * silence clock.
 */
void control_server_init(struct control_server *cs, int fd, const struct control_server_config *cfg,
			 const struct control_ops *ops, const struct throttle *initial,
			 uint64_t now_ns);

/*
 * The fd is readable: read, answer and apply what the peer sent. Returns 0,
 * or -errno once the peer has closed or was cut off (cs->mon.fd is then -1 and
 * the fail-safe has been applied).
 */
int control_server_handle(struct control_server *cs, uint64_t now_ns);

/*
 * Called on every tick: when the peer has been silent for
 * CONTROL_SILENCE_INTERVALS intervals (or is gone), apply the fail-safe. A
 * subscribed peer that has read our last push is heard from now, however
 * long ago that push was (the interval before a tick may be a long quiet
 * one). Returns true when it was applied by this call.
 */
bool control_server_tick(struct control_server *cs, uint64_t now_ns);

/*
 * A subscribed peer that has read everything we sent, our last push included:
 * it is listening (and heard from now, the silence clock of
 * control_server_tick).
 */
bool control_server_listening(struct control_server *cs, uint64_t now_ns);

/*
 * At the end of each control interval: a subscribed peer (StatsRequest with
 * every_interval) gets the interval's Stats unasked, saying that the next
 * comes next_push_intervals intervals on. Only when it is listening (above):
 * while the previous one is unread nothing more is sent. True when a Stats
 * was sent.
 */
bool control_server_push(struct control_server *cs, uint64_t now_ns, unsigned next_push_intervals);

void control_server_close(struct control_server *cs);

#endif /* LOWPROF_LOADER_CONTROL_SERVER_H */
