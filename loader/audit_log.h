/*
 * The loader's audit log: one JSON object per line for every BPF action it
 * takes and every request it refuses (docs/SECURITY.md lists the events).
 * Each record is built whole in memory and written with one write(): on the
 * supervisor's SOCK_SEQPACKET channel (one record a message; the supervisor
 * appends it to the file, rotates and reopens it: supervisor/audit_sink.h),
 * or on an O_APPEND file when run by hand. So records never interleave or
 * tear, and nothing waits in a stdio buffer. A record the channel has no room
 * for is counted (audit_log_write_failures), never waited for. The kernel audits only program load and unload; the rest is
 * on this record.
 *
 *   {"time":"2025-06-01T12:00:00.123456Z","event":"map_update","component":"controller",
 *    "pid":812,"uid":65534,...event fields...,"result":"ok","errno":0}
 */
#ifndef LOWPROF_LOADER_AUDIT_LOG_H
#define LOWPROF_LOADER_AUDIT_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AUDIT_LINE_MAX 4096

/* Who asked for an action: the loader itself, or a peer by SO_PEERCRED/SCM_CREDENTIALS. */
struct audit_actor {
	const char *component; /* "loader", "controller" */
	pid_t pid;
	uid_t uid;
};

struct audit_rec {
	char buf[AUDIT_LINE_MAX];
	size_t len;
	bool truncated; /* a field did not fit: the record says so */
};

/* Audit to fd from now on (the loader owns it); -1 turns auditing off. */
void audit_log_open(int fd);
void audit_log_close(void);
bool audit_log_enabled(void);
/* Records that could not be written (a full channel or disk): counted, never fatal. */
uint64_t audit_log_write_failures(void);

/* The loader itself as the actor. */
void audit_actor_self(struct audit_actor *a);

void audit_rec_begin(struct audit_rec *r, const char *event, const struct audit_actor *who);
void audit_rec_str(struct audit_rec *r, const char *key, const char *val);
void audit_rec_u64(struct audit_rec *r, const char *key, uint64_t val);
void audit_rec_i64(struct audit_rec *r, const char *key, int64_t val);
void audit_rec_bool(struct audit_rec *r, const char *key, bool val);
void audit_rec_hex(struct audit_rec *r, const char *key, const void *data, size_t len);
/* A value the caller built as JSON (an object or array made with audit_json_*). */
void audit_rec_raw(struct audit_rec *r, const char *key, const char *json);
/*
 * Finish with the result (errnum 0: "ok", else "error" and the errno) and
 * write the line. Returns 0 or -errno of the write.
 */
int audit_rec_end(struct audit_rec *r, int errnum);

/* JSON string escaping into out (always terminated); for values built by callers. */
void audit_json_escape(const char *in, char *out, size_t outlen);

#endif
