/*
 * What an exporter leaves behind for the next one of the same run, in the
 * output directory's `.lowprof-exporter-state`: one fixed-size record,
 * rewritten in place (pwrite) after every batch read from the shared ring and
 * before that batch's ring space is handed back (docs: README, "Restarts").
 *
 * Why it is exact: the ring's committed consumer position lives in shared
 * memory the supervisor keeps, and it only moves after the record naming it
 * was written. So when a new exporter starts, the ring's position is either
 * pos_after (the last batch was committed: accepted_after samples had been
 * read) or pos_before (it was not: the new exporter reads that batch again,
 * and accepted_before counts what came before it). The samples the killed
 * exporter had read but not written are that count minus the samples in the
 * profile.pb.gz it last wrote, which the new exporter reloads.
 *
 * The record is checked (magic, version, checksum) like any other input; a
 * bad one means "no previous exporter", never a crash. A pwrite of the record
 * (128 bytes) at offset 0 is not torn by SIGKILL (the kernel finishes the copy into the
 * page cache first); a host crash is not what this is for.
 */
#ifndef LOWPROF_EXPORTER_STATE_H
#define LOWPROF_EXPORTER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/output_files.h"

#define EXPORTER_STATE_FILE OUTPUT_FILE_EXPORTER_STATE

struct exporter_state {
	char run_id[33];          /* the supervisor's --run-id: 32 hex digits + NUL */
	uint64_t start_unix_ns;   /* the run's start: the profile's time_nanos */
	uint64_t pos_before;      /* ring consumer position before the last batch */
	uint64_t pos_after;       /* ... and after it */
	uint64_t accepted_before; /* samples in the cumulative profile at pos_before */
	uint64_t accepted_after;  /* ... and at pos_after (reloaded ones included) */
	uint64_t lost_total;      /* samples lost to exporter deaths so far this run */
	uint64_t flushes;         /* profile.pb.gz written this run */
	uint64_t written_samples; /* of the accepted ones, those the files held when last written */
	uint64_t window_start_ns; /* the time_nanos of the profile.pb.gz last written */
	uint64_t set_aside;       /* files this run could not restore, moved aside */
	uint64_t offcpu_window_start_ns; /* the time_nanos of the offcpu.pb.gz last written; 0: none */
};

/* Files a restart could not take back are renamed NAME.aside.1 (the newest)
 * to NAME.aside.N, never overwritten unseen; the oldest beyond N goes. */
#define EXPORTER_STATE_ASIDE_MAX 4

/* Opens (creating, 0600) the state file in dirfd. fd, or -errno. */
int exporter_state_open(int dirfd);
/* 0 and *out; -ENOENT (empty file) or -EINVAL (not a valid record). */
int exporter_state_load(int fd, struct exporter_state *out);
/* 0, or -errno. */
int exporter_state_store(int fd, const struct exporter_state *st);
/* Renames name (in dirfd) to name.aside.1, shifting the older ones up to
 * EXPORTER_STATE_ASIDE_MAX. 0, or -errno (err set). */
int exporter_state_set_aside(int dirfd, const char *name, char *err, size_t errlen);

#endif
