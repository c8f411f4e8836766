/*
 * OTLP/HTTP client.
 *
 * Why a queue and a poll function, not a thread: the exporter is one thread
 * in a seccomp sandbox, and its main loop already wakes every 200 ms. curl's
 * multi interface lets that loop drive one transfer a little at a time
 * (curl_multi_perform never waits), so a slow or dead collector costs the
 * loop microseconds per turn, not seconds; there is no lock, no second stack,
 * no clone() in the filter, and no shared state to get wrong. The price is
 * latency of up to one loop turn per step of a transfer, irrelevant at a 10 s
 * export interval. One transfer at a time keeps payloads in order.
 *
 * Nothing here opens a file or resolves a name after otlp_client_new(): the
 * CA bundle and client certificate go in as blobs, CURLOPT_CAPATH is cleared,
 * and the host's addresses are pinned with CURLOPT_RESOLVE.
 */
#include "exporter/otlp/otlp_client.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "common/errbuf.h"
#include "common/log.h"
#include "common/mono_clock.h"
#include "exporter/otlp/curl_lib.h"
#include "exporter/otlp/profiles.pb-c.h"
#include "lowprof_build_config.h"

#define OTLP_MAX_RESOLVED 4
#define OTLP_RETRY_AFTER_FACTOR 10 /* Retry-After is honoured up to 10x backoff_max_ms */

struct otlp_payload {
	struct otlp_payload *next;
	size_t len;
	uint64_t first_try_ms;  /* 0 until the first attempt */
	unsigned attempts;
	uint8_t data[];
};

struct otlp_client {
	struct otlp_settings s;
	char url[OTLP_SETTINGS_URL_MAX];
	CURLM *multi;
	CURL *easy;
	struct curl_slist *headers;
	struct curl_slist *resolve;
	struct curl_blob ca, cert, key;
	void *ca_mem, *cert_mem, *key_mem;
	struct otlp_payload *head, *tail;
	bool in_flight;
	uint64_t next_attempt_ms;
	uint8_t response[OTLP_CLIENT_MAX_RESPONSE_BYTES];
	size_t response_len;
	bool response_truncated;
	long retry_after_ms;    /* from the last response, -1 when none */
	uint64_t rng;
	struct otlp_client_stats st;
};

