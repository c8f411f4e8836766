/* The OTLP client against a hostile or broken collector, and the --otlp-*
 * checks on arbitrary option values. The input goes, whole, through:
 *   - otlp_client_parse_retry_after (one response header line, as libcurl
 *     hands it over): -1 or a delay >= 0, without overflow (UBSan);
 *   - otlp_client_parse_partial_success (a 2xx answer's body): the message
 *     it returns holds printable ASCII only (it goes to the log);
 *   - otlp_settings_check_header and otlp_settings_endpoint_url (as a
 *     string): a URL it accepts is http(s)://, has no space or control
 *     character, and normalising it again gives itself. */
#include "exporter/otlp/otlp_client.h"
#include "exporter/otlp/curl_lib.h"
#include "settings/otlp_settings.h"

#include "fuzz/fuzz_check.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fixed "now" (2025-12-01), so that a date gives the same delay every run. */
#define FUZZ_NOW ((time_t)1764547200)

static void fuzz_url(const char *s)
{
	static char url[OTLP_SETTINGS_URL_MAX], again[OTLP_SETTINGS_URL_MAX];
	char err[256];

	if (otlp_settings_endpoint_url(s, url, sizeof(url), err, sizeof(err)) != 0)
		return;
	FUZZ_CHECK(strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0);
	for (const char *p = url; *p != '\0'; p++)
		FUZZ_CHECK((unsigned char)*p > 0x20 && (unsigned char)*p != 0x7f);
	FUZZ_CHECK(otlp_settings_endpoint_url(url, again, sizeof(again), err, sizeof(err)) == 0);
	FUZZ_CHECK(strcmp(url, again) == 0);
}

/* Dates in Retry-After go to libcurl's parser, loaded as the exporter loads it. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	if (curl_lib_open(err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[256], err[256], *s;
	int64_t rejected;
	long ms;
	int rc;

	ms = otlp_client_parse_retry_after((const char *)data, size, FUZZ_NOW);
	FUZZ_CHECK(ms >= -1);
	rc = otlp_client_parse_partial_success(data, size, &rejected, msg, sizeof(msg));
	FUZZ_CHECK(rc == -EINVAL || rc == 0 || rc == 1);
	if (rc == 1) {
		for (const char *p = msg; *p != '\0'; p++)
			FUZZ_CHECK(*p >= 0x20 && *p < 0x7f);
	}
	s = malloc(size + 1);
	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (otlp_settings_check_header(s, err, sizeof(err)) == 0)
		FUZZ_CHECK(strchr(s, '=') != NULL && strpbrk(s, "\r\n") == NULL);
	fuzz_url(s);
	free(s);
	return 0;
}
