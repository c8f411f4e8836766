/*
 * OTLP/HTTP delivery of encoded profiles (otlp_encoder) to a collector, with
 * libcurl's multi interface: a bounded queue and otlp_client_poll(), which
 * makes progress without blocking and returns. See docs/OTLP.md.
 *
 * Life cycle, in the exporter:
 *   otlp_settings_init(&s); fill s from options (settings/otlp_settings.h);
 *   otlp_settings_validate(&s, err, n)          -> supervisor: exit status 2
 *   c = otlp_client_new(&s, err, n)             -> before seccomp: loads libcurl
 *       (curl_lib.h), reads the CA bundle and client cert/key into memory and
 *       resolves the host once
 *   every interval: otlp_client_enqueue(c, encoded, len)
 *   every main-loop turn: otlp_client_poll(c); otlp_client_timeout_ms(c) may
 *       shorten the poll(2) timeout
 *   at exit: otlp_client_flush(c, ms); otlp_client_free(c)
 *
 * Not thread-safe: the exporter's one thread owns a client.
 */
#ifndef LOWPROF_EXPORTER_OTLP_CLIENT_H
#define LOWPROF_EXPORTER_OTLP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "settings/otlp_settings.h"

/* Response bodies are kept up to this size; the rest is read and discarded. */
#define OTLP_CLIENT_MAX_RESPONSE_BYTES 65536

struct otlp_client_stats {
	uint64_t sent;          /* payloads accepted (2xx) */
	uint64_t failed;        /* payloads given up: non-retryable answer or error, or too old */
	uint64_t retried;       /* retry attempts scheduled */
	uint64_t dropped;       /* payloads evicted (oldest first) or refused by the full queue */
	uint64_t bytes;         /* request body bytes of the payloads sent (after compression) */
	uint64_t rejected_profiles; /* partial_success.rejected_profiles, summed */
	size_t queued;          /* payloads waiting, including the one in flight */
	size_t queued_bytes;
};

struct otlp_client;

/* Validates, reads the TLS files into memory, resolves the endpoint's host
 * once and pins it (CURLOPT_RESOLVE), so that nothing opens a file or
 * resolves a name afterwards. Call before sandboxing. NULL with a message on
 * error. Loads and initialises libcurl the first time (curl_lib_open). */
struct otlp_client *otlp_client_new(const struct otlp_settings *s, char *err, size_t errlen);
void otlp_client_free(struct otlp_client *c);

/* Compresses (per settings) and queues one serialized ExportProfilesServiceRequest.
 * When the queue would exceed queue_max_bytes, the oldest payloads not in flight
 * are dropped (counted); a payload larger than the whole queue is itself dropped.
 * Returns 0, -E2BIG when this payload was dropped, -ENOMEM. Never blocks on I/O. */
int otlp_client_enqueue(struct otlp_client *c, const uint8_t *body, size_t len);

/* Makes progress (starts, continues, finishes transfers; schedules retries)
 * without waiting, and returns. Call often: every main-loop turn. */
void otlp_client_poll(struct otlp_client *c);

/* Milliseconds until the client next needs otlp_client_poll(): 0 now, -1 when idle. */
long otlp_client_timeout_ms(struct otlp_client *c);

/* Blocks up to timeout_ms delivering what is queued (at shutdown). Returns
 * the number of payloads still queued. */
size_t otlp_client_flush(struct otlp_client *c, long timeout_ms);

void otlp_client_get_stats(const struct otlp_client *c, struct otlp_client_stats *out);

/* {"sent":N,"failed":N,"retried":N,"dropped":N,"bytes":N} for summary.json's
 * "export" and `lowprof status`. Returns the length snprintf would write. */
int otlp_client_stats_json(const struct otlp_client_stats *st, char *buf, size_t buflen);

/*
 * The parts of a collector's answer the client reads, as pure functions (the
 * fuzz harness drives them on arbitrary bytes).
 *
 * Retry-After from one header line as libcurl hands it over ("Retry-After:
 * 120\r\n", any case): milliseconds to wait, from delay-seconds or an HTTP
 * date (relative to now); -1 when the line is another header or its value is
 * not understood. A date is read by libcurl's parser: only once libcurl is
 * loaded (curl_lib_open, done by otlp_client_new), -1 before.
 */
long otlp_client_parse_retry_after(const char *line, size_t len, time_t now);

/*
 * A 2xx answer's body, an ExportProfilesServiceResponse: 1 when it reports a
 * partial success (profiles rejected, or a message: *rejected and msg, the
 * message with non-printable bytes as '?'), 0 when it does not, -EINVAL when
 * the body is not such a message.
 */
int otlp_client_parse_partial_success(const uint8_t *body, size_t len, int64_t *rejected,
				      char *msg, size_t msglen);

#endif
