/*
 * Atomic replace through a directory fd: the exporter is sandboxed, so it
 * writes relative to a directory opened before seccomp, never by path.
 */
#define _GNU_SOURCE /* fopencookie */
#include "exporter/formats/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errbuf.h"

/*
 * The last content written to each file, up to this size: a file whose new
 * content is byte for byte the same as what is already there (an idle host's
 * flame graph and folded stacks between two intervals) is not replaced, which
 * saves its fsync, rename and directory fsync (a dozen I/O sleeps a write on
 * a VM). The file is still checked to be the one we wrote (inode, size and
 * mtime), so a file removed or changed by someone else is written again.
 */
#define OUTPUT_FILE_MEMO_MAX (64u * 1024)
#define OUTPUT_FILE_MEMO_SLOTS 16 /* every name in OUTPUT_FILES_ALL (10) and room */

struct output_file_memo {
	int dirfd;
	char *name;        /* NULL: a free slot */
	uint8_t *data;
	size_t len;
	struct stat st;    /* the file as we left it */
};

static struct output_file_memo output_file_memos[OUTPUT_FILE_MEMO_SLOTS];
static unsigned output_file_memo_next;

/* output_file_defer_dir_sync: on, and the directory a rename left to fsync (-1: none). */
static bool output_file_defer;
static int output_file_dirty_dir = -1;

/* The stream the writer fills: to the temporary file, compared on the way
 * with the previous content and kept (when small enough) for the next time. */
struct output_file_sink {
	int fd;
	const struct output_file_memo *old; /* NULL: nothing to compare with */
	bool same;                          /* every byte so far equals old's */
	size_t len;
	uint8_t *copy;                      /* what was written, while keep */
	size_t cap;
	bool keep;                          /* false: past OUTPUT_FILE_MEMO_MAX, or no memory */
};

/* Filesystems without directory fsync say EINVAL, and an O_PATH dirfd says
 * EBADF: the rename stands either way. 0, or -1 with errno. */
static int output_file_fsync_dir(int dirfd)
{
	if (fsync(dirfd) != 0 && errno != EINVAL && errno != EROFS && errno != EBADF)
		return -1;
	return 0;
}

void output_file_defer_dir_sync(bool on)
{
	output_file_defer = on;
}

int output_file_sync_dirs(char *err, size_t errlen)
{
	int dirfd = output_file_dirty_dir;

	if (dirfd < 0)
		return 0;
	output_file_dirty_dir = -1;
	if (output_file_fsync_dir(dirfd) != 0) {
		int rc = -errno;

		errbuf_set(err, errlen, "output: fsync directory: %s", strerror(errno));
		return rc;
	}
	return 0;
}

