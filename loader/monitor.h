/*
 * The loader's monitor core, in the spirit of OpenSSH's mon_dispatch: what
 * the control server (loader/control_server.h) and the symbol broker
 * (loader/symbol_broker.h) share when they serve a less trusted peer over a
 * SOCK_SEQPACKET socket. Each server keeps only its request table and its
 * handlers; the monitor does the rest, the same way for both:
 *
 *  - the strict receive: one message, the sender's SCM_CREDENTIALS taken
 *    (SO_PASSCRED is set here), and refused: truncated data or control data
 *    (MSG_TRUNC, MSG_CTRUNC), any control message other than the
 *    credentials, any file descriptor (each one closed);
 *  - the sender check: the uid the server expects and, when asked, the
 *    parent pid (our supervisor) and program, read from /proc once per
 *    sender process (a pidfd holds the last one checked: while it lives,
 *    its pid names no other process, and its parent and program stay);
 *  - rate limiting: every request takes a token; past the bucket it is
 *    refused with EBUSY and audited at most once a second, the others
 *    counted into the next record (or a summary record once the flood stops);
 *  - the request table: {kind, permitted states, validator, handler, audit
 *    fields}; a request of no known kind, asked in a state that does not
 *    permit it, or failing its validator is refused, counted and audited
 *    (within an optional budget of records per second) and answered through
 *    the protocol's answer callback.
 *
 * Every refusal is an audit record `request_refused`, every cut-off
 * `peer_cut_off` (loader/audit_log.h), attributed to the sender as the
 * kernel names it.
 */
#ifndef LOWPROF_LOADER_MONITOR_H
#define LOWPROF_LOADER_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/token_bucket.h"
#include "loader/audit_log.h"

/* The record of rate refusals: at most one per this long, the others counted. */
#define MONITOR_RATE_AUDIT_NS 1000000000ULL
#define MONITOR_RATE_WHY "rate limit exceeded"

struct monitor_config {
	const char *component;   /* the peer in audit records: "controller", "exporter" */
	const char *socket_name; /* for messages: "control", "symbol" */
	bool check_peer;         /* each sender's uid must be expected_uid */
	uid_t expected_uid;
	pid_t expected_ppid;     /* the sender's parent must be this (our supervisor); 0: unchecked */
	unsigned rate_per_s;     /* request token bucket refill; 0: no rate limit */
	unsigned rate_burst;     /* bucket size */
	unsigned audit_per_s;    /* records of the other refusals per second; 0: every one */
	unsigned audit_burst;
	const char *expected_exe; /* the sender's /proc/PID/exe must have this name; NULL: unchecked */
};

struct monitor_stats {
	uint64_t sender_reads;     /* sender checks that read /proc (a new sender process) */
	uint64_t refused;          /* requests refused (of any reason) */
	uint64_t rate_limited;     /* of which for the token bucket */
	uint64_t audit_suppressed; /* refusals counted but not audited one by one (the budget) */
};

struct monitor {
	int fd;                           /* -1: none, or the peer is gone or cut off */
	struct monitor_config cfg;
	pid_t peer_pid;                   /* the sender of the last message; -1 unknown */
	uid_t peer_uid;
	bool have_cred;                   /* the last message carried credentials */
	/* The last sender whose parent and program passed, held by a pidfd
	 * (-1: none): while that process lives its pid is its own, its program
	 * changes only by an exec (which every component's filter refuses) and
	 * its parent only if the supervisor dies (which ends it: PDEATHSIG).
	 * Its next messages are not read from /proc again. */
	int checked_pidfd;
	pid_t checked_pid;
	struct token_bucket rate;         /* requests */
	uint64_t rate_audit_suppressed;   /* rate refusals since the last one audited */
	uint64_t rate_last_audit_ns;
	struct token_bucket audit_budget; /* records of the other refusals */
	uint64_t audit_suppressed;        /* other refusals not audited since the last record */
	struct monitor_stats st;
};

/* One entry of a server's request table. */
struct monitor_request {
	int kind;       /* the protocol's message kind (a payload case) */
	unsigned states; /* the server states it may be asked in (bits); 0: any */
	/* Beyond the wire checks: 0, or -errno (the refusal's errno) with why. NULL: none. */
	int (*validate)(void *server, const void *msg, char *why, size_t whylen);
	/* Serve it: 0, or -errno when the peer must be cut off. */
	int (*handle)(void *server, const void *msg, uint64_t now_ns);
	/* The request's own fields in a refusal record (after request, reason). NULL: none. */
	void (*audit)(struct audit_rec *r, const void *msg);
};

