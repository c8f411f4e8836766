/*
 * symbol_broker: the loader's side of the symbol-source socket
 * (LOWPROF_FD_SYMBOLS, protocol in ipc/lowprof_sym.proto and ipc/sym_wire.h).
 *
 * The exporter runs unprivileged and opens no paths of other processes; it
 * asks the loader, OpenSSH-monitor style, for the few things symbolization
 * needs. Each request kind is checked against what the loader reads itself,
 * never against what the exporter claims:
 *
 *   maps{pid}          -> fd of PROC_ROOT/PID/maps
 *   mapped_file{pid, start, end, inode}
 *                      -> fd of the file mapped executable at exactly
 *                         [start, end) with that inode, per the loader's own
 *                         reading of PID's maps (else EACCES: this is what
 *                         keeps the exporter from naming arbitrary files)
 *   debug_file{build_id} -> fd of DEBUG_ROOT/.build-id/XX/REST.debug
 *   kallsyms{}         -> fd of PROC_ROOT/kallsyms (real addresses: the
 *                         loader's CAP_SYSLOG counts at open time)
 *   process{pid}       -> exe path and cgroup text, no fd
 *   file{dev, ino, gen} -> a dup of the fd the loader's file registry holds
 *                         for that identity and the path it was found by;
 *                         ENOENT for a file the loader did not register
 *                         (the exporter cannot name any other file)
 *
 * The receive, the sender check, the rate limit and the audit of refusals are
 * the loader's monitor core (loader/monitor.h), shared with the control
 * server; the broker keeps its request table and its handlers.
 *
 * Every request gets exactly one reply with its id. A message that cannot be
 * read as a request (no id to answer) gets none. Refusals (a malformed or
 * invalid request, a mapping that does not match, a wrong sender uid, the
 * rate limit) are audit records (`request_refused`, loader/audit_log.h);
 * successful opens are not BPF actions and are only counted.
 *
 * The socket is shared across exporter restarts (the supervisor holds the
 * other end), so a misbehaving peer is never cut off: every message, valid or
 * not, takes a token from one bucket; beyond it requests are refused with
 * EBUSY and those refusals are audited at most once a second. Other refusals
 * are audited one by one within a budget (SYMBOL_BROKER_AUDIT_*), the rest
 * counted into the next record, so that a flood cannot fill the disk.
 *
 * Never blocks: the socket is non-blocking, a reply that cannot be sent (the
 * exporter not reading) is dropped and counted.
 */
#ifndef LOWPROF_LOADER_SYMBOL_BROKER_H
#define LOWPROF_LOADER_SYMBOL_BROKER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "loader/monitor.h"
#include "loader/seen_pids.h"

struct file_registry;

/* Token bucket defaults: the exporter asks once per new pid and per new file. */
#define SYMBOL_BROKER_RATE_PER_S 2000
#define SYMBOL_BROKER_RATE_BURST 4000
/* Messages served per wake-up, so that a flood cannot starve the drain. */
#define SYMBOL_BROKER_MAX_PER_WAKE 64
/* Audit records of refusals other than the rate limit: a budget per second. */
#define SYMBOL_BROKER_AUDIT_PER_S 16
#define SYMBOL_BROKER_AUDIT_BURST 64
/* Longest PROC_ROOT / DEBUG_ROOT accepted. */
#define SYMBOL_BROKER_ROOT_MAX 1024

struct symbol_broker_config {
	const char *proc_root;  /* "/proc" */
	const char *debug_root; /* "/usr/lib/debug" */
	bool check_peer;        /* each sender's uid (SCM_CREDENTIALS) must be exporter_uid */
	uid_t exporter_uid;
	unsigned rate_per_s;    /* token bucket refill; 0: no rate limit */
	unsigned burst;         /* bucket size (0: SYMBOL_BROKER_RATE_BURST) */
	/* With check_peer: the sender's parent (0: unchecked) and program name
	 * (NULL: unchecked), so that no other process of the uid is served. */
	pid_t exporter_ppid;
	const char *exporter_exe;
	/* maps, mapped_file and process requests only for pids in it (those
	 * sampled lately); NULL: any pid */
	const struct seen_pids *sampled;
	/* file requests are answered from it (not owned; NULL: every file ENOENT) */
	struct file_registry *files;
};

/* Besides the monitor's (mon.st: refused, of which rate-limited, not audited one by one). */
struct symbol_broker_stats {
	uint64_t served;          /* requests answered with what they asked for */
	uint64_t errors;          /* answered with an errno of the operation (a pid gone, no debug file) */
	uint64_t malformed;       /* messages that were no request (no reply possible) */
	uint64_t replies_dropped; /* replies the socket did not take (EAGAIN: the exporter not reading) */
};

struct symbol_broker {
	struct monitor mon; /* the socket (mon.fd -1: no broker, or the peer is gone), the peer, the rate */
	char proc_root[SYMBOL_BROKER_ROOT_MAX];
	char debug_root[SYMBOL_BROKER_ROOT_MAX];
	struct symbol_broker_config cfg; /* the roots point at the copies above */
	struct symbol_broker_stats st;
};

/*
 * Serve sock (made non-blocking and close-on-exec here; the broker owns it
 * from now on and closes it). Sets SO_PASSCRED on it so that every message
 * carries its sender's credentials. now_ns starts the token bucket. Returns 0,
 * or -EINVAL (a root too long, sock < 0) with b->mon.fd = -1.
 */
int symbol_broker_init(struct symbol_broker *b, int sock, const struct symbol_broker_config *cfg,
		       uint64_t now_ns);

/*
 * The socket is readable (or hung up): serve up to SYMBOL_BROKER_MAX_PER_WAKE
 * queued messages without blocking. Returns 0, or -EPIPE once the peer is gone
 * for good (every holder of the other end closed it; b->mon.fd is then -1).
 */
int symbol_broker_handle(struct symbol_broker *b, uint64_t now_ns);

/*
 * Periodically (the drain timer): refusals counted but not audited one by one
 * get their summary record once the current audit second is over.
 */
void symbol_broker_tick(struct symbol_broker *b, uint64_t now_ns);

/* Audit what is still counted, log the counters (once, at shutdown), close the socket. */
void symbol_broker_close(struct symbol_broker *b);

#endif /* LOWPROF_LOADER_SYMBOL_BROKER_H */
