#include "exporter/exporter_options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/lowprof_fds.h"
#include "common/number_parse.h"

int exporter_options_parse(int argc, char **argv, struct exporter_options *out,
			   char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{"interval", required_argument, NULL, 'i'},
		{"frequency", required_argument, NULL, 'F'},
		{"output-label", required_argument, NULL, 'o'},
		{"kallsyms", required_argument, NULL, 'k'},
		{"run-id", required_argument, NULL, 'r'},
		{"otlp-endpoint", required_argument, NULL, 'E'},
		{"otlp-compression", required_argument, NULL, 'C'},
		{"otlp-header", required_argument, NULL, 'H'},
		{"otlp-ca", required_argument, NULL, 'A'},
		{"otlp-client-cert", required_argument, NULL, 'c'},
		{"otlp-client-key", required_argument, NULL, 'K'},
		{"otlp-queue-bytes", required_argument, NULL, 'Q'},
		{NULL, 0, NULL, 0},
	};
	unsigned long long qb;
	char *end;
	int c;

	out->interval_s = 10;
	out->frequency_hz = 19;
	out->output_label = ".";
	out->kallsyms_path = "/proc/kallsyms";
	out->run_id[0] = '\0';
	out->otlp_enabled = false;
	otlp_client_settings_init(&out->otlp);
	optind = 1;
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, "", longopts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 'i':
			if (number_parse_uint(optarg, 1, 86400, &out->interval_s) != 0)
				goto bad_value;
			break;
		case 'F':
			if (number_parse_uint(optarg, 1, 1000000, &out->frequency_hz) != 0)
				goto bad_value;
			break;
		case 'o':
			out->output_label = optarg;
			break;
		case 'k':
			out->kallsyms_path = optarg;
			break;
		case 'r':
			if (strlen(optarg) != EXPORTER_RUN_ID_LEN ||
			    strspn(optarg, "0123456789abcdef") != EXPORTER_RUN_ID_LEN)
				goto bad_value;
			memcpy(out->run_id, optarg, EXPORTER_RUN_ID_LEN + 1);
			break;
		case 'E':
			out->otlp.endpoint = optarg;
			out->otlp_enabled = true;
			break;
		case 'C':
			if (otlp_client_parse_compression(optarg, &out->otlp.compression, err, errlen) != 0)
				return LOWPROF_EXIT_USAGE;
			break;
		case 'H':
			if (out->otlp.nheaders == OTLP_CLIENT_MAX_HEADERS)
				goto bad_value;
			out->otlp.headers[out->otlp.nheaders++] = optarg;
			break;
		case 'A':
			out->otlp.ca_file = optarg;
			break;
		case 'c':
			out->otlp.client_cert = optarg;
			break;
		case 'K':
			out->otlp.client_key = optarg;
			break;
		case 'Q':
			errno = 0;
			qb = strtoull(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-' ||
			    qb < 1024 || qb > (1ULL << 40))
				goto bad_value;
			out->otlp.queue_max_bytes = (size_t)qb;
			break;
		default:
			snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
			return LOWPROF_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return LOWPROF_EXIT_USAGE;
	}
	/* The supervisor validated these already; a second look costs nothing. */
	if (out->otlp_enabled && otlp_client_settings_validate(&out->otlp, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	return 0;
bad_value:
	snprintf(err, errlen, "invalid value '%s' for --%s", optarg, argv[optind - 1] + 2);
	return LOWPROF_EXIT_USAGE;
}