/* A server's protocol, as the monitor sees it. */
struct monitor_protocol {
	const struct monitor_request *requests;
	size_t nrequests;
	int (*kind_of)(const void *msg);
	const char *(*kind_name)(int kind);
	/* Checks of any request before its kind is looked up (0 or -errno with why); NULL: none. */
	int (*check)(void *server, const void *msg, char *why, size_t whylen);
	/* Answer a refused request: 0, or -errno when the answer could not be sent. */
	int (*answer)(void *server, const void *msg, int errnum, const char *why);
	/* Why a request asked in a state its entry does not permit is refused. */
	const char *state_refusal;
};

/* What one monitor_recv gave. */
enum monitor_recv {
	MONITOR_RECV_NONE,    /* nothing queued */
	MONITOR_RECV_MESSAGE, /* *got bytes in buf */
	MONITOR_RECV_REFUSED, /* a message refused for its form: why says what */
	MONITOR_RECV_CLOSED,  /* every holder of the other end has closed it */
	MONITOR_RECV_ERROR,   /* recvmsg failed: why */
};

/*
 * Serve fd (made non-blocking and close-on-exec, SO_PASSCRED set: from now
 * on every message carries its sender's credentials). fd may be -1 (no peer).
 * now_ns fills the buckets.
 */
void monitor_init(struct monitor *m, int fd, const struct monitor_config *cfg, uint64_t now_ns);

/*
 * Read one message into buf (len: the protocol's largest; a longer one is
 * refused), strictly (above). Sets peer_pid, peer_uid and have_cred from the
 * message. Never blocks. An empty message on a socket that did not hang up
 * is refused.
 */
enum monitor_recv monitor_recv(struct monitor *m, void *buf, size_t len, size_t *got, char *why,
			       size_t whylen);

/* Is the sender of the last message the expected peer? 0, -EACCES (not the component: refuse or cut off), or -ESRCH (the sender
 * has exited since: drop the message, keep the channel), reason in why. */
int monitor_check_sender(struct monitor *m, char *why, size_t whylen);

/*
 * Take a token for msg (NULL: a message that is no request). Returns 1 when
 * there was one; else the refusal is counted, audited at most once per
 * MONITOR_RATE_AUDIT_NS, answered with EBUSY (when msg is not NULL), and 0
 * is returned, or the answer's -errno.
 */
int monitor_admit(struct monitor *m, const struct monitor_protocol *p, void *server,
		  const void *msg, uint64_t now_ns);

/*
 * The request table: the protocol's check, the kind's entry (none:
 * EOPNOTSUPP), its states (EPERM, p->state_refusal), its validator, then its
 * handler. state is the server's current state bit. Returns what the handler
 * or the refusal's answer returned: 0, or -errno to cut the peer off.
 */
int monitor_dispatch(struct monitor *m, const struct monitor_protocol *p, void *server,
		     const void *msg, unsigned state, uint64_t now_ns);

/* Refuse msg (not for the rate): counted, audited within the budget, answered. */
int monitor_refuse(struct monitor *m, const struct monitor_protocol *p, void *server,
		   const void *msg, int errnum, const char *why, uint64_t now_ns);

/*
 * Audit one refusal within the budget (not counted as refused): what names
 * it ("malformed" for a message that is no request), msg (may be NULL)
 * adds its entry's fields.
 */
void monitor_audit_refusal(struct monitor *m, const struct monitor_protocol *p, const void *msg,
			   const char *what, int errnum, const char *why, uint64_t now_ns);

/* The record of a cut-off (the caller closes or stops serving). */
void monitor_audit_cut_off(struct monitor *m, const char *why);

/*
 * Periodically: refusals counted but not audited one by one get their
 * summary record once the current audit second is over (UINT64_MAX: now,
 * whatever the time).
 */
void monitor_tick(struct monitor *m, uint64_t now_ns);

/* Audit what is still counted, close the socket. */
void monitor_close(struct monitor *m);

#endif /* LOWPROF_LOADER_MONITOR_H */
