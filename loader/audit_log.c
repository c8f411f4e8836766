#include "loader/audit_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int audit_fd = -1;
static uint64_t audit_failures;

void audit_log_open(int fd)
{
	audit_fd = fd;
}

void audit_log_close(void)
{
	if (audit_fd >= 0)
		close(audit_fd);
	audit_fd = -1;
}

bool audit_log_enabled(void)
{
	return audit_fd >= 0;
}

uint64_t audit_log_write_failures(void)
{
	return audit_failures;
}

void audit_actor_self(struct audit_actor *a)
{
	a->component = "loader";
	a->pid = getpid();
	a->uid = getuid();
}

static void audit_rec_printf(struct audit_rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void audit_rec_printf(struct audit_rec *r, const char *fmt, ...)
{
	/* Room kept for the result fields and the closing brace. */
	size_t room = sizeof(r->buf) - 64;
	va_list ap;
	int n;

	if (r->truncated || r->len >= room) {
		r->truncated = true;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(r->buf + r->len, room - r->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room - r->len) {
		/* Drop the partial field: the line stays valid JSON. */
		r->buf[r->len] = '\0';
		r->truncated = true;
		return;
	}
	r->len += (size_t)n;
}

void audit_json_escape(const char *in, char *out, size_t outlen)
{
	size_t o = 0;
	unsigned char c;

	if (outlen == 0)
		return;
	for (; in != NULL && *in != '\0'; in++) {
		c = (unsigned char)*in;
		if (o + 7 >= outlen)
			break;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(out + o, outlen - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
}

void audit_rec_begin(struct audit_rec *r, const char *event, const struct audit_actor *who)
{
	struct timespec ts;
	struct tm tm;
	char stamp[40];

	r->len = 0;
	r->truncated = false;
	r->buf[0] = '\0';
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	audit_rec_printf(r, "{\"time\":\"%s.%06ldZ\"", stamp, ts.tv_nsec / 1000);
	audit_rec_str(r, "event", event);
	audit_rec_str(r, "component", who->component);
	audit_rec_i64(r, "pid", (int64_t)who->pid);
	audit_rec_i64(r, "uid", who->uid == (uid_t)-1 ? -1 : (int64_t)who->uid);
}

void audit_rec_str(struct audit_rec *r, const char *key, const char *val)
{
	char esc[1024];

	audit_json_escape(val, esc, sizeof(esc));
	audit_rec_printf(r, ",\"%s\":\"%s\"", key, esc);
}

void audit_rec_u64(struct audit_rec *r, const char *key, uint64_t val)
{
	audit_rec_printf(r, ",\"%s\":%" PRIu64, key, val);
}

void audit_rec_i64(struct audit_rec *r, const char *key, int64_t val)
{
	audit_rec_printf(r, ",\"%s\":%" PRId64, key, val);
}

void audit_rec_bool(struct audit_rec *r, const char *key, bool val)
{
	audit_rec_printf(r, ",\"%s\":%s", key, val ? "true" : "false");
}

void audit_rec_hex(struct audit_rec *r, const char *key, const void *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = data;
	char hex[1024];
	size_t i;

	if (len > (sizeof(hex) - 1) / 2)
		len = (sizeof(hex) - 1) / 2;
	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[p[i] >> 4];
		hex[2 * i + 1] = digits[p[i] & 15];
	}
	hex[2 * len] = '\0';
	audit_rec_printf(r, ",\"%s\":\"%s\"", key, hex);
}

void audit_rec_raw(struct audit_rec *r, const char *key, const char *json)
{
	audit_rec_printf(r, ",\"%s\":%s", key, json);
}

int audit_rec_end(struct audit_rec *r, int errnum)
{
	ssize_t n;
	int n2;

	if (errnum < 0)
		errnum = -errnum;
	/* The 64 bytes kept free by audit_rec_printf hold this. */
	n2 = snprintf(r->buf + r->len, sizeof(r->buf) - r->len, "%s,\"result\":\"%s\",\"errno\":%d}\n",
		      r->truncated ? ",\"truncated\":true" : "", errnum == 0 ? "ok" : "error", errnum);
	if (n2 < 0 || (size_t)n2 >= sizeof(r->buf) - r->len)
		return -EOVERFLOW;
	r->len += (size_t)n2;
	if (audit_fd < 0)
		return 0;
	/* One write on an O_APPEND fd: the line lands whole, after every earlier one. */
	do {
		n = write(audit_fd, r->buf, r->len);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)r->len) {
		audit_failures++;
		return n < 0 ? -errno : -EIO;
	}
	return 0;
}
