/*
 * OTLP client settings: defaults, parsing and validation of the values the
 * supervisor takes on its command line (a bad one is refused with one line
 * naming the option, exit status 2), and the endpoint URL rule.
 */
#include "exporter/otlp/otlp_client.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "exporter/otlp/otlp_client_internal.h"

void otlp_client_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void otlp_client_settings_init(struct otlp_client_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->compression = OTLP_COMPRESSION_GZIP;
	s->connect_timeout_ms = OTLP_CLIENT_DEFAULT_CONNECT_TIMEOUT_MS;
	s->timeout_ms = OTLP_CLIENT_DEFAULT_TIMEOUT_MS;
	s->queue_max_bytes = OTLP_CLIENT_DEFAULT_QUEUE_BYTES;
	s->backoff_initial_ms = OTLP_CLIENT_DEFAULT_BACKOFF_INITIAL_MS;
	s->backoff_max_ms = OTLP_CLIENT_DEFAULT_BACKOFF_MAX_MS;
	s->max_elapsed_ms = OTLP_CLIENT_DEFAULT_MAX_ELAPSED_MS;
}

int otlp_client_parse_compression(const char *text, enum otlp_compression *out,
				  char *err, size_t errlen)
{
	if (text != NULL && strcmp(text, "gzip") == 0) {
		*out = OTLP_COMPRESSION_GZIP;
		return 0;
	}
	if (text != NULL && strcmp(text, "none") == 0) {
		*out = OTLP_COMPRESSION_NONE;
		return 0;
	}
	otlp_client_seterr(err, errlen, "--otlp-compression: '%s' is not gzip or none", text ? text : "");
	return -EINVAL;
}

/* RFC 9110 token characters. */
static bool otlp_is_tchar(unsigned char ch)
{
	return isalnum(ch) || (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

int otlp_client_check_header(const char *nv, char *err, size_t errlen)
{
	const char *eq, *p;

	if (nv == NULL || strpbrk(nv, "\r\n") != NULL) {
		otlp_client_seterr(err, errlen, "--otlp-header: a header must not contain CR or LF");
		return -EINVAL;
	}
	eq = strchr(nv, '=');
	if (eq == NULL || eq == nv) {
		otlp_client_seterr(err, errlen, "--otlp-header '%.64s': expected Name=Value with a non-empty name", nv);
		return -EINVAL;
	}
	for (p = nv; p < eq; p++) {
		if (!otlp_is_tchar((unsigned char)*p)) {
			otlp_client_seterr(err, errlen, "--otlp-header '%.64s': invalid character in the name", nv);
			return -EINVAL;
		}
	}
	for (p = eq + 1; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			otlp_client_seterr(err, errlen, "--otlp-header '%.64s': control character in the value", nv);
			return -EINVAL;
		}
	}
	return 0;
}

int otlp_client_endpoint_url(const char *endpoint, char *out, size_t outlen,
			     char *err, size_t errlen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *path = NULL, *full = NULL;
	int ret = -EINVAL;

	if (u == NULL) {
		otlp_client_seterr(err, errlen, "--otlp-endpoint: out of memory");
		return -ENOMEM;
	}
	if (endpoint == NULL || endpoint[0] == '\0' ||
	    curl_url_set(u, CURLUPART_URL, endpoint, 0) != CURLUE_OK) {
		otlp_client_seterr(err, errlen, "--otlp-endpoint '%.128s': not a URL", endpoint ? endpoint : "");
		goto cleanup;
	}
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		otlp_client_seterr(err, errlen, "--otlp-endpoint '%.128s': the scheme must be http or https", endpoint);
		goto cleanup;
	}
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || host[0] == '\0') {
		otlp_client_seterr(err, errlen, "--otlp-endpoint '%.128s': no host", endpoint);
		goto cleanup;
	}
	if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK || strcmp(path, "/") == 0) {
		if (curl_url_set(u, CURLUPART_PATH, OTLP_CLIENT_DEFAULT_PATH, 0) != CURLUE_OK)
			goto cleanup;
	}
	if (curl_url_get(u, CURLUPART_URL, &full, 0) != CURLUE_OK)
		goto cleanup;
	if (strlen(full) >= outlen) {
		otlp_client_seterr(err, errlen, "--otlp-endpoint: URL too long");
		goto cleanup;
	}
	snprintf(out, outlen, "%s", full);
	ret = 0;
