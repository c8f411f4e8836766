/*
 * OTLP settings: defaults, the header and endpoint rules, the TLS file
 * checks (see the header). No libcurl: the supervisor links this too.
 */
#include "settings/otlp_settings.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errbuf.h"

/* The delivery defaults as data: no endpoint, no headers, no TLS files. */
static const struct otlp_settings otlp_settings_defaults = {
	.compression = OTLP_COMPRESSION_GZIP,
	.connect_timeout_ms = SETTINGS_OTLP_CONNECT_TIMEOUT_MS,
	.timeout_ms = SETTINGS_OTLP_TIMEOUT_MS,
	.queue_max_bytes = SETTINGS_OTLP_QUEUE_BYTES,
	.backoff_initial_ms = SETTINGS_OTLP_BACKOFF_INITIAL_MS,
	.backoff_max_ms = SETTINGS_OTLP_BACKOFF_MAX_MS,
	.max_elapsed_ms = SETTINGS_OTLP_MAX_ELAPSED_MS,
};

void otlp_settings_init(struct otlp_settings *s)
{
	*s = otlp_settings_defaults;
}

/* RFC 9110 token characters. */
static bool otlp_is_tchar(unsigned char ch)
{
	return isalnum(ch) || (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

int otlp_settings_check_header(const char *nv, char *err, size_t errlen)
{
	const char *eq, *p;

	if (nv == NULL || strpbrk(nv, "\r\n") != NULL)
		return errbuf_fail(-EINVAL, err, errlen, "--otlp-header: a header must not contain CR or LF");
	eq = strchr(nv, '=');
	if (eq == NULL || eq == nv)
		return errbuf_fail(-EINVAL, err, errlen,
				   "--otlp-header '%.64s': expected Name=Value with a non-empty name", nv);
	for (p = nv; p < eq; p++) {
		if (!otlp_is_tchar((unsigned char)*p))
			return errbuf_fail(-EINVAL, err, errlen,
					   "--otlp-header '%.64s': invalid character in the name", nv);
	}
	for (p = eq + 1; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t')
			return errbuf_fail(-EINVAL, err, errlen,
					   "--otlp-header '%.64s': control character in the value", nv);
	}
	return 0;
}

/* Port digits after the host: empty (no port) or 0..65535, written without
 * leading zeros. -1 when not a port. */
static long otlp_port(const char *p, size_t len)
{
	long v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)p[i]) || v > 65535)
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	if (len == 0)
		return 0;
	return v <= 65535 ? v : -1;
}

/* A "." or ".." segment: a URL library would resolve it, we refuse it. */
static bool otlp_has_dot_segment(const char *path, size_t len)
{
	size_t i = 0, seg;

	while (i < len) {
		i++; /* the '/' */
		seg = i;
		while (i < len && path[i] != '/')
			i++;
		if ((i - seg == 1 && path[seg] == '.') ||
		    (i - seg == 2 && path[seg] == '.' && path[seg + 1] == '.'))
			return true;
	}
	return false;
}

