/*
 * Atomic replace through a directory fd: the exporter is sandboxed, so it
 * writes relative to a directory opened before seccomp, never by path.
 */
#include "exporter/formats/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errbuf.h"

int output_file_write_atomic(int dirfd, const char *name, int (*writer)(FILE *, void *),
			     void *ctx, char *err, size_t errlen)
{
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
	f = fdopen(fd, "w");
	if (f == NULL) {
		ret = -errno;
		errbuf_set(err, errlen, "output: fdopen %s: %s", tmp, strerror(errno));
		goto cleanup;
	}
	fd = -1; /* owned by f now */
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
	/* Data must be on disk before the rename publishes it. */
	if (fsync(fileno(f)) != 0) {
		ret = -errno;
		errbuf_set(err, errlen, "output: fsync %s: %s", tmp, strerror(errno));
		goto cleanup;
	}
	wr = fclose(f);
	f = NULL;
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
	/* Make the rename itself durable. Filesystems without directory fsync say
	 * EINVAL, and an O_PATH dirfd says EBADF: the rename stands either way. */
	if (dirfd >= 0 && fsync(dirfd) != 0 && errno != EINVAL && errno != EROFS &&
	    errno != EBADF) {
		ret = -errno;
		errbuf_set(err, errlen, "output: fsync directory for %s: %s", name,
				   strerror(errno));
	}
cleanup:
	if (f != NULL)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (tmp_exists)
		unlinkat(dirfd, tmp, 0);
	return ret;
}
