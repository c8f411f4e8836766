/* unwinder_proto: messages between the loader and lowprof-unwinder (see the header). */
#define _GNU_SOURCE
#include "ipc/unwinder_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errbuf.h"

/* What the loader requires of a table memfd, and so what the unwinder sets. */
#define UNWINDER_TABLE_SEALS (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)

int unwinder_request_check(const void *buf, size_t n, int fd, uint32_t *seq, char *err,
			   size_t errlen)
{
	struct unwinder_request req;

	if (n != sizeof(req))
		return errbuf_fail(-EINVAL, err, errlen, "request of %zu bytes, want %zu", n, sizeof(req));
	memcpy(&req, buf, sizeof(req));
	if (req.magic != UNWINDER_REQUEST_MAGIC)
		return errbuf_fail(-EINVAL, err, errlen, "bad request magic 0x%08x", req.magic);
	if (fd < 0)
		return errbuf_fail(-EINVAL, err, errlen, "request without a file descriptor");
	*seq = req.seq;
	return 0;
}

int unwinder_reply_check(const struct unwinder_reply *r, size_t n, int fd, size_t max_table,
			 char *err, size_t errlen)
{
	if (n != sizeof(*r))
		return errbuf_fail(-EINVAL, err, errlen, "reply of %zu bytes, want %zu", n, sizeof(*r));
	if (r->magic != UNWINDER_REPLY_MAGIC)
		return errbuf_fail(-EINVAL, err, errlen, "bad reply magic 0x%08x", r->magic);
	if (memchr(r->msg, '\0', sizeof(r->msg)) == NULL)
		return errbuf_fail(-EINVAL, err, errlen, "reply message not terminated");
	if (r->status != 0) {
		if (fd >= 0)
			return errbuf_fail(-EINVAL, err, errlen, "failure reply carrying a file descriptor");
		if (r->status < 0)
			return errbuf_fail(-EINVAL, err, errlen, "negative status %d", r->status);
		return 0;
	}
	if (fd < 0)
		return errbuf_fail(-EINVAL, err, errlen, "success reply without a table memfd");
	if (r->nsegments == 0 || r->nsegments > UNWINDER_MAX_SEGMENTS)
		return errbuf_fail(-EINVAL, err, errlen, "%u executable segments (1..%d allowed)",
				   r->nsegments, UNWINDER_MAX_SEGMENTS);
	/* Too short for a table header is the table decoder's to say. */
	if (r->table_len == 0 || r->table_len > max_table)
		return errbuf_fail(-EINVAL, err, errlen, "table of %llu bytes (limit %zu)",
				   (unsigned long long)r->table_len, max_table);
	return 0;
}

static int unwinder_write_all(int fd, const uint8_t *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

int unwinder_table_memfd_create(const void *buf, size_t len, char *err, size_t errlen)
{
	int fd, rc;

	fd = memfd_create("lowprof-unwind-table", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return errbuf_fail(-errno, err, errlen, "table memfd: %s", strerror(errno));
	rc = unwinder_write_all(fd, buf, len);
	if (rc == 0 && fcntl(fd, F_ADD_SEALS, UNWINDER_TABLE_SEALS | F_SEAL_SEAL) != 0)
		rc = -errno;
	if (rc != 0) {
		close(fd);
		return errbuf_fail(rc, err, errlen, "table memfd: %s", strerror(-rc));
	}
	return fd;
}

int unwinder_table_memfd_map(int fd, size_t len, size_t max_table, const void **bytes, char *err,
			     size_t errlen)
{
	struct stat st;
	void *p;
	int seals;

	*bytes = NULL;
	if (len > max_table || len == 0)
		return errbuf_fail(-EINVAL, err, errlen, "table of %zu bytes (limit %zu)", len, max_table);
	if (fstat(fd, &st) != 0)
		return errbuf_fail(-errno, err, errlen, "fstat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size != len)
		return errbuf_fail(-EINVAL, err, errlen, "table memfd of %lld bytes, reply says %zu",
				   (long long)st.st_size, len);
	/* Sealed, or the peer could change the table between our check and our copy. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & UNWINDER_TABLE_SEALS) != UNWINDER_TABLE_SEALS)
		return errbuf_fail(-EINVAL, err, errlen,
				   "table memfd not sealed against writes and resizing");
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return errbuf_fail(-errno, err, errlen, "mmap of the table: %s", strerror(errno));
	*bytes = p;
	return 0;
}
