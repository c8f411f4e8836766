/*
 * Atomic file replacement: readers see the old file or the new one, never a
 * partial write. NAME.tmp is created in dirfd, filled by the writer, flushed
 * and fsync'd, then renamed over NAME (and the directory fsync'd so the
 * rename survives a crash: at once, or at output_file_sync_dirs). On any failure NAME.tmp is removed and NAME is
 * left as it was. New content equal to what NAME holds (the last content
 * written there, when small, and NAME still the file we wrote) leaves NAME
 * as it is: no fsync, no rename.
 */
#ifndef LOWPROF_EXPORTER_OUTPUT_FILE_H
#define LOWPROF_EXPORTER_OUTPUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Every output file: its user and group read it, nobody else. */
#define OUTPUT_FILE_MODE 0640

/* The writer returns 0 on success, anything else on failure (a negative errno
 * is reported as such). dirfd may be AT_FDCWD. name must not be empty.
 * Returns 0 or a negative errno with a message in err. */
int output_file_write_atomic(int dirfd, const char *name, int (*writer)(FILE *, void *),
			     void *ctx, char *err, size_t errlen);

/* Flags of output_file_write_flags. OUTPUT_FILE_PROCESS_SAFE: the file only
 * has to outlive the process that writes it, not the host: no fsync of the
 * file, none of its directory (two I/O sleeps and their CPU saved); the
 * rename keeps it whole for readers all the same. For a file read back by
 * this run alone (the exporter's checkpoint and window splits: a host crash
 * ends the run, and the next one removes them unread), and for a view of a
 * durable file (profile.folded and flamegraph.svg of profile.pb.gz). */
#define OUTPUT_FILE_PROCESS_SAFE 1u
/* output_file_write_atomic with flags (0: the same). */
int output_file_write_flags(int dirfd, const char *name, int (*writer)(FILE *, void *), void *ctx,
			    unsigned flags, char *err, size_t errlen);

/*
 * Deferred directory fsyncs: while on, a rename only marks its directory, and
 * output_file_sync_dirs fsyncs it once for every file replaced since (the
 * exporter calls it at the end of each loop pass: one directory fsync per
 * pass that wrote, not one per file). Off (the default): each write fsyncs
 * its directory itself.
 */
void output_file_defer_dir_sync(bool on);
/* The marked directory's fsync, if any. 0, or a negative errno with a message in err. */
int output_file_sync_dirs(char *err, size_t errlen);

#endif
