#include "supervisor/audit_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/log.h"

static int audit_sink_open_file(struct audit_sink *s)
{
	struct stat st;
	int fd = open(s->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	s->file_fd = fd;
	s->size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	return 0;
}

int audit_sink_open(struct audit_sink *s, const char *path, uint64_t max_bytes, unsigned keep,
		    char *err, size_t errlen)
{
	int sv[2], rc;

	memset(s, 0, sizeof(*s));
	s->file_fd = s->sock = s->loader_end = -1;
	if (strlen(path) >= sizeof(s->path) - 8)
		return errbuf_fail(-ENAMETOOLONG, err, errlen, "--audit-log %s: too long", path);
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->max_bytes = max_bytes;
	s->keep = keep < 1 ? 1 : keep > AUDIT_SINK_KEEP_MAX ? AUDIT_SINK_KEEP_MAX : keep;
	rc = audit_sink_open_file(s);
	if (rc != 0)
		return errbuf_fail(rc, err, errlen, "--audit-log %s: %s", path, strerror(-rc));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		rc = -errno;
		close(s->file_fd);
		s->file_fd = -1;
		return errbuf_fail(rc, err, errlen, "audit channel: %s", strerror(-rc));
	}
	s->sock = sv[0];
	s->loader_end = sv[1];
	fcntl(s->sock, F_SETFL, O_NONBLOCK);
	return 0;
}

static void audit_sink_write(struct audit_sink *s, const char *buf, size_t len)
{
	ssize_t n;

	if (s->file_fd < 0) {
		s->failed++;
		return;
	}
	do {
		n = write(s->file_fd, buf, len);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)len) {
		s->failed++;
		return;
	}
	s->size += len;
}

/* The first record of each new file: where the previous one went, and what
 * was lost before it. */
static void audit_sink_rotated_record(struct audit_sink *s, const char *why)
{
	char line[512], stamp[40];
	struct timespec ts;
	struct tm tm;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof(line),
		     "{\"time\":\"%s.%06ldZ\",\"event\":\"audit_%s\",\"component\":\"supervisor\","
		     "\"pid\":%d,\"uid\":%d,\"records\":%llu,\"rotations\":%llu,\"reopens\":%llu,"
		     "\"suppressed\":%llu,\"result\":\"ok\",\"errno\":0}\n",
		     stamp, ts.tv_nsec / 1000, why, (int)getpid(), (int)getuid(),
		     (unsigned long long)s->records, (unsigned long long)s->rotations,
		     (unsigned long long)s->reopens, (unsigned long long)(s->refused + s->failed));
	if (n > 0 && (size_t)n < sizeof(line))
		audit_sink_write(s, line, (size_t)n);
}

static void audit_sink_rotate(struct audit_sink *s)
{
	char from[AUDIT_SINK_PATH_MAX + 16], to[AUDIT_SINK_PATH_MAX + 16];
	unsigned i;
	int rc;

	for (i = s->keep; i >= 1; i--) {
		if (i == 1)
			snprintf(from, sizeof(from), "%s", s->path);
		else
			snprintf(from, sizeof(from), "%s.%u", s->path, i - 1);
		snprintf(to, sizeof(to), "%s.%u", s->path, i);
		if (rename(from, to) != 0 && errno != ENOENT)
			log_warn("audit log: renaming %s: %s", from, strerror(errno));
	}
	close(s->file_fd);
	s->file_fd = -1;
	rc = audit_sink_open_file(s);
	if (rc != 0) {
		log_error("audit log %s: %s; records are lost until SIGHUP", s->path, strerror(-rc));
		return;
	}
	s->rotations++;
	audit_sink_rotated_record(s, "rotated");
}

/* One message: exactly one line, ending with its newline. */
static bool audit_sink_record_ok(const char *buf, size_t len)
{
	return len > 1 && buf[len - 1] == '\n' && memchr(buf, '\n', len - 1) == NULL &&
	       memchr(buf, '\0', len) == NULL;
}

size_t audit_sink_drain(struct audit_sink *s)
{
	char buf[AUDIT_SINK_RECORD_MAX];
	size_t done = 0;
	ssize_t n;

	if (s->sock < 0)
		return 0;
	for (;;) {
		n = recv(s->sock, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if ((size_t)n > sizeof(buf) || !audit_sink_record_ok(buf, (size_t)n)) {
			s->refused++;
			continue;
		}
		if (s->max_bytes > 0 && s->size > 0 && s->size + (uint64_t)n > s->max_bytes)
			audit_sink_rotate(s);
		audit_sink_write(s, buf, (size_t)n);
		s->records++;
		done++;
	}
	return done;
}

int audit_sink_reopen(struct audit_sink *s)
{
	int old, rc;

	/* What the loader sent before the signal belongs to the file as it was. */
	audit_sink_drain(s);
	/* The file after the drain: a rotation in it closed the one before, and
	 * its number may be the new file's (closing it would close that). */
	old = s->file_fd;
	rc = audit_sink_open_file(s);
	if (rc != 0) {
		s->file_fd = old;
		log_error("audit log %s: reopening: %s; still writing the previous file", s->path,
			  strerror(-rc));
		return rc;
	}
	if (old >= 0)
		close(old);
	s->reopens++;
	audit_sink_rotated_record(s, "reopened");
	return 0;
}

void audit_sink_close(struct audit_sink *s)
{
	audit_sink_drain(s);
	if (s->file_fd >= 0)
		close(s->file_fd);
	if (s->sock >= 0)
		close(s->sock);
	if (s->loader_end >= 0)
		close(s->loader_end);
	s->file_fd = s->sock = s->loader_end = -1;
}

size_t audit_sink_files(const char *path, char out[][AUDIT_SINK_PATH_MAX + 16], size_t max)
{
	char name[AUDIT_SINK_PATH_MAX + 16];
	struct stat st;
	size_t n = 0;
	unsigned i;

	for (i = AUDIT_SINK_KEEP_MAX; i >= 1 && n < max; i--) {
		snprintf(name, sizeof(name), "%s.%u", path, i);
		if (stat(name, &st) == 0 && S_ISREG(st.st_mode))
			snprintf(out[n++], sizeof(name), "%s", name);
	}
	if (n < max)
		snprintf(out[n++], sizeof(name), "%s", path);
	return n;
}