int otlp_settings_endpoint_url(const char *endpoint, char *out, size_t outlen, char *err,
			       size_t errlen)
{
	const char *e = endpoint ? endpoint : "", *auth, *host, *host_end, *rest, *path_end, *query,
		   *frag, *path;
	size_t scheme_len, i, path_len, query_len;
	char scheme[8], port[8] = "";
	long port_num;
	int n;

	for (i = 0; e[i] != '\0'; i++) {
		if ((unsigned char)e[i] <= 0x20 || (unsigned char)e[i] == 0x7f)
			goto not_url;
	}
	/* scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then "://" */
	for (scheme_len = 0; isalnum((unsigned char)e[scheme_len]) || e[scheme_len] == '+' ||
			     e[scheme_len] == '-' || e[scheme_len] == '.';
	     scheme_len++)
		;
	if (scheme_len == 0 || !isalpha((unsigned char)e[0]) || strncmp(e + scheme_len, "://", 3) != 0)
		goto not_url;
	if (scheme_len >= sizeof(scheme))
		goto bad_scheme;
	for (i = 0; i < scheme_len; i++)
		scheme[i] = (char)tolower((unsigned char)e[i]);
	scheme[scheme_len] = '\0';
	if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
		goto bad_scheme;
	/* authority: [userinfo "@"] host [":" port], up to the path, query or fragment */
	auth = e + scheme_len + 3;
	rest = auth + strcspn(auth, "/?#");
	host = auth;
	for (i = 0; auth + i < rest; i++) {
		if (auth[i] == '@')
			host = auth + i + 1;
	}
	if (host[0] == '[') {
		host_end = memchr(host, ']', (size_t)(rest - host));
		if (host_end == NULL || host_end == host + 1)
			goto not_url;
		host_end++;
	} else {
		host_end = memchr(host, ':', (size_t)(rest - host));
		if (host_end == NULL)
			host_end = rest;
	}
	if (host_end == host)
		return errbuf_fail(-EINVAL, err, errlen, "--otlp-endpoint '%.128s': no host", e);
	if (host_end < rest && *host_end != ':')
		goto not_url;
	port_num = otlp_port(host_end + 1, host_end < rest ? (size_t)(rest - host_end - 1) : 0);
	if (port_num < 0)
		goto not_url;
	if (host_end + 1 < rest)
		snprintf(port, sizeof(port), ":%ld", port_num);
	/* An empty path or "/" is where OTLP/HTTP profiles go by default; an empty
	 * query or fragment is dropped, as URL libraries do. */
	path_end = rest + strcspn(rest, "?#");
	path = rest;
	path_len = (size_t)(path_end - rest);
	if (otlp_has_dot_segment(path, path_len))
		return errbuf_fail(-EINVAL, err, errlen,
				   "--otlp-endpoint '%.128s': '.' or '..' in the path", e);
	if (path_len == 0 || (path_len == 1 && path[0] == '/')) {
		path = SETTINGS_OTLP_PATH;
		path_len = strlen(path);
	}
	query = *path_end == '?' ? path_end : "";
	query_len = strcspn(query, "#");
	if (query_len == 1)
		query_len = 0;
	frag = strchr(path_end, '#');
	if (frag == NULL || frag[1] == '\0')
		frag = "";
	n = snprintf(out, outlen, "%s://%.*s%s%.*s%.*s%s", scheme, (int)(host_end - auth), auth, port,
		     (int)path_len, path, (int)query_len, query, frag);
	if (n < 0 || (size_t)n >= outlen)
		return errbuf_fail(-EINVAL, err, errlen, "--otlp-endpoint: URL too long");
	return 0;
not_url:
	return errbuf_fail(-EINVAL, err, errlen, "--otlp-endpoint '%.128s': not a URL", e);
bad_scheme:
	return errbuf_fail(-EINVAL, err, errlen, "--otlp-endpoint '%.128s': the scheme must be http or https", e);
}

/*
 * /dev/fd/N names an fd we inherited: the supervisor opens the TLS files (the
 * exporter runs as --user and may not be able to) and passes them so. Opening
 * /dev/fd/N again would check the file's permissions as us: duplicate it.
 */