cleanup:
	curl_free(scheme);
	curl_free(host);
	curl_free(path);
	curl_free(full);
	curl_url_cleanup(u);
	return ret;
}

/*
 * /dev/fd/N names an fd we inherited: the supervisor opens the TLS files (the
 * exporter runs as --user and may not be able to) and passes them so. Opening
 * /dev/fd/N again would check the file's permissions as us: duplicate it.
 */
static int otlp_client_open_file(const char *path)
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

/* Reads a whole (small) file; NULL with a message naming the option. Read with
 * pread from the start: an inherited fd's offset is shared with every exporter. */
void *otlp_client_read_file(const char *path, const char *opt, size_t *lenp, char *err, size_t errlen)
{
	struct stat sb;
	uint8_t *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd = otlp_client_open_file(path);

	if (fd < 0) {
		otlp_client_seterr(err, errlen, "%s '%s': %s", opt, path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    (uint64_t)sb.st_size > OTLP_MAX_TLS_FILE) {
		otlp_client_seterr(err, errlen, "%s '%s': not a regular, non-empty file under 4 MiB", opt, path);
		goto fail;
	}
	buf = malloc((size_t)sb.st_size);
	if (buf == NULL) {
		otlp_client_seterr(err, errlen, "%s: out of memory", opt);
		goto fail;
	}
	while (len < (size_t)sb.st_size) {
		n = pread(fd, buf + len, (size_t)sb.st_size - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			otlp_client_seterr(err, errlen, "%s '%s': read failed", opt, path);
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

static int otlp_check_file(const char *path, const char *opt, char *err, size_t errlen)
{
	size_t len;
	void *buf = otlp_client_read_file(path, opt, &len, err, errlen);

	if (buf == NULL)
		return -EINVAL;
	free(buf);
	return 0;
}

int otlp_client_settings_validate(const struct otlp_client_settings *s, char *err, size_t errlen)
{
	char url[OTLP_URL_MAX];
	size_t i;

	if (otlp_client_endpoint_url(s->endpoint, url, sizeof(url), err, errlen) != 0)
		return -EINVAL;
	if (s->compression != OTLP_COMPRESSION_GZIP && s->compression != OTLP_COMPRESSION_NONE) {
		otlp_client_seterr(err, errlen, "--otlp-compression: must be gzip or none");
		return -EINVAL;
	}
	if (s->nheaders > OTLP_CLIENT_MAX_HEADERS) {
		otlp_client_seterr(err, errlen, "--otlp-header: at most %d headers", OTLP_CLIENT_MAX_HEADERS);
		return -EINVAL;
	}
	for (i = 0; i < s->nheaders; i++) {
		if (otlp_client_check_header(s->headers[i], err, errlen) != 0)
			return -EINVAL;
	}
	if ((s->ca_file != NULL || s->client_cert != NULL) && strncmp(url, "https:", 6) != 0) {
		otlp_client_seterr(err, errlen, "--otlp-ca/--otlp-client-cert given for an endpoint that is not https");
		return -EINVAL;
	}
	if (s->client_key != NULL && s->client_cert == NULL) {
		otlp_client_seterr(err, errlen, "--otlp-client-key needs --otlp-client-cert");
		return -EINVAL;
	}
	if (s->ca_file != NULL && otlp_check_file(s->ca_file, "--otlp-ca", err, errlen) != 0)
		return -EINVAL;
	if (s->client_cert != NULL &&
	    otlp_check_file(s->client_cert, "--otlp-client-cert", err, errlen) != 0)
		return -EINVAL;
	if (s->client_key != NULL &&
	    otlp_check_file(s->client_key, "--otlp-client-key", err, errlen) != 0)
		return -EINVAL;
	if (s->connect_timeout_ms <= 0 || s->timeout_ms <= 0 || s->timeout_ms < s->connect_timeout_ms) {
		otlp_client_seterr(err, errlen, "otlp timeouts: connect and total must be > 0, total >= connect");
		return -EINVAL;
	}
	if (s->queue_max_bytes < 1024) {
		otlp_client_seterr(err, errlen, "--otlp-queue-mb: the queue must hold at least 1 KiB");
		return -EINVAL;
	}
	if (s->backoff_initial_ms <= 0 || s->backoff_max_ms < s->backoff_initial_ms ||
	    s->max_elapsed_ms <= 0) {
		otlp_client_seterr(err, errlen, "otlp retry settings: initial > 0, max >= initial, max elapsed > 0");
		return -EINVAL;
	}
	return 0;
}
