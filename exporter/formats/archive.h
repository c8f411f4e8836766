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
#include <stdio.h>

#define ARCHIVE_INDEX_FILE "archive.index"
#define ARCHIVE_PREFIX "profile-"
#define ARCHIVE_SUFFIX ".pb.gz"
/* The index's size bound when read back: far more files than any retention keeps. */
#define ARCHIVE_MAX_FILES 100000
/* profile-YYYYMMDDTHHMMSS.mmmZ.pb.gz is 33 bytes; room for a NUL and more. */
#define ARCHIVE_NAME_MAX 48
/* The longest line of a valid index (a name, two 20-digit numbers). */
#define ARCHIVE_LINE_MAX (ARCHIVE_NAME_MAX + 2 * 21 + 1)

struct profile;
struct archive;

/* One line of the index: "NAME END_NS BYTES\n", NAME the file of the interval
 * that ended at END_NS (its UTC time, to the millisecond), BYTES its size. */
struct archive_entry {
	char name[ARCHIVE_NAME_MAX];
	uint64_t end_ns;
	uint64_t bytes;
};

struct archive_stats {
	size_t files;
	uint64_t bytes;
	uint64_t written;  /* files written by this exporter */
	uint64_t removed;  /* files removed by retention by this exporter */
};

/*
 * Reads the index in dirfd into *out. 0: read (a missing index is an empty
 * archive). -EINVAL (or the read's -errno): the index was refused, err says
 * why (the line and the rule); *out is an empty archive that will not write
 * its index, so the refused one is not overwritten, until archive_index_moved()
 * says the caller moved it aside. The files it lists are never removed by
 * this archive (it does not know them). -ENOMEM: *out is NULL.
 */
int archive_open(int dirfd, uint64_t max_age_ns, uint64_t max_bytes, struct archive **out,
		 char *err, size_t errlen);
/* The refused index was moved aside: the archive may write its own. */
void archive_index_moved(struct archive *a);
void archive_free(struct archive *a);

/*
 * The index's text, checked line by line: each line "NAME END_NS BYTES" and a
 * newline; NAME an archive file name (ARCHIVE_PREFIX, the UTC time of END_NS
 * to the millisecond, ARCHIVE_SUFFIX); the numbers plain decimals that fit 64
 * bits; END_NS strictly increasing; at most ARCHIVE_MAX_FILES lines; the sizes'
 * sum within 64 bits. 0 with *out (malloc'd, oldest first; free it) and *n,
 * or -EINVAL with "line N: reason" in err, or -ENOMEM.
 */
int archive_index_parse(const char *buf, size_t len, struct archive_entry **out, size_t *n,
			char *err, size_t errlen);
/* The index's text for e[0..n): what archive_index_parse reads back equal. */
int archive_index_format(const struct archive_entry *e, size_t n, FILE *f);
/* The archive file name of the interval ending at end_ns. */
void archive_entry_name(uint64_t end_ns, char name[ARCHIVE_NAME_MAX]);

/* Writes p as the archive file of the interval ending end_unix_ns, then
 * applies the retention as of end_unix_ns. 0, or -errno with err set. */
int archive_add(struct archive *a, const struct profile *p, uint64_t end_unix_ns, char *err,
		size_t errlen);

/* Removes, oldest first, what is past the retention as of now_unix_ns. */
void archive_prune(struct archive *a, uint64_t now_unix_ns);

void archive_get_stats(const struct archive *a, struct archive_stats *out);

#endif
