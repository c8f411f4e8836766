/*
 * The audit log's file side. The loader does not hold the file: it sends each
 * record (one JSON line, loader/audit_log.h) as one message on a
 * SOCK_SEQPACKET socketpair (its fd 9), and the supervisor, which opened the
 * file as root, appends each message with one write(). So the supervisor can
 * rotate the file and reopen it (SIGHUP, for logrotate) between two records:
 * none is lost or split across files, and a record is never half-written.
 *
 * Rotation: when the next record would take the file past max_bytes, PATH.1
 * .. PATH.(keep-1) move up one (PATH.keep is replaced: the oldest goes), PATH
 * becomes PATH.1 and a new PATH starts with a "audit_rotated" record that
 * counts what was suppressed so far (records the loader could not send
 * because the channel was full, records that did not fit the file or the
 * channel's rules). `lowprof audit PATH` reads PATH.keep .. PATH.1, PATH.
 */
#ifndef LOWPROF_SUPERVISOR_AUDIT_SINK_H
#define LOWPROF_SUPERVISOR_AUDIT_SINK_H

#include <stddef.h>
#include <stdint.h>

#define AUDIT_SINK_PATH_MAX 4096
/* The longest record accepted (the loader's AUDIT_LINE_MAX, with room). */
#define AUDIT_SINK_RECORD_MAX 8192
/* Most rotated files kept. */
#define AUDIT_SINK_KEEP_MAX 99

struct audit_sink {
	char path[AUDIT_SINK_PATH_MAX];
	int file_fd;         /* the current file, O_APPEND; -1 when it could not be opened */
	int sock;            /* the supervisor's end of the channel, non-blocking */
	int loader_end;      /* given to every loader as its fd 9 */
	uint64_t size;       /* bytes in the current file */
	uint64_t max_bytes;  /* 0: no rotation by size */
	unsigned keep;       /* PATH.1 .. PATH.keep */
	uint64_t records, rotations, reopens;
	uint64_t refused;    /* malformed messages (no final newline, one line each) */
	uint64_t failed;     /* records that could not be written to the file */
};

/* Opens path (O_APPEND, 0600, created) and the channel. 0, or -errno with err set. */
int audit_sink_open(struct audit_sink *s, const char *path, uint64_t max_bytes, unsigned keep,
		    char *err, size_t errlen);
/* Appends every record waiting on the channel. Returns how many. */
size_t audit_sink_drain(struct audit_sink *s);
/* SIGHUP: the records waiting go to the file as it is, then PATH is opened
 * anew (logrotate moved it away). 0, or -errno (auditing goes on into the old fd). */
int audit_sink_reopen(struct audit_sink *s);
void audit_sink_close(struct audit_sink *s);

/* The files `lowprof audit PATH` reads, oldest first: PATH.N .. PATH.1, PATH,
 * those that exist. Writes up to max names into out (each AUDIT_SINK_PATH_MAX + 16). */
size_t audit_sink_files(const char *path, char out[][AUDIT_SINK_PATH_MAX + 16], size_t max);

#endif
