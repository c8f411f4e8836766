#include "common/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int file_read_all(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
	int fd, rc;

	*out = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = file_read_fd(fd, path, max, out, len, err, errlen);
	close(fd);
	return rc;
}

int file_read_fd(int fd, const char *name, size_t max, char **out, size_t *len, char *err,
		 size_t errlen)
{
	size_t cap = 16384, used = 0;
	char *buf = NULL, *bigger;
	const char *path = name;
	ssize_t n;
	int rc = 0;

	*out = NULL;
	*len = 0;
	for (;;) {
		/* Keep one byte for the terminator. */
		if (buf == NULL || used + 1 >= cap) {
			if (buf != NULL) {
				if (cap > max) {
					rc = -EFBIG;
					snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
					goto out;
				}
				cap *= 2;
			}
			bigger = realloc(buf, cap);
			if (bigger == NULL) {
				rc = -ENOMEM;
				snprintf(err, errlen, "%s: out of memory", path);
				goto out;
			}
			buf = bigger;
		}
		n = read(fd, buf + used, cap - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* ESRCH from /proc/PID files: the process exited between open and read. */
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (used > max) {
		rc = -EFBIG;
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
		goto out;
	}
	buf[used] = '\0';
	*out = buf;
	*len = used;
	buf = NULL;
out:
	free(buf);
	return rc;
}
