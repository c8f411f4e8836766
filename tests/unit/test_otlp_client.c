/* OTLP client over real HTTP on loopback: a Python sink (tests/otlp/http_sink.py)
 * stores what it receives and answers as scripted. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "exporter/otlp/otlp_client.h"
#include "exporter/otlp/curl_lib.h"
#include "exporter/otlp/otlp_encoder.h"
#include "exporter/profile/profile.h"
#include "settings/option_specs.h"
#include "test_support.h"

#define SINK LOWPROF_SOURCE_DIR "/tests/otlp/http_sink.py"

struct sink {
	pid_t pid;
	int port;
	char dir[512];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sink_start(struct sink *s, const char *name, const char *script)
{
	char path[600];
	uint64_t deadline = now_ms() + 10000;
	FILE *f;

	snprintf(s->dir, sizeof(s->dir), "%s/%s", ts_tmpdir, name);
	assert_int_equal(mkdir(s->dir, 0700), 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		execlp("python3", "python3", SINK, s->dir, script, (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "%s/port", s->dir);
	for (;;) {
		f = fopen(path, "r");
		if (f != NULL)
			break;
		assert_true(now_ms() < deadline);
		usleep(20000);
	}
	assert_int_equal(fscanf(f, "%d", &s->port), 1);
	fclose(f);
}

static void sink_stop(struct sink *s)
{
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
}

static bool sink_has(const struct sink *s, int n)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/req-%d.body", s->dir, n);
	return access(path, F_OK) == 0;
}

static uint8_t *encoded_profile(size_t *len)
{
	struct profile *p = profile_new();
	struct frame f[] = {
		{ .function = "compute_leaf", .module = "/usr/bin/app", .build_id = "0123abcd",
		  .address = 0x401000, .module_offset = 0x1000, .map_start = 0x400000,
		  .map_end = 0x500000, .symbolized = true },
		{ .function = "main", .module = "/usr/bin/app", .build_id = "0123abcd",
		  .address = 0x402000, .module_offset = 0x2000, .map_start = 0x400000,
		  .map_end = 0x500000, .symbolized = true },
	};
	struct otlp_encoder_meta meta;
	char host[OTLP_ENCODER_HOST_NAME_MAX], err[256];
	uint8_t *buf;

	assert_int_equal(profile_add_sample(p, 42, 42, "app", f, 2, false, 5, 5 * 52631578ULL), 0);
	otlp_encoder_meta_defaults(&meta, host);
	assert_int_equal(otlp_encoder_encode(p, &meta, &buf, len, err, sizeof(err)), 0);
	profile_free(p);
	return buf;
}

static struct otlp_client *client_for(const char *host, int port, struct otlp_settings *s)
{
	static char url[256];
	struct otlp_client *c;
	char err[256] = "";

	snprintf(url, sizeof(url), "http://%s:%d", host, port);
	s->endpoint = url;
	c = otlp_client_new(s, err, sizeof(err));
	if (c == NULL)
		printf("otlp_client_new: %s\n", err);
	assert_non_null(c);
	return c;
}

/* Polls, as the exporter's loop would, until sent + failed reach n. */
static void drive(struct otlp_client *c, uint64_t n, long timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	struct otlp_client_stats st;

	for (;;) {
		otlp_client_poll(c);
		otlp_client_get_stats(c, &st);
		if (st.sent + st.failed >= n)
			return;
		assert_true(now_ms() < deadline);
		usleep(5000);
	}
}

