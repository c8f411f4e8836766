/*
 * The OTLP export's settings and their validation, apart from the libcurl
 * client that uses them (exporter/otlp/otlp_client.h): the supervisor refuses a
 * bad --otlp-* value before it starts anything (one line naming the option,
 * exit status 2) with the same code the exporter runs, without linking
 * libcurl. Defaults and ranges are in settings/defaults.h.
 */
#ifndef LOWPROF_SETTINGS_OTLP_SETTINGS_H
#define LOWPROF_SETTINGS_OTLP_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "settings/defaults.h"

/* Room for the URL posted to, path appended. */
#define OTLP_SETTINGS_URL_MAX 2048
/* CA bundle, client certificate and key: regular files at most this big. */
#define OTLP_SETTINGS_MAX_TLS_FILE (4u << 20)

/* In the order of SETTINGS_OTLP_COMPRESSION_NAMES. */
enum otlp_compression {
	OTLP_COMPRESSION_GZIP = 0,
	OTLP_COMPRESSION_NONE = 1,
};

struct otlp_settings {
	const char *endpoint;           /* --otlp-endpoint: http[s]://host[:port][/path] */
	unsigned compression;           /* --otlp-compression: enum otlp_compression */
	const char *headers[SETTINGS_OTLP_MAX_HEADERS]; /* --otlp-header Name=Value */
	size_t nheaders;
	/* --otlp-headers-file: one Name=Value a line (blank and # lines skipped),
	 * appended to headers[] as the last nheaders_from_file; never in argv */
	const char *headers_file;
	size_t nheaders_from_file;
	const char *ca_file;            /* --otlp-ca: PEM bundle; NULL = the system's */
	const char *client_cert;        /* --otlp-client-cert: PEM; NULL = none */
	const char *client_key;         /* --otlp-client-key: PEM; needs client_cert */
	long connect_timeout_ms;
	long timeout_ms;                /* whole request */
	size_t queue_max_bytes;         /* --otlp-queue-mb * 2^20; compressed bytes */
	long backoff_initial_ms;        /* first retry delay, doubled each retry */
	long backoff_max_ms;            /* cap of the delay (Retry-After is capped at 10x) */
	long max_elapsed_ms;            /* a payload is given up (failed) this long after its first try */
};

/* The defaults of settings/defaults.h; no endpoint. */
void otlp_settings_init(struct otlp_settings *s);

/* One --otlp-header value: "Name=Value", name a non-empty HTTP token, no CR,
 * LF or other control character. Returns 0, or -EINVAL with a one-line message. */
int otlp_settings_check_header(const char *name_value, char *err, size_t errlen);

/*
 * The URL posted to: the endpoint with /v1development/profiles as its path
 * when it has none (or just "/"). The endpoint must be scheme://authority
 * with the scheme http or https (any case; written lower case) and a
 * non-empty host ([v6] allowed), an optional port of 1 to 65535, no spaces
 * or control characters; the rest (user info, path, query, fragment) is kept
 * as given. Returns 0, or -EINVAL with a one-line message.
 */
int otlp_settings_endpoint_url(const char *endpoint, char *out, size_t outlen, char *err,
			       size_t errlen);

/* Reads a whole regular file of at most OTLP_SETTINGS_MAX_TLS_FILE bytes
 * (malloc'd). /dev/fd/N names an inherited fd, which is duplicated rather
 * than opened again. NULL with a message naming the option otherwise. */
void *otlp_settings_read_file(const char *path, const char *opt, size_t *lenp, char *err,
			      size_t errlen);

/*
 * The headers file may hold secrets (Authorization): it must be a regular
 * file owned by root or by our real uid, and writable by neither group nor
 * others. fd is the file opened. Returns 0 or -EPERM/-errno with a message.
 */
int otlp_settings_check_headers_file(int fd, const char *path, char *err, size_t errlen);

/*
 * Read s->headers_file (a path, or /dev/fd/N), checked as above, and append
 * its headers to s->headers (each checked like --otlp-header; copies, kept
 * for the process's life). Returns 0 or -EINVAL/-EPERM with a message.
 */
int otlp_settings_load_headers_file(struct otlp_settings *s, char *err, size_t errlen);

/* Every setting, files included (CA, cert, key must be readable). Returns 0,
 * or -EINVAL with a one-line message naming the option. */
int otlp_settings_validate(const struct otlp_settings *s, char *err, size_t errlen);

#endif /* LOWPROF_SETTINGS_OTLP_SETTINGS_H */
