/* A file the supervisor holds for the exporter (held_file.h). */
#define _GNU_SOURCE
#include "exporter/formats/held_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errbuf.h"

/* The stream's sink: pwrite at an advancing offset, within the bound. */
struct held_sink {
	int fd;
	off_t off;
	size_t max;
	int err; /* the first failure's errno */
};

static ssize_t held_sink_write(void *cookie, const char *buf, size_t n)
{
	struct held_sink *s = cookie;
	size_t done = 0;
	ssize_t w;

	if ((size_t)s->off + n > s->max) {
		s->err = EFBIG;
		errno = EFBIG;
		return -1;
	}
	while (done < n) {
		w = pwrite(s->fd, buf + done, n - done, s->off + (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->err = w < 0 ? errno : EIO;
			errno = s->err;
			return -1;
		}
		done += (size_t)w;
	}
	s->off += (off_t)n;
	return (ssize_t)n;
}

int held_file_clear(int fd)
{
	return ftruncate(fd, 0) == 0 ? 0 : -errno;
}

int held_file_write(int fd, int (*writer)(FILE *, void *), void *ctx, size_t max_bytes,
		    char *err, size_t errlen)
{
	cookie_io_functions_t io = {.write = held_sink_write};
	struct held_sink sink = {.fd = fd, .max = max_bytes};
	int rc, closed;
	FILE *out;

	out = fopencookie(&sink, "w", io);
	if (out == NULL) {
		rc = -errno;
		errbuf_set(err, errlen, "held file: %s", strerror(errno));
		return rc;
	}
	rc = writer(out, ctx);
	closed = fclose(out); /* flushes through the sink */
	if (rc == 0 && closed != 0)
		rc = -(sink.err ? sink.err : EIO);
	if (rc == 0 && ftruncate(fd, sink.off) != 0)
		rc = -errno;
	if (rc != 0) {
		/* The sink's own failure says more than the writer's. */
		if (sink.err != 0)
			rc = -sink.err;
		else if (rc > 0 || rc < -4095)
			rc = -EIO;
		errbuf_set(err, errlen, "held file: %s",
			   rc == -EFBIG ? "larger than its bound" : strerror(-rc));
		/* Neither the old content nor the new: nothing rather than a mix. */
		(void)held_file_clear(fd);
	}
	return rc;
}

int held_file_read(int fd, size_t max_bytes, uint8_t **buf, size_t *len, char *err,
		   size_t errlen)
{
	struct stat sb;
	size_t have = 0, size;
	uint8_t *b;
	ssize_t n;

	*buf = NULL;
	*len = 0;
	if (fstat(fd, &sb) != 0) {
		errbuf_set(err, errlen, "held file: %s", strerror(errno));
		return -errno;
	}
	if (sb.st_size < 0 || (uint64_t)sb.st_size > max_bytes) {
		errbuf_set(err, errlen, "held file: %lld bytes, more than its bound of %zu",
			   (long long)sb.st_size, max_bytes);
		return -EFBIG;
	}
	size = (size_t)sb.st_size;
	if (size == 0)
		return 0;
	b = malloc(size);
	if (b == NULL) {
		errbuf_set(err, errlen, "held file: out of memory");
		return -ENOMEM;
	}
	while (have < size) {
		n = pread(fd, b + have, size - have, (off_t)have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	if (have != size) {
		free(b);
		errbuf_set(err, errlen, "held file: short read (%zu of %zu bytes)", have, size);
		return -EIO;
	}
	*buf = b;
	*len = size;
	return 0;
}