static ssize_t output_file_sink_write(void *cookie, const char *buf, size_t n)
{
	struct output_file_sink *s = cookie;
	size_t done = 0;
	ssize_t w;

	if (s->same && (s->old == NULL || s->len + n > s->old->len ||
			memcmp(s->old->data + s->len, buf, n) != 0))
		s->same = false;
	if (s->keep && s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 16384;
		uint8_t *p;

		while (cap < s->len + n)
			cap *= 2;
		p = cap <= OUTPUT_FILE_MEMO_MAX ? realloc(s->copy, cap) : NULL;
		if (p == NULL) {
			free(s->copy);
			s->copy = NULL;
			s->keep = false;
		} else {
			s->copy = p;
			s->cap = cap;
		}
	}
	if (s->keep)
		memcpy(s->copy + s->len, buf, n);
	s->len += n;
	while (done < n) {
		w = write(s->fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return (ssize_t)n;
}

static int output_file_sink_close(void *cookie)
{
	struct output_file_sink *s = cookie;

	return s->fd >= 0 ? 0 : -1;
}

static struct output_file_memo *output_file_memo_find(int dirfd, const char *name)
{
	unsigned i;

	for (i = 0; i < OUTPUT_FILE_MEMO_SLOTS; i++) {
		if (output_file_memos[i].name != NULL && output_file_memos[i].dirfd == dirfd &&
		    strcmp(output_file_memos[i].name, name) == 0)
			return &output_file_memos[i];
	}
	return NULL;
}

static void output_file_memo_drop(struct output_file_memo *m)
{
	if (m == NULL)
		return;
	free(m->name);
	free(m->data);
	memset(m, 0, sizeof(*m));
}

/* The previous content of NAME if the file is still the one we wrote. */
static const struct output_file_memo *output_file_memo_current(int dirfd, const char *name)
{
	struct output_file_memo *m = output_file_memo_find(dirfd, name);
	struct stat st;

	if (m == NULL)
		return NULL;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_ino != m->st.st_ino ||
	    st.st_dev != m->st.st_dev || st.st_size != m->st.st_size ||
	    st.st_mtim.tv_sec != m->st.st_mtim.tv_sec || st.st_mtim.tv_nsec != m->st.st_mtim.tv_nsec ||
	    (st.st_mode & 07777) != OUTPUT_FILE_MODE) {
		output_file_memo_drop(m);
		return NULL;
	}
	return m;
}

/* Remember what NAME now holds (the sink's copy is taken over). */
static void output_file_memo_store(int dirfd, const char *name, struct output_file_sink *s)
{
	struct output_file_memo *m = output_file_memo_find(dirfd, name);
	struct stat st;
	char *n;

	/* An empty file has no copy, but is remembered all the same. */
	if (!s->keep || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		output_file_memo_drop(m);
		return;
	}
	if (m == NULL) {
		m = &output_file_memos[output_file_memo_next];
		output_file_memo_next = (output_file_memo_next + 1) % OUTPUT_FILE_MEMO_SLOTS;
		output_file_memo_drop(m);
		n = strdup(name);
		if (n == NULL)
			return;
		m->name = n;
		m->dirfd = dirfd;
	} else {
		free(m->data);
	}
	m->data = s->copy;
	m->len = s->len;
	m->st = st;
	s->copy = NULL;
}

int output_file_write_atomic(int dirfd, const char *name, int (*writer)(FILE *, void *),
			     void *ctx, char *err, size_t errlen)
{
	return output_file_write_flags(dirfd, name, writer, ctx, 0, err, errlen);
}

int output_file_write_flags(int dirfd, const char *name, int (*writer)(FILE *, void *), void *ctx,
			    unsigned flags, char *err, size_t errlen)
{
	bool durable = (flags & OUTPUT_FILE_PROCESS_SAFE) == 0;
	static const cookie_io_functions_t io = {.write = output_file_sink_write,
						 .close = output_file_sink_close};
	struct output_file_sink sink = {.fd = -1, .same = true, .keep = true};
	char tmp[PATH_MAX];
	FILE *f = NULL;
	bool tmp_exists = false;
	int fd = -1, ret = 0, wr;

	if (name == NULL || name[0] == '\0' || writer == NULL) {
		errbuf_set(err, errlen, "output: no file name or writer");
		return -EINVAL;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp)) {
		errbuf_set(err, errlen, "output: file name too long");
		return -ENAMETOOLONG;
	}
	/* Readable by the exporter's user and group only: the outputs name every
	 * sampled process's binaries and functions. fchmod too: a stale NAME.tmp
	 * keeps its mode through O_TRUNC. */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, OUTPUT_FILE_MODE);
	if (fd < 0) {
		ret = -errno;
		errbuf_set(err, errlen, "output: create %s: %s", tmp, strerror(errno));
		goto cleanup;
	}
	tmp_exists = true;
	if (fchmod(fd, OUTPUT_FILE_MODE) != 0) {
		ret = -errno;
		errbuf_set(err, errlen, "output: chmod %s: %s", tmp, strerror(errno));
		goto cleanup;
	}
	sink.fd = fd;
	sink.old = output_file_memo_current(dirfd, name);
	f = fopencookie(&sink, "w", io);
	if (f == NULL) {
		ret = -errno;
		errbuf_set(err, errlen, "output: fopencookie %s: %s", tmp, strerror(errno));
		goto cleanup;
	}
	wr = writer(f, ctx);
	if (wr != 0) {
		ret = wr < 0 ? wr : -EIO;
		errbuf_set(err, errlen, "output: writing %s failed: %s", tmp, strerror(-ret));
		goto cleanup;
	}
	if (fflush(f) != 0 || ferror(f)) {
		ret = errno ? -errno : -EIO;
		errbuf_set(err, errlen, "output: write %s: %s", tmp, strerror(-ret));
		goto cleanup;
	}
	/* The same content as the file already holds: it stays, no I/O wait. */
	if (sink.old != NULL && sink.same && sink.len == sink.old->len)
		goto cleanup;
	/* Data must be on disk before the rename publishes it. */
	if (durable && fsync(fd) != 0) {
		ret = -errno;
		errbuf_set(err, errlen, "output: fsync %s: %s", tmp, strerror(errno));
		goto cleanup;
	}
	wr = fclose(f);
	f = NULL;
	if (wr == 0)
		wr = close(fd);
	fd = -1;
	if (wr != 0) {
		ret = -errno;
		errbuf_set(err, errlen, "output: close %s: %s", tmp, strerror(errno));
		goto cleanup;
	}
	if (renameat(dirfd, tmp, dirfd, name) != 0) {
		ret = -errno;
		errbuf_set(err, errlen, "output: rename %s to %s: %s", tmp, name,
				   strerror(errno));
		goto cleanup;
	}
	tmp_exists = false;
	output_file_memo_store(dirfd, name, &sink);
	/* Make the rename itself durable: now, or at the caller's sync (one
	 * directory is marked at a time; another is fsynced at once). */
	if (durable && dirfd >= 0) {
		if (output_file_defer &&
		    (output_file_dirty_dir < 0 || output_file_dirty_dir == dirfd))
			output_file_dirty_dir = dirfd;
		else if (output_file_fsync_dir(dirfd) != 0) {
			ret = -errno;
			errbuf_set(err, errlen, "output: fsync directory for %s: %s", name,
				   strerror(errno));
		}
	}
cleanup:
	if (f != NULL)
		fclose(f);
	free(sink.copy);
	if (fd >= 0)
		close(fd);
	if (tmp_exists)
		unlinkat(dirfd, tmp, 0);
	return ret;
}