static int otlp_open_file(const char *path)
{
	char *end;
	long n;

	if (strncmp(path, "/dev/fd/", 8) == 0 && path[8] >= '0' && path[8] <= '9') {
		errno = 0;
		n = strtol(path + 8, &end, 10);
		if (errno == 0 && *end == '\0' && n >= 0 && n <= 1024)
			return fcntl((int)n, F_DUPFD_CLOEXEC, 0);
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Read with pread from the start: an inherited fd's offset is shared with every exporter. */
void *otlp_settings_read_file(const char *path, const char *opt, size_t *lenp, char *err,
			      size_t errlen)
{
	struct stat sb;
	uint8_t *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd = otlp_open_file(path);

	if (fd < 0) {
		errbuf_set(err, errlen, "%s '%s': %s", opt, path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    (uint64_t)sb.st_size > OTLP_SETTINGS_MAX_TLS_FILE) {
		errbuf_set(err, errlen, "%s '%s': not a regular, non-empty file under 4 MiB", opt, path);
		goto fail;
	}
	buf = malloc((size_t)sb.st_size);
	if (buf == NULL) {
		errbuf_set(err, errlen, "%s: out of memory", opt);
		goto fail;
	}
	while (len < (size_t)sb.st_size) {
		n = pread(fd, buf + len, (size_t)sb.st_size - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errbuf_set(err, errlen, "%s '%s': read failed", opt, path);
			goto fail;
		}
		len += (size_t)n;
	}
	close(fd);
	*lenp = len;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

int otlp_settings_check_headers_file(int fd, const char *path, char *err, size_t errlen)
{
	struct stat sb;

	if (fstat(fd, &sb) != 0)
		return errbuf_fail(-errno, err, errlen, "--otlp-headers-file '%s': %s", path,
				   strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return errbuf_fail(-EINVAL, err, errlen, "--otlp-headers-file '%s': not a regular file",
				   path);
	if (sb.st_uid != 0 && sb.st_uid != getuid())
		return errbuf_fail(-EPERM, err, errlen,
				   "--otlp-headers-file '%s': owned by uid %u, not root or uid %u", path,
				   (unsigned)sb.st_uid, (unsigned)getuid());
	if (sb.st_mode & (S_IWGRP | S_IWOTH))
		return errbuf_fail(-EPERM, err, errlen,
				   "--otlp-headers-file '%s': writable by group or others (mode %04o)",
				   path, (unsigned)(sb.st_mode & 07777));
	return 0;
}

int otlp_settings_load_headers_file(struct otlp_settings *s, char *err, size_t errlen)
{
	char *buf, *line, *next, *copy;
	size_t len;
	int fd, rc;

	if (s->headers_file == NULL)
		return 0;
	fd = otlp_open_file(s->headers_file);
	if (fd < 0)
		return errbuf_fail(-errno, err, errlen, "--otlp-headers-file '%s': %s", s->headers_file,
				   strerror(errno));
	rc = otlp_settings_check_headers_file(fd, s->headers_file, err, errlen);
	close(fd);
	if (rc != 0)
		return rc;
	buf = otlp_settings_read_file(s->headers_file, "--otlp-headers-file", &len, err, errlen);
	if (buf == NULL)
		return -EINVAL;
	/* One more byte: the last line's end. */
	copy = realloc(buf, len + 1);
	if (copy == NULL) {
		free(buf);
		return errbuf_fail(-ENOMEM, err, errlen, "--otlp-headers-file: out of memory");
	}
	buf = copy;
	buf[len] = '\0';
	rc = 0;
	for (line = buf; line != NULL && rc == 0; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		if (s->nheaders >= SETTINGS_OTLP_MAX_HEADERS)
			rc = errbuf_fail(-EINVAL, err, errlen, "--otlp-header: at most %d headers",
					 SETTINGS_OTLP_MAX_HEADERS);
		else if (otlp_settings_check_header(line, err, errlen) != 0)
			/* The message quotes the start of the line: say where, not what. */
			rc = errbuf_fail(-EINVAL, err, errlen, "--otlp-headers-file '%s': a line is not "
				"Name=Value (a token, then no control character)", s->headers_file);
		else if ((copy = strdup(line)) == NULL)
			rc = errbuf_fail(-ENOMEM, err, errlen, "--otlp-headers-file: out of memory");
		else {
			s->headers[s->nheaders++] = copy;
			s->nheaders_from_file++;
		}
	}
	/* The copies are kept; the buffer held the secrets once more. */
	explicit_bzero(buf, len);
	free(buf);
	return rc;
}

static int otlp_check_file(const char *path, const char *opt, char *err, size_t errlen)
{
	size_t len;
	void *buf = otlp_settings_read_file(path, opt, &len, err, errlen);

	if (buf == NULL)
		return -EINVAL;
	free(buf);
	return 0;
}

int otlp_settings_validate(const struct otlp_settings *s, char *err, size_t errlen)
{
	char url[OTLP_SETTINGS_URL_MAX];
	size_t i;

	if (otlp_settings_endpoint_url(s->endpoint, url, sizeof(url), err, errlen) != 0)
		return -EINVAL;
	if (s->compression != OTLP_COMPRESSION_GZIP && s->compression != OTLP_COMPRESSION_NONE)
		return errbuf_fail(-EINVAL, err, errlen, "--otlp-compression: must be gzip or none");
	if (s->nheaders > SETTINGS_OTLP_MAX_HEADERS)
		return errbuf_fail(-EINVAL, err, errlen, "--otlp-header: at most %d headers",
				   SETTINGS_OTLP_MAX_HEADERS);
	for (i = 0; i < s->nheaders; i++) {
		if (otlp_settings_check_header(s->headers[i], err, errlen) != 0)
			return -EINVAL;
	}
	if ((s->ca_file != NULL || s->client_cert != NULL) && strncmp(url, "https:", 6) != 0)
		return errbuf_fail(-EINVAL, err, errlen,
				   "--otlp-ca/--otlp-client-cert given for an endpoint that is not https");
	if (s->client_key != NULL && s->client_cert == NULL)
		return errbuf_fail(-EINVAL, err, errlen, "--otlp-client-key needs --otlp-client-cert");
	if (s->ca_file != NULL && otlp_check_file(s->ca_file, "--otlp-ca", err, errlen) != 0)
		return -EINVAL;
	if (s->client_cert != NULL &&
	    otlp_check_file(s->client_cert, "--otlp-client-cert", err, errlen) != 0)
		return -EINVAL;
	if (s->client_key != NULL &&
	    otlp_check_file(s->client_key, "--otlp-client-key", err, errlen) != 0)
		return -EINVAL;
	if (s->connect_timeout_ms <= 0 || s->timeout_ms <= 0 || s->timeout_ms < s->connect_timeout_ms)
		return errbuf_fail(-EINVAL, err, errlen,
				   "otlp timeouts: connect and total must be > 0, total >= connect");
	if (s->queue_max_bytes < SETTINGS_OTLP_QUEUE_MIN_BYTES)
		return errbuf_fail(-EINVAL, err, errlen, "--otlp-queue-mb: the queue must hold at least 1 KiB");
	if (s->backoff_initial_ms <= 0 || s->backoff_max_ms < s->backoff_initial_ms ||
	    s->max_elapsed_ms <= 0)
		return errbuf_fail(-EINVAL, err, errlen,
				   "otlp retry settings: initial > 0, max >= initial, max elapsed > 0");
	return 0;
}
