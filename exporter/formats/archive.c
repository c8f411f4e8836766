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

struct archive {
	int dirfd;
	uint64_t max_age_ns, max_bytes, bytes, written, removed;
	bool keep_index; /* a refused index is still in place: never overwrite it */
	struct archive_entry *e; /* oldest first */
	size_t n, cap;
};

void archive_entry_name(uint64_t end_ns, char name[ARCHIVE_NAME_MAX])
{
	time_t secs = (time_t)(end_ns / NSEC_PER_SEC);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(name, ARCHIVE_NAME_MAX, ARCHIVE_PREFIX "%04u%02u%02uT%02u%02u%02u.%03uZ" ARCHIVE_SUFFIX,
		 (unsigned)(tm.tm_year + 1900) % 10000, (unsigned)(tm.tm_mon + 1) % 100,
		 (unsigned)tm.tm_mday % 100, (unsigned)tm.tm_hour % 100, (unsigned)tm.tm_min % 100,
		 (unsigned)tm.tm_sec % 100, (unsigned)(end_ns % NSEC_PER_SEC / NSEC_PER_MSEC));
}

/* A plain decimal (no sign, no leading zero but "0") that fits 64 bits, ending
 * at a space or the end of the field; advances *p. */
static int archive_parse_u64(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9' || (*s == '0' && s + 1 < end && s[1] != ' '))
		return -1;
	while (s < end && *s >= '0' && *s <= '9') {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		s++;
	}
	*out = v;
	*p = s;
	return 0;
}

/* One line (without its newline) into *e: 0, or -1 with the rule it broke. */
static int archive_parse_line(const char *line, size_t len, struct archive_entry *e,
			      const char **why)
{
	const char *p = line, *end = line + len, *sp;
	char expect[ARCHIVE_NAME_MAX];
	size_t nl;

	memset(e, 0, sizeof(*e));
	sp = memchr(p, ' ', len);
	if (sp == NULL) {
		*why = "not \"NAME END_NS BYTES\"";
		return -1;
	}
	nl = (size_t)(sp - p);
	if (nl == 0 || nl >= ARCHIVE_NAME_MAX || memchr(p, '\0', nl) != NULL) {
		*why = "the file name is empty, too long or holds a NUL";
		return -1;
	}
	memcpy(e->name, p, nl);
	p = sp + 1;
	if (archive_parse_u64(&p, end, &e->end_ns) != 0 || p >= end || *p != ' ') {
		*why = "END_NS is not a decimal of 64 bits followed by a space";
		return -1;
	}
	p++;
	if (archive_parse_u64(&p, end, &e->bytes) != 0 || p != end) {
		*why = "BYTES is not a decimal of 64 bits ending the line";
		return -1;
	}
	/* The name is the interval's end: anything else is not ours to unlink. */
	archive_entry_name(e->end_ns, expect);
	if (strcmp(expect, e->name) != 0) {
		*why = "the file name is not the archive name of END_NS";
		return -1;
	}
	return 0;
}

int archive_index_parse(const char *buf, size_t len, struct archive_entry **out, size_t *n,
			char *err, size_t errlen)
{
	struct archive_entry *e = NULL, cur;
	const char *p = buf, *end = buf + len, *nl, *why = NULL;
	size_t count = 0, cap = 0, lineno = 0;
	uint64_t sum = 0;
	int rc;

	*out = NULL;
	*n = 0;
	while (p < end) {
		lineno++;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL) {
			why = "the last line has no newline (a cut file)";
			goto bad;
		}
		if ((size_t)(nl - p) > ARCHIVE_LINE_MAX) {
			why = "longer than any valid line";
			goto bad;
		}
		if (archive_parse_line(p, (size_t)(nl - p), &cur, &why) != 0)
			goto bad;
		if (count > 0 && cur.end_ns <= e[count - 1].end_ns) {
			why = "END_NS does not increase";
			goto bad;
		}
		if (count >= ARCHIVE_MAX_FILES) {
			why = "more files than an archive keeps";
			goto bad;
		}
		if (cur.bytes > UINT64_MAX - sum) {
			why = "the sizes' sum overflows";
			goto bad;
		}
		rc = array_grow((void **)&e, &cap, count + 1, sizeof(cur));
		if (rc != 0) {
			free(e);
			return errbuf_fail(rc, err, errlen, "archive index: out of memory");
		}
		sum += cur.bytes;
		e[count++] = cur;
		p = nl + 1;
	}
	*out = e;
	*n = count;
	return 0;
