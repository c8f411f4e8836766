#include "exporter/exporter_options.h"

#include <getopt.h>
#include <stdio.h>

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
		{NULL, 0, NULL, 0},
	};
	int c;

	out->interval_s = 10;
	out->frequency_hz = 19;
	out->output_label = ".";
	out->kallsyms_path = "/proc/kallsyms";
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
		default:
			snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
			return LOWPROF_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return LOWPROF_EXIT_USAGE;
	}
	return 0;
bad_value:
	snprintf(err, errlen, "invalid value '%s' for --%s", optarg, argv[optind - 1] + 2);
	return LOWPROF_EXIT_USAGE;
}