/* "host:port:addr[,addr...]" for CURLOPT_RESOLVE; an IP literal needs none. */
static int otlp_pin_host(struct otlp_client *c, char *err, size_t errlen)
{
	struct addrinfo hints, *res = NULL, *ai;
	CURLU *u = curl_lib.url();
	char *host = NULL, *port = NULL;
	char entry[1024], addr[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	struct in_addr a4;
	size_t len, n = 0;
	int ret = -EINVAL, gai;

	if (u == NULL || curl_lib.url_set(u, CURLUPART_URL, c->url, 0) != CURLUE_OK ||
	    curl_lib.url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_lib.url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		errbuf_set(err, errlen, "--otlp-endpoint: cannot parse '%s'", c->url);
		goto cleanup;
	}
	if (host[0] == '[' || inet_pton(AF_INET, host, &a4) == 1 || inet_pton(AF_INET6, host, &a6) == 1) {
		ret = 0;
		goto cleanup;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	gai = getaddrinfo(host, NULL, &hints, &res);
	if (gai != 0) {
		errbuf_set(err, errlen, "--otlp-endpoint: cannot resolve '%s': %s", host, gai_strerror(gai));
		goto cleanup;
	}
	len = (size_t)snprintf(entry, sizeof(entry), "%s:%s:", host, port);
	for (ai = res; ai != NULL && n < OTLP_MAX_RESOLVED && len < sizeof(entry); ai = ai->ai_next) {
		const void *src = ai->ai_family == AF_INET ?
			(const void *)&((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr :
			(const void *)&((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr;

		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    inet_ntop(ai->ai_family, src, addr, sizeof(addr)) == NULL)
			continue;
		len += (size_t)snprintf(entry + len, sizeof(entry) - len,
					ai->ai_family == AF_INET6 ? "%s[%s]" : "%s%s",
					n > 0 ? "," : "", addr);
		n++;
	}
	if (n == 0 || len >= sizeof(entry)) {
		errbuf_set(err, errlen, "--otlp-endpoint: no usable address for '%s'", host);
		goto cleanup;
	}
	c->resolve = curl_lib.slist_append(NULL, entry);
	if (c->resolve == NULL) {
		errbuf_set(err, errlen, "otlp: out of memory");
		goto cleanup;
	}
	ret = 0;
cleanup:
	if (res != NULL)
		freeaddrinfo(res);
	curl_lib.free(host);
	curl_lib.free(port);
	curl_lib.url_cleanup(u);
	return ret;
}

static size_t otlp_write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct otlp_client *c = userdata;
	size_t n = size * nmemb, room = sizeof(c->response) - c->response_len;

	/* Keep what fits, swallow the rest: a huge body costs time, never memory. */
	if (n > room) {
		c->response_truncated = true;
		memcpy(c->response + c->response_len, ptr, room);
		c->response_len += room;
	} else {
		memcpy(c->response + c->response_len, ptr, n);
		c->response_len += n;
	}
	return n;
}

/* The longest delay a Retry-After can ask for, in seconds (about 31 years):
 * anything longer means the same thing to a retry loop. */
#define RETRY_AFTER_MAX_S 999999999L

long otlp_client_parse_retry_after(const char *buf, size_t n, time_t now)
{
	static const char name[] = "retry-after:";
	char value[128];
	time_t when;
	size_t i;

	if (n <= sizeof(name) - 1 || strncasecmp(buf, name, sizeof(name) - 1) != 0)
		return -1;
	i = sizeof(name) - 1;
	while (i < n && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	snprintf(value, sizeof(value), "%.*s", (int)(n - i < sizeof(value) - 1 ? n - i : sizeof(value) - 1), buf + i);
	value[strcspn(value, "\r\n")] = '\0';
	if (value[0] >= '0' && value[0] <= '9' && strspn(value, "0123456789") == strlen(value)) {
		/* delay-seconds; more than 9 digits is as good as "a very long time". */
		return strlen(value) > 9 ? RETRY_AFTER_MAX_S * 1000L : atol(value) * 1000L;
	}
	/* An HTTP-date, by libcurl's parser (not loaded: not read). */
	if (!curl_lib_loaded())
		return -1;
	when = curl_lib.getdate(value, NULL);
	if (when == (time_t)-1)
		return -1;
	if (when <= now)
		return 0;
	/* A date in year 2^31 is a valid HTTP-date to libcurl: cap the delay
	 * before it is turned into milliseconds, which would overflow. */
	return when - now > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S * 1000L : (long)(when - now) * 1000L;
}

static size_t otlp_header_cb(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct otlp_client *c = userdata;
	size_t n = size * nitems;
	long ms = otlp_client_parse_retry_after(buf, n, time(NULL));

	if (ms >= 0)
		c->retry_after_ms = ms;
	return n;
}

void otlp_client_free(struct otlp_client *c)
{
	struct otlp_payload *p;

	if (c == NULL)
		return;
	if (c->multi != NULL && c->easy != NULL && c->in_flight)
		curl_lib.multi_remove_handle(c->multi, c->easy);
	if (c->easy != NULL)
		curl_lib.easy_cleanup(c->easy);
	if (c->multi != NULL)
		curl_lib.multi_cleanup(c->multi);
	curl_lib.slist_free_all(c->headers);
	curl_lib.slist_free_all(c->resolve);
	while (c->head != NULL) {
		p = c->head->next;
		free(c->head);
		c->head = p;
	}
	free(c->ca_mem);
	free(c->cert_mem);
	free(c->key_mem);
	free(c);
}

static int otlp_add_header(struct otlp_client *c, const char *line)
{
	struct curl_slist *l = curl_lib.slist_append(c->headers, line);

	if (l == NULL)
		return -ENOMEM;
	c->headers = l;
	return 0;
}

static int otlp_setup_headers(struct otlp_client *c, char *err, size_t errlen)
{
	char line[4096];
	size_t i;
	int ret;

	ret = otlp_add_header(c, "Content-Type: application/x-protobuf");
	/* No "Expect: 100-continue" round trip for bodies over 1 MiB. */
	if (ret == 0)
		ret = otlp_add_header(c, "Expect:");
	if (ret == 0 && c->s.compression == OTLP_COMPRESSION_GZIP)
		ret = otlp_add_header(c, "Content-Encoding: gzip");
	for (i = 0; i < c->s.nheaders && ret == 0; i++) {
		const char *eq = strchr(c->s.headers[i], '=');

		if ((size_t)snprintf(line, sizeof(line), "%.*s: %s", (int)(eq - c->s.headers[i]),
				     c->s.headers[i], eq + 1) >= sizeof(line)) {
			errbuf_set(err, errlen, "--otlp-header: header too long");
			return -EINVAL;
		}
		ret = otlp_add_header(c, line);
	}
	if (ret != 0)
		errbuf_set(err, errlen, "otlp: out of memory");
	return ret;
}

/* path (the file of option opt) read into *mem, and blob pointing at it
 * without a copy: 0, or -EINVAL with err set. */
static int otlp_tls_blob(const char *path, const char *opt, void **mem, struct curl_blob *blob,
			 char *err, size_t errlen)
{
	size_t len;

	*mem = otlp_settings_read_file(path, opt, &len, err, errlen);
	if (*mem == NULL)
		return -EINVAL;
	blob->data = *mem;
	blob->len = len;
	blob->flags = CURL_BLOB_NOCOPY;
	return 0;
}

/* The TLS material, read now: after sandboxing no file can be opened. */
static int otlp_setup_tls(struct otlp_client *c, char *err, size_t errlen)
{
	const char *ca = c->s.ca_file;

	if (strncmp(c->url, "https:", 6) != 0)
		return 0;
	if (ca == NULL) {
		const curl_version_info_data *vi = curl_lib.version_info(CURLVERSION_NOW);

		ca = vi->cainfo;
		if (ca == NULL) {
			errbuf_set(err, errlen, "--otlp-ca: libcurl has no default CA bundle; give one");
			return -EINVAL;
		}
	}
	if (otlp_tls_blob(ca, "--otlp-ca", &c->ca_mem, &c->ca, err, errlen) != 0)
		return -EINVAL;
	curl_lib.easy_setopt(c->easy, CURLOPT_CAINFO_BLOB, &c->ca);
	curl_lib.easy_setopt(c->easy, CURLOPT_CAPATH, NULL);
	if (c->s.client_cert != NULL) {
		if (otlp_tls_blob(c->s.client_cert, "--otlp-client-cert", &c->cert_mem, &c->cert, err,
				  errlen) != 0)
			return -EINVAL;
		curl_lib.easy_setopt(c->easy, CURLOPT_SSLCERT_BLOB, &c->cert);
		curl_lib.easy_setopt(c->easy, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (c->s.client_key != NULL) {
		if (otlp_tls_blob(c->s.client_key, "--otlp-client-key", &c->key_mem, &c->key, err,
				  errlen) != 0)
			return -EINVAL;
		curl_lib.easy_setopt(c->easy, CURLOPT_SSLKEY_BLOB, &c->key);
		curl_lib.easy_setopt(c->easy, CURLOPT_SSLKEYTYPE, "PEM");
	}
	return 0;
}

struct otlp_client *otlp_client_new(const struct otlp_settings *s, char *err, size_t errlen)
{
	struct otlp_client *c;

	if (otlp_settings_validate(s, err, errlen) != 0)
		return NULL;
	if (curl_lib_open(err, errlen) != 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errbuf_set(err, errlen, "otlp: out of memory");
		return NULL;
	}
	c->s = *s;
	c->retry_after_ms = -1;
	if (getrandom(&c->rng, sizeof(c->rng), GRND_NONBLOCK) != sizeof(c->rng))
		c->rng = mono_ms() ^ ((uint64_t)getpid() << 32);
	c->rng |= 1;
	otlp_settings_endpoint_url(s->endpoint, c->url, sizeof(c->url), NULL, 0);
	c->multi = curl_lib.multi_init();
	c->easy = curl_lib.easy_init();
	if (c->multi == NULL || c->easy == NULL) {
		errbuf_set(err, errlen, "otlp: curl init failed");
		goto fail;
	}
	if (otlp_pin_host(c, err, errlen) != 0 || otlp_setup_headers(c, err, errlen) != 0 ||
	    otlp_setup_tls(c, err, errlen) != 0)
		goto fail;
	curl_lib.easy_setopt(c->easy, CURLOPT_URL, c->url);
	curl_lib.easy_setopt(c->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_lib.easy_setopt(c->easy, CURLOPT_POST, 1L);
	curl_lib.easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->headers);
	if (c->resolve != NULL)
		curl_lib.easy_setopt(c->easy, CURLOPT_RESOLVE, c->resolve);
	curl_lib.easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT_MS, c->s.connect_timeout_ms);
	curl_lib.easy_setopt(c->easy, CURLOPT_TIMEOUT_MS, c->s.timeout_ms);
	curl_lib.easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	curl_lib.easy_setopt(c->easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_lib.easy_setopt(c->easy, CURLOPT_USERAGENT, "lowprof/" LOWPROF_VERSION);
	curl_lib.easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, otlp_write_cb);
	curl_lib.easy_setopt(c->easy, CURLOPT_WRITEDATA, c);
	curl_lib.easy_setopt(c->easy, CURLOPT_HEADERFUNCTION, otlp_header_cb);
	curl_lib.easy_setopt(c->easy, CURLOPT_HEADERDATA, c);
	return c;
fail:
	otlp_client_free(c);
	return NULL;
}

/* One gzip member in a payload of exactly the compressed size. */
static struct otlp_payload *otlp_gzip(const uint8_t *body, size_t len)
{
	struct otlp_payload *p = NULL, *shrunk;
	z_stream zs;
	size_t bound;

	memset(&zs, 0, sizeof(zs));
	/* windowBits 15 + 16: a gzip header and trailer. */
	if (len > UINT32_MAX ||
	    deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	bound = deflateBound(&zs, (uLong)len) + 64;
	p = malloc(sizeof(*p) + bound);
	if (p == NULL)
		goto cleanup;
	zs.next_in = (Bytef *)body;
	zs.avail_in = (uInt)len;
	zs.next_out = p->data;
	zs.avail_out = (uInt)bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		free(p);
		p = NULL;
		goto cleanup;
	}
	p->len = zs.total_out;
	shrunk = realloc(p, sizeof(*p) + p->len);
	if (shrunk != NULL)
		p = shrunk;
cleanup:
	deflateEnd(&zs);
	return p;
}

/* Drops the oldest payload that is not in flight; false when there is none. */
static bool otlp_drop_oldest(struct otlp_client *c)
{
	struct otlp_payload **link = &c->head, *victim, *prev = NULL;

	if (c->in_flight) {
		prev = c->head;
		link = &c->head->next;
	}
	victim = *link;
	if (victim == NULL)
		return false;
	*link = victim->next;
	if (c->tail == victim)
		c->tail = prev;
	c->st.queued--;
	c->st.queued_bytes -= victim->len;
	c->st.dropped++;
	free(victim);
	return true;
}

int otlp_client_enqueue(struct otlp_client *c, const uint8_t *body, size_t len)
{
	struct otlp_payload *p;

	if (c->s.compression == OTLP_COMPRESSION_GZIP) {
		p = otlp_gzip(body, len);
	} else {
		p = malloc(sizeof(*p) + len);
		if (p != NULL) {
			memcpy(p->data, body, len);
			p->len = len;
		}
	}
	if (p == NULL)
		return -ENOMEM;
	p->next = NULL;
	p->first_try_ms = 0;
	p->attempts = 0;
	if (p->len > c->s.queue_max_bytes) {
		log_warn("otlp: a %zu-byte profile is larger than the whole queue: dropped", p->len);
		c->st.dropped++;
		free(p);
		return -E2BIG;
	}
	while (c->st.queued_bytes + p->len > c->s.queue_max_bytes) {
		if (!otlp_drop_oldest(c))
			break;
	}
	if (c->st.queued_bytes + p->len > c->s.queue_max_bytes) {
		/* Only the payload in flight is left and the two do not fit together. */
		c->st.dropped++;
		free(p);
		return -E2BIG;
	}
	if (c->tail != NULL)
		c->tail->next = p;
	else
		c->head = p;
	c->tail = p;
	c->st.queued++;
	c->st.queued_bytes += p->len;
	return 0;
}

static void otlp_pop_head(struct otlp_client *c)
{
	struct otlp_payload *p = c->head;

	c->head = p->next;
	if (c->tail == p)
		c->tail = NULL;
	c->st.queued--;
	c->st.queued_bytes -= p->len;
	free(p);
}

static uint64_t otlp_random(struct otlp_client *c)
{
	/* xorshift64: jitter only needs to differ between agents, not be secret. */
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

/* Exponential backoff with "equal jitter": a delay in [d/2, d]. */
static uint64_t otlp_backoff_ms(struct otlp_client *c, unsigned attempts)
{
	uint64_t d = (uint64_t)c->s.backoff_initial_ms;
	unsigned i;

	for (i = 1; i < attempts && d < (uint64_t)c->s.backoff_max_ms; i++)
		d *= 2;
	if (d > (uint64_t)c->s.backoff_max_ms)
		d = (uint64_t)c->s.backoff_max_ms;
	return d / 2 + otlp_random(c) % (d / 2 + 1);
}

/* Printable ASCII only, bounded: the collector's text goes into our log. */
static void otlp_sanitize(const char *in, size_t len, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 1 < outlen; i++)
		out[o++] = (in[i] >= 0x20 && in[i] < 0x7f) ? in[i] : '?';
	out[o] = '\0';
}

int otlp_client_parse_partial_success(const uint8_t *body, size_t len, int64_t *rejected,
				      char *msg, size_t msglen)
{
	Lowprof__Otlp__ExportProfilesServiceResponse *r;
	int ret = 0;

	*rejected = 0;
	if (msglen > 0)
		msg[0] = '\0';
	r = lowprof__otlp__export_profiles_service_response__unpack(NULL, len, body);
	if (r == NULL)
		return -EINVAL;
	if (r->partial_success != NULL &&
	    (r->partial_success->rejected_profiles > 0 ||
	     (r->partial_success->error_message != NULL && r->partial_success->error_message[0] != '\0'))) {
		const char *m = r->partial_success->error_message ? r->partial_success->error_message : "";

		if (msglen > 0)
			otlp_sanitize(m, strlen(m), msg, msglen);
		*rejected = r->partial_success->rejected_profiles;
		ret = 1;
	}
	lowprof__otlp__export_profiles_service_response__free_unpacked(r, NULL);
	return ret;
}

static void otlp_log_partial_success(struct otlp_client *c)
{
	char msg[256];
	int64_t rejected;
	int rc;

	if (c->response_len == 0)
		return;
	if (c->response_truncated) {
		log_warn("otlp: response body over %d bytes ignored", OTLP_CLIENT_MAX_RESPONSE_BYTES);
		return;
	}
	rc = otlp_client_parse_partial_success(c->response, c->response_len, &rejected, msg,
					       sizeof(msg));
	if (rc < 0) {
		log_debug("otlp: %zu-byte response body is not an ExportProfilesServiceResponse",
			  c->response_len);
		return;
	}
	if (rc == 0)
		return;
	if (rejected > 0)
		c->st.rejected_profiles += (uint64_t)rejected;
	log_warn("otlp: partial success: %" PRId64 " profiles rejected: %s", rejected, msg);
}

static bool otlp_retryable_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

static void otlp_finish(struct otlp_client *c, CURLcode rc)
{
	struct otlp_payload *p = c->head;
	uint64_t now = mono_ms(), delay;
	long status = 0;
	char body[160];
	bool retry;

	curl_lib.multi_remove_handle(c->multi, c->easy);
	c->in_flight = false;
	if (rc == CURLE_OK)
		curl_lib.easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_OK && status >= 200 && status < 300) {
		c->st.sent++;
		c->st.bytes += p->len;
		otlp_log_partial_success(c);
		otlp_pop_head(c);
		return;
	}
	retry = rc == CURLE_OK ? (status == 429 || status == 502 || status == 503 || status == 504)
			       : otlp_retryable_curl(rc);
	/* A dead collector would fill the log: attempts 1, 2, 4, 8... are logged. */
	if ((p->attempts & (p->attempts - 1)) != 0) {
		/* quiet */
	} else if (rc == CURLE_OK) {
		otlp_sanitize((const char *)c->response, c->response_len < 120 ? c->response_len : 120,
			      body, sizeof(body));
		log_warn("otlp: %s answered %ld%s%s", c->url, status, body[0] ? ": " : "", body);
	} else {
		log_warn("otlp: %s: %s", c->url, curl_lib.easy_strerror(rc));
	}
	if (!retry || now - p->first_try_ms >= (uint64_t)c->s.max_elapsed_ms) {
		if (retry)
			log_warn("otlp: giving a profile up after %u attempts", p->attempts);
		c->st.failed++;
		otlp_pop_head(c);
		return;
	}
	delay = otlp_backoff_ms(c, p->attempts);
	if (c->retry_after_ms >= 0) {
		uint64_t cap = (uint64_t)c->s.backoff_max_ms * OTLP_RETRY_AFTER_FACTOR;

		delay = (uint64_t)c->retry_after_ms < cap ? (uint64_t)c->retry_after_ms : cap;
	}
	c->st.retried++;
	c->next_attempt_ms = now + delay;
}

static void otlp_start(struct otlp_client *c)
{
	struct otlp_payload *p = c->head;

	c->response_len = 0;
	c->response_truncated = false;
	c->retry_after_ms = -1;
	if (p->first_try_ms == 0)
		p->first_try_ms = mono_ms();
	p->attempts++;
	curl_lib.easy_setopt(c->easy, CURLOPT_POSTFIELDS, (const char *)p->data);
	curl_lib.easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->len);
	if (curl_lib.multi_add_handle(c->multi, c->easy) != CURLM_OK) {
		log_warn("otlp: curl_multi_add_handle failed");
		c->next_attempt_ms = mono_ms() + (uint64_t)c->s.backoff_initial_ms;
		return;
	}
	c->in_flight = true;
}

void otlp_client_poll(struct otlp_client *c)
{
	CURLMsg *msg;
	int running = 0, left = 0;

	if (!c->in_flight && c->head != NULL && mono_ms() >= c->next_attempt_ms)
		otlp_start(c);
	if (!c->in_flight)
		return;
	curl_lib.multi_perform(c->multi, &running);
	for (;;) {
		msg = curl_lib.multi_info_read(c->multi, &left);
		if (msg == NULL)
			break;
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == c->easy)
			otlp_finish(c, msg->data.result);
	}
}

long otlp_client_timeout_ms(struct otlp_client *c)
{
	uint64_t now;
	long t = -1;

	if (c->in_flight) {
		/* curl's own deadline (connect, timeouts); sockets are not exposed to the caller. */
		if (curl_lib.multi_timeout(c->multi, &t) != CURLM_OK || t < 0 || t > 100)
			t = 100;
		return t;
	}
	if (c->head == NULL)
		return -1;
	now = mono_ms();
	return c->next_attempt_ms > now ? (long)(c->next_attempt_ms - now) : 0;
}

size_t otlp_client_flush(struct otlp_client *c, long timeout_ms)
{
	uint64_t deadline = mono_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);

	while (c->head != NULL && mono_ms() < deadline) {
		long t;
		int numfds;

		otlp_client_poll(c);
		t = otlp_client_timeout_ms(c);
		if (c->head == NULL)
			break;
		if (t < 0 || t > 50)
			t = 50;
		if (c->in_flight)
			curl_lib.multi_poll(c->multi, NULL, 0, (int)t, &numfds);
		else
			usleep((useconds_t)t * 1000);
	}
	return c->st.queued;
}

void otlp_client_get_stats(const struct otlp_client *c, struct otlp_client_stats *out)
{
	*out = c->st;
}

int otlp_client_stats_json(const struct otlp_client_stats *st, char *buf, size_t buflen)
{
	return snprintf(buf, buflen,
			"{\"sent\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"retried\":%" PRIu64
			",\"dropped\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
			st->sent, st->failed, st->retried, st->dropped, st->bytes);
}
