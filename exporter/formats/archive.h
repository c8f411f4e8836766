/*
 * --archive: each interval's profile kept as its own pprof file in the output
 * directory, profile-YYYYMMDDTHHMMSS.mmmZ.pb.gz (the interval's end, UTC),
 * beside the window's files. Retention: files older than max_age and, past
 * max_bytes in all, the oldest are removed, oldest first. The list lives in
 * ARCHIVE_INDEX_FILE, rewritten atomically after each change, so a
 * restarted exporter (which may not list the directory) knows what to prune.
 */
#ifndef LOWPROF_EXPORTER_ARCHIVE_H
#define LOWPROF_EXPORTER_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#define ARCHIVE_INDEX_FILE "archive.index"
#define ARCHIVE_PREFIX "profile-"
#define ARCHIVE_SUFFIX ".pb.gz"
/* The index's size bound when read back: far more files than any retention keeps. */
#define ARCHIVE_MAX_FILES 100000

struct profile;
struct archive;

struct archive_stats {
	size_t files;
	uint64_t bytes;
	uint64_t written;  /* files written by this exporter */
	uint64_t removed;  /* files removed by retention by this exporter */
};

/* Reads the index in dirfd (a missing or malformed one: an empty archive).
 * NULL when out of memory. */
struct archive *archive_new(int dirfd, uint64_t max_age_ns, uint64_t max_bytes);
void archive_free(struct archive *a);

/* Writes p as the archive file of the interval ending end_unix_ns, then
 * applies the retention as of end_unix_ns. 0, or -errno with err set. */
int archive_add(struct archive *a, const struct profile *p, uint64_t end_unix_ns, char *err,
		size_t errlen);

/* Removes, oldest first, what is past the retention as of now_unix_ns. */
void archive_prune(struct archive *a, uint64_t now_unix_ns);

void archive_get_stats(const struct archive *a, struct archive_stats *out);

#endif