static void test_settings(void **state)
{
	struct otlp_settings s;
	char err[256], url[256];

	(void)state;
	otlp_settings_init(&s);
	s.endpoint = "http://127.0.0.1:4318";
	assert_int_equal(otlp_settings_validate(&s, err, sizeof(err)), 0);
	assert_int_equal(otlp_settings_endpoint_url(s.endpoint, url, sizeof(url), err, sizeof(err)), 0);
	assert_string_equal(url, "http://127.0.0.1:4318/v1development/profiles");
	assert_int_equal(otlp_settings_endpoint_url("https://c.example/", url, sizeof(url), err, sizeof(err)), 0);
	assert_string_equal(url, "https://c.example/v1development/profiles");
	assert_int_equal(otlp_settings_endpoint_url("http://c:9/custom/x", url, sizeof(url), err, sizeof(err)), 0);
	assert_string_equal(url, "http://c:9/custom/x");

	s.endpoint = "ftp://127.0.0.1:4318";
	assert_int_not_equal(otlp_settings_validate(&s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "scheme"));
	s.endpoint = "not a url";
	assert_int_not_equal(otlp_settings_validate(&s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--otlp-endpoint"));
	s.endpoint = "http://127.0.0.1:4318";

	assert_int_equal(otlp_settings_check_header("Authorization=Bearer abc=def", err, sizeof(err)), 0);
	assert_int_not_equal(otlp_settings_check_header("=value", err, sizeof(err)), 0);
	assert_int_not_equal(otlp_settings_check_header("NoEquals", err, sizeof(err)), 0);
	assert_int_not_equal(otlp_settings_check_header("Bad Name=v", err, sizeof(err)), 0);
	assert_int_not_equal(otlp_settings_check_header("X=a\r\nInjected: 1", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "CR or LF"));
	s.headers[0] = "X-Ok=1";
	s.headers[1] = "Evil=\nx";
	s.nheaders = 2;
	assert_int_not_equal(otlp_settings_validate(&s, err, sizeof(err)), 0);
	s.nheaders = 1;
	assert_int_equal(otlp_settings_validate(&s, err, sizeof(err)), 0);

	/* --otlp-compression's words are in the enum's order (the option table stores the index). */
	assert_string_equal(settings_otlp_compression_names[OTLP_COMPRESSION_GZIP], "gzip");
	assert_string_equal(settings_otlp_compression_names[OTLP_COMPRESSION_NONE], "none");

	s.endpoint = "https://127.0.0.1:4318";
	s.ca_file = "/nonexistent/ca.pem";
	assert_int_not_equal(otlp_settings_validate(&s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--otlp-ca"));
	assert_null(otlp_client_new(&s, err, sizeof(err)));
	s.ca_file = NULL;
	s.client_key = "/etc/hostname";
	assert_int_not_equal(otlp_settings_validate(&s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--otlp-client-key"));
	s.client_key = NULL;
	s.queue_max_bytes = 10;
	assert_int_not_equal(otlp_settings_validate(&s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--otlp-queue-mb"));
}

static void test_deliver_gzip(void **state)
{
	struct otlp_settings s;
	struct otlp_client_stats st;
	struct otlp_client *c;
	struct sink sink;
	char cmd[2048], json[256];
	uint8_t *buf;
	size_t len;
	char *text;
	int status;

	(void)state;
	sink_start(&sink, "gzip", "200");
	otlp_settings_init(&s);
	s.headers[0] = "X-Scope-OrgID=tenant-1";
	s.nheaders = 1;
	/* a name, not an IP literal: resolved once in otlp_client_new and pinned */
	c = client_for("localhost", sink.port, &s);
	buf = encoded_profile(&len);
	assert_int_equal(otlp_client_enqueue(c, buf, len), 0);
	drive(c, 1, 10000);
	otlp_client_get_stats(c, &st);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.retried, 0);
	assert_int_equal(st.queued, 0);
	assert_true(st.bytes > 0 && st.bytes < len + 64);
	otlp_client_stats_json(&st, json, sizeof(json));
	snprintf(cmd, sizeof(cmd), "{\"sent\":1,\"failed\":0,\"retried\":0,\"dropped\":0,\"bytes\":%llu}",
		 (unsigned long long)st.bytes);
	assert_string_equal(json, cmd);

	snprintf(cmd, sizeof(cmd), "cat %s/req-1.headers", sink.dir);
	text = ts_run(cmd, &status);
	assert_non_null(strstr(text, "Content-Type: application/x-protobuf"));
	assert_non_null(strstr(text, "Content-Encoding: gzip"));
	assert_non_null(strstr(text, "X-Scope-OrgID: tenant-1"));
	free(text);
	snprintf(cmd, sizeof(cmd), "gzip -dc < %s/req-1.body | " TS_OTLP_DECODE, sink.dir);
	text = ts_run(cmd, &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(text, "string_table: \"compute_leaf\""));
	assert_non_null(strstr(text, "string_value: \"0123abcd\""));
	assert_non_null(strstr(text, "key: \"host.name\""));
	free(text);
	free(buf);
	otlp_client_free(c);
	sink_stop(&sink);
}

static void retry_after(const char *name, const char *script)
{
	struct otlp_settings s;
	struct otlp_client_stats st;
	struct otlp_client *c;
	struct sink sink;
	char cmd[2048];
	uint64_t t0;
	uint8_t *buf;
	size_t len;
	char *text;
	int status;

	sink_start(&sink, name, script);
	otlp_settings_init(&s);
	s.backoff_initial_ms = 50; /* Retry-After, not the backoff, must set the delay */
	s.backoff_max_ms = 100;
	c = client_for("127.0.0.1", sink.port, &s);
	buf = encoded_profile(&len);
	t0 = now_ms();
	assert_int_equal(otlp_client_enqueue(c, buf, len), 0);
	drive(c, 1, 15000);
	otlp_client_get_stats(c, &st);
	printf("# %s: delivered after %llu ms\n", name, (unsigned long long)(now_ms() - t0));
	assert_true(now_ms() - t0 >= 900);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.retried, 1);
	assert_int_equal(st.failed, 0);
	/* delivered once: two requests (503, 200), no third */
	usleep(200000);
	otlp_client_poll(c);
	assert_true(sink_has(&sink, 2));
	assert_false(sink_has(&sink, 3));
	snprintf(cmd, sizeof(cmd), "cmp %s/req-1.body %s/req-2.body", sink.dir, sink.dir);
	text = ts_run(cmd, &status);
	assert_int_equal(status, 0);
	free(text);
	free(buf);
	otlp_client_free(c);
	sink_stop(&sink);
}

static void test_retry_after_seconds(void **state)
{
	(void)state;
	retry_after("ra-seconds", "503:1,200");
}

static void test_retry_after_date(void **state)
{
	(void)state;
	retry_after("ra-date", "503d:2,200");
}

/* The header parser alone: every form a collector may send, and dates so far
 * ahead that the delay in milliseconds would overflow a long (the fuzzer's
 * first finding here). */
static long parse_ra(const char *line, time_t now)
{
	return otlp_client_parse_retry_after(line, strlen(line), now);
}

static void test_retry_after_parse(void **state)
{
	const time_t now = 1764547200; /* Mon, 01 Dec 2025 00:00:00 GMT */
	char err[256];

	(void)state;
	/* Dates go to libcurl's parser, which a client loads (curl_lib.h). */
	assert_int_equal(curl_lib_open(err, sizeof(err)), 0);
	assert_int_equal(parse_ra("Retry-After: 120\r\n", now), 120000);
	assert_int_equal(parse_ra("retry-after:\t7\r\n", now), 7000);
	assert_int_equal(parse_ra("Retry-After: 12345678901\r\n", now), 999999999L * 1000L);
	assert_int_equal(parse_ra("Retry-After: Mon, 01 Dec 2025 00:01:00 GMT\r\n", now), 60000);
	assert_int_equal(parse_ra("Retry-After: Sun, 30 Nov 2025 00:00:00 GMT\r\n", now), 0);
	assert_int_equal(parse_ra("Retry-After: Fri, 31 Dec 9999 23:59:59 GMT\r\n", now), 999999999L * 1000L);
	assert_int_equal(parse_ra("Retry-After: 31 Dec 2147483647\r\n", now), 999999999L * 1000L);
	assert_int_equal(parse_ra("Retry-After: soon\r\n", now), -1);
	assert_int_equal(parse_ra("Content-Length: 5\r\n", now), -1);
	assert_int_equal(parse_ra("Retry-After:", now), -1);
}

static void test_400_not_retried(void **state)
{
	struct otlp_settings s;
	struct otlp_client_stats st;
	struct otlp_client *c;
	struct sink sink;
	uint8_t *buf;
	size_t len;

	(void)state;
	sink_start(&sink, "400", "400");
	otlp_settings_init(&s);
	s.backoff_initial_ms = 10;
	s.backoff_max_ms = 20;
	c = client_for("127.0.0.1", sink.port, &s);
	buf = encoded_profile(&len);
	assert_int_equal(otlp_client_enqueue(c, buf, len), 0);
	drive(c, 1, 10000);
	usleep(300000);
	otlp_client_poll(c);
	otlp_client_get_stats(c, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.retried, 0);
	assert_int_equal(st.queued, 0);
	assert_true(sink_has(&sink, 1));
	assert_false(sink_has(&sink, 2));
	free(buf);
	otlp_client_free(c);
	sink_stop(&sink);
}

static int unused_port(void)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	port = ntohs(a.sin_port);
	close(fd); /* nothing listens there now: connections are refused */
	return port;
}

static void test_sink_down(void **state)
{
	struct otlp_settings s;
	struct otlp_client_stats st;
	struct otlp_client *c;
	uint8_t payload[1000];
	size_t i, max_queued = 0;

	(void)state;
	otlp_settings_init(&s);
	s.compression = OTLP_COMPRESSION_NONE;
	s.queue_max_bytes = 8 * 1024;
	s.backoff_initial_ms = 20;
	s.backoff_max_ms = 40;
	c = client_for("127.0.0.1", unused_port(), &s);
	memset(payload, 0xab, sizeof(payload));
	for (i = 0; i < 50; i++) {
		payload[0] = (uint8_t)i;
		assert_int_equal(otlp_client_enqueue(c, payload, sizeof(payload)), 0);
		otlp_client_poll(c);
		otlp_client_get_stats(c, &st);
		assert_true(st.queued_bytes <= s.queue_max_bytes);
		if (st.queued_bytes > max_queued)
			max_queued = st.queued_bytes;
		usleep(5000);
	}
	otlp_client_get_stats(c, &st);
	printf("# down: queued %zu (%zu bytes), dropped %llu, retried %llu\n", st.queued,
	       st.queued_bytes, (unsigned long long)st.dropped, (unsigned long long)st.retried);
	assert_int_equal(max_queued, 8 * 1000); /* filled to its bound, never past it */
	assert_int_equal(st.queued, 8);
	assert_int_equal(st.dropped, 42);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.failed, 0);
	assert_true(st.retried > 0);
	/* a payload larger than the whole queue is refused, and counted */
	{
		uint8_t *big = calloc(1, 9000);

		assert_int_equal(otlp_client_enqueue(c, big, 9000), -E2BIG);
		free(big);
	}
	otlp_client_get_stats(c, &st);
	assert_int_equal(st.dropped, 43);
	assert_int_equal(otlp_client_flush(c, 100), 8);
	otlp_client_free(c);
}

static void test_odd_responses(void **state)
{
	struct otlp_settings s;
	struct otlp_client_stats st;
	struct otlp_client *c;
	struct sink sink;
	uint8_t *buf;
	size_t len;
	int i;

	(void)state;
	sink_start(&sink, "odd", "garbage,huge,partial");
	otlp_settings_init(&s);
	c = client_for("127.0.0.1", sink.port, &s);
	buf = encoded_profile(&len);
	for (i = 0; i < 3; i++)
		assert_int_equal(otlp_client_enqueue(c, buf, len), 0);
	drive(c, 3, 20000);
	otlp_client_get_stats(c, &st);
	assert_int_equal(st.sent, 3);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.rejected_profiles, 2);
	free(buf);
	otlp_client_free(c);
	sink_stop(&sink);
}

/* A self-signed certificate for 127.0.0.1 in dir/NAME.pem, key in dir/NAME.key. */
static void make_cert(const char *dir, const char *name)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
		 "-addext subjectAltName=IP:127.0.0.1 -keyout %s/%s.key -out %s/%s.pem 2>/dev/null",
		 dir, name, dir, name);
	assert_int_equal(system(cmd), 0);
}

/*
 * TLS: a real handshake with an HTTPS sink whose certificate only --otlp-ca
 * vouches for. The right CA delivers; another CA never does (the failure is a
 * connection failure, retried, never "sent").
 */
static void test_tls_with_ca(void **state)
{
	static char url[256];
	char cert[600], key[600], other[600], err[256] = "";
	struct otlp_settings s;
	struct otlp_client_stats st;
	struct otlp_client *c;
	struct sink sink;
	uint64_t deadline;
	uint8_t *buf;
	size_t len;

	(void)state;
	make_cert(ts_tmpdir, "server");
	make_cert(ts_tmpdir, "stranger");
	snprintf(cert, sizeof(cert), "%s/server.pem", ts_tmpdir);
	snprintf(key, sizeof(key), "%s/server.key", ts_tmpdir);
	snprintf(other, sizeof(other), "%s/stranger.pem", ts_tmpdir);
	setenv("SINK_TLS_CERT", cert, 1);
	setenv("SINK_TLS_KEY", key, 1);
	sink_start(&sink, "tls", "200");
	unsetenv("SINK_TLS_CERT");
	unsetenv("SINK_TLS_KEY");
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", sink.port);
	buf = encoded_profile(&len);

	otlp_settings_init(&s);
	s.endpoint = url;
	s.ca_file = cert;
	c = otlp_client_new(&s, err, sizeof(err));
	if (c == NULL)
		fail_msg("otlp_client_new: %s", err);
	assert_int_equal(otlp_client_enqueue(c, buf, len), 0);
	drive(c, 1, 10000);
	otlp_client_get_stats(c, &st);
	assert_int_equal(st.sent, 1);
	assert_true(sink_has(&sink, 1));
	otlp_client_free(c);

	/* A CA that did not sign the sink's certificate: nothing is delivered. */
	otlp_settings_init(&s);
	s.endpoint = url;
	s.ca_file = other;
	c = otlp_client_new(&s, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(otlp_client_enqueue(c, buf, len), 0);
	deadline = now_ms() + 1500;
	while (now_ms() < deadline) {
		otlp_client_poll(c);
		usleep(5000);
	}
	otlp_client_get_stats(c, &st);
	assert_int_equal(st.sent, 0);
	assert_false(sink_has(&sink, 2));
	otlp_client_free(c);
	free(buf);
	sink_stop(&sink);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_deliver_gzip),
		cmocka_unit_test(test_retry_after_seconds),
		cmocka_unit_test(test_retry_after_date),
		cmocka_unit_test(test_retry_after_parse),
		cmocka_unit_test(test_400_not_retried),
		cmocka_unit_test(test_sink_down),
		cmocka_unit_test(test_odd_responses),
		cmocka_unit_test(test_tls_with_ca),
	};

	return cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
}