bad:
	free(e);
	return errbuf_fail(-EINVAL, err, errlen, "line %zu: %s", lineno, why);
}

int archive_index_format(const struct archive_entry *e, size_t n, FILE *f)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "%s %" PRIu64 " %" PRIu64 "\n", e[i].name, e[i].end_ns, e[i].bytes);
	return ferror(f) ? -EIO : 0;
}

/* 0 (a missing index is an empty one), or -errno with err set. */
static int archive_load_index(struct archive *a, char *err, size_t errlen)
{
	char *buf = NULL, why[200];
	size_t len, i;
	int fd, rc;

	fd = openat(a->dirfd, ARCHIVE_INDEX_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return errbuf_fail(-errno, err, errlen, "%s: %s", ARCHIVE_INDEX_FILE, strerror(errno));
	}
	rc = file_read_fd(fd, ARCHIVE_INDEX_FILE, (size_t)ARCHIVE_MAX_FILES * ARCHIVE_LINE_MAX, &buf,
			  &len, why, sizeof(why));
	close(fd);
	if (rc != 0)
		return errbuf_fail(rc == -ENOMEM ? rc : -EINVAL, err, errlen, "%s", why);
	rc = archive_index_parse(buf, len, &a->e, &a->n, why, sizeof(why));
	free(buf);
	if (rc != 0)
		return errbuf_fail(rc, err, errlen, "%s: %s", ARCHIVE_INDEX_FILE, why);
	a->cap = a->n;
	for (i = 0; i < a->n; i++)
		a->bytes += a->e[i].bytes;
	return 0;
}

int archive_open(int dirfd, uint64_t max_age_ns, uint64_t max_bytes, struct archive **out,
		 char *err, size_t errlen)
{
	struct archive *a = calloc(1, sizeof(*a));
	int rc;

	*out = NULL;
	if (a == NULL)
		return errbuf_fail(-ENOMEM, err, errlen, "archive: out of memory");
	a->dirfd = dirfd;
	a->max_age_ns = max_age_ns;
	a->max_bytes = max_bytes;
	rc = archive_load_index(a, err, errlen);
	if (rc == -ENOMEM) {
		free(a);
		return rc;
	}
	if (rc != 0)
		a->keep_index = true;
	*out = a;
	return rc;
}

void archive_index_moved(struct archive *a)
{
	a->keep_index = false;
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

	return archive_index_format(a->e, a->n, f);
}

static void archive_store_index(struct archive *a)
{
	char err[256];

	if (a->keep_index)
		return; /* the refused one stays until it is moved aside */
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

int archive_add(struct archive *a, const struct profile *p, uint64_t end_unix_ns, char *err,
		size_t errlen)
{
	struct archive_entry e;
	struct stat st;
	int rc;

	memset(&e, 0, sizeof(e));
	archive_entry_name(end_unix_ns, e.name);
	e.end_ns = end_unix_ns;
	/* The index stays in time order (archive_index_parse refuses anything
	 * else): an interval that ends before the newest kept (the host's clock
	 * set back across a restart) is not archived. */
	if (a->n > 0 && end_unix_ns <= a->e[a->n - 1].end_ns && strcmp(a->e[a->n - 1].name, e.name) != 0)
		return errbuf_fail(-EINVAL, err, errlen,
				   "%s ends before the newest archived interval (clock set back?): not archived",
				   e.name);
	rc = pprof_write_file(a->dirfd, e.name, p, 0, err, errlen);
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
