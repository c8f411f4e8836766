#include "exporter/formats/archive.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/array_grow.h"
#include "common/errbuf.h"
#include "common/file_read.h"
#include "common/log.h"
#include "common/mono_clock.h"
#include "exporter/formats/output_file.h"
#include "exporter/formats/pprof_writer.h"

#define ARCHIVE_NAME_MAX 48 /* the sscanf width below is one less */

struct archive_entry {
	char name[ARCHIVE_NAME_MAX];
	uint64_t end_ns;
	uint64_t bytes;
};

struct archive {
	int dirfd;
	uint64_t max_age_ns, max_bytes, bytes, written, removed;
	struct archive_entry *e; /* oldest first */
	size_t n, cap;
};

/* profile-YYYYMMDDTHHMMSS.mmmZ.pb.gz, and nothing else: the index is read back,
 * and a name in it is unlinked. */
static bool archive_name_ok(const char *name)
{
	size_t len = strlen(name), pl = strlen(ARCHIVE_PREFIX), sl = strlen(ARCHIVE_SUFFIX), i;

	if (len <= pl + sl || len >= ARCHIVE_NAME_MAX || strncmp(name, ARCHIVE_PREFIX, pl) != 0 ||
	    strcmp(name + len - sl, ARCHIVE_SUFFIX) != 0)
		return false;
	for (i = pl; i < len - sl; i++) {
		if (strchr("0123456789TZ.", name[i]) == NULL)
			return false;
	}
	return true;
}

static void archive_load_index(struct archive *a)
{
	char *buf = NULL, *line, *save = NULL;
	struct archive_entry e;
	char err[128];
	size_t len;
	int fd;

	fd = openat(a->dirfd, ARCHIVE_INDEX_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (file_read_fd(fd, ARCHIVE_INDEX_FILE, (size_t)ARCHIVE_MAX_FILES * 80, &buf, &len, err,
			 sizeof(err)) != 0) {
		log_warn("%s: %s; the archive's older files are not pruned", ARCHIVE_INDEX_FILE, err);
		close(fd);
		return;
	}
	close(fd);
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		memset(&e, 0, sizeof(e));
		if (sscanf(line, "%47s %" SCNu64 " %" SCNu64, e.name, &e.end_ns, &e.bytes) != 3 || !archive_name_ok(e.name) ||
		    (a->n > 0 && e.end_ns < a->e[a->n - 1].end_ns) || a->n >= ARCHIVE_MAX_FILES)
			continue;
		if (array_grow((void **)&a->e, &a->cap, a->n + 1, sizeof(e)) != 0)
			break;
		a->e[a->n++] = e;
		a->bytes += e.bytes;
	}
	free(buf);
}

struct archive *archive_new(int dirfd, uint64_t max_age_ns, uint64_t max_bytes)
{
	struct archive *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->dirfd = dirfd;
	a->max_age_ns = max_age_ns;
	a->max_bytes = max_bytes;
	archive_load_index(a);
	return a;
}

void archive_free(struct archive *a)
{
	if (a == NULL)
		return;
	free(a->e);
	free(a);
}

static int archive_index_writer(FILE *f, void *arg)
{
	const struct archive *a = arg;
	size_t i;

	for (i = 0; i < a->n; i++)
		fprintf(f, "%s %" PRIu64 " %" PRIu64 "\n", a->e[i].name, a->e[i].end_ns, a->e[i].bytes);
	return ferror(f) ? -EIO : 0;
}

static void archive_store_index(struct archive *a)
{
	char err[256];

	if (output_file_write_atomic(a->dirfd, ARCHIVE_INDEX_FILE, archive_index_writer, a, err,
				     sizeof(err)) != 0)
		log_warn("%s: %s", ARCHIVE_INDEX_FILE, err);
}

static void archive_remove_oldest(struct archive *a)
{
	if (unlinkat(a->dirfd, a->e[0].name, 0) != 0 && errno != ENOENT)
		log_warn("archive: removing %s: %s", a->e[0].name, strerror(errno));
	a->bytes -= a->e[0].bytes;
	a->removed++;
	a->n--;
	memmove(&a->e[0], &a->e[1], a->n * sizeof(a->e[0]));
}

static bool archive_prune_entries(struct archive *a, uint64_t now_ns)
{
	bool changed = false;

	while (a->n > 0 && (a->bytes > a->max_bytes ||
			    (now_ns > a->max_age_ns && a->e[0].end_ns < now_ns - a->max_age_ns))) {
		archive_remove_oldest(a);
		changed = true;
	}
	return changed;
}

void archive_prune(struct archive *a, uint64_t now_unix_ns)
{
	if (archive_prune_entries(a, now_unix_ns))
		archive_store_index(a);
}

struct archive_job {
	const struct profile *p;
	char err[256];
};

static int archive_pprof_writer(FILE *f, void *arg)
{
	struct archive_job *job = arg;

	return pprof_write(job->p, f, job->err, sizeof(job->err));
}

int archive_add(struct archive *a, const struct profile *p, uint64_t end_unix_ns, char *err,
		size_t errlen)
{
	struct archive_job job = { .p = p };
	struct archive_entry e;
	struct tm tm;
	time_t secs = (time_t)(end_unix_ns / NSEC_PER_SEC);
	struct stat st;
	int rc;

	memset(&e, 0, sizeof(e));
	gmtime_r(&secs, &tm);
	snprintf(e.name, sizeof(e.name), ARCHIVE_PREFIX "%04u%02u%02uT%02u%02u%02u.%03uZ" ARCHIVE_SUFFIX,
		 (unsigned)(tm.tm_year + 1900) % 10000, (unsigned)(tm.tm_mon + 1) % 100,
		 (unsigned)tm.tm_mday % 100, (unsigned)tm.tm_hour % 100, (unsigned)tm.tm_min % 100,
		 (unsigned)tm.tm_sec % 100, (unsigned)(end_unix_ns % NSEC_PER_SEC / NSEC_PER_MSEC));
	e.end_ns = end_unix_ns;
	rc = output_file_write_atomic(a->dirfd, e.name, archive_pprof_writer, &job, err, errlen);
	if (rc != 0)
		return rc;
	if (fstatat(a->dirfd, e.name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		e.bytes = (uint64_t)st.st_size;
	/* The same name again (two writes in one millisecond): the newer file replaced it. */
	if (a->n > 0 && strcmp(a->e[a->n - 1].name, e.name) == 0) {
		a->bytes -= a->e[a->n - 1].bytes;
		a->n--;
	}
	if (a->n >= ARCHIVE_MAX_FILES)
		archive_remove_oldest(a);
	rc = array_grow((void **)&a->e, &a->cap, a->n + 1, sizeof(e));
	if (rc != 0)
		return errbuf_fail(rc, err, errlen, "archive: out of memory");
	a->e[a->n++] = e;
	a->bytes += e.bytes;
	a->written++;
	archive_prune_entries(a, end_unix_ns);
	archive_store_index(a);
	return 0;
}

void archive_get_stats(const struct archive *a, struct archive_stats *out)
{
	out->files = a->n;
	out->bytes = a->bytes;
	out->written = a->written;
	out->removed = a->removed;
}
