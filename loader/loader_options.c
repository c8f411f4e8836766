#include "loader/loader_options.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bpf/lowprof.h"
#include "common/number_parse.h"
#include "ipc/lowprof_fds.h"

int loader_options_parse(int argc, char **argv, struct loader_options *out, char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{"frequency", required_argument, NULL, 'F'},
		{"ringbuf-kb", required_argument, NULL, 'r'},
		{"max-depth", required_argument, NULL, 'D'},
		{"drain-ms", required_argument, NULL, 'd'},
		{"stats-ms", required_argument, NULL, 's'},
		{"pid", required_argument, NULL, 'p'},
		{"cpu-budget", required_argument, NULL, 'b'},
		{"control-interval", required_argument, NULL, 'i'},
		{"no-throttle", no_argument, NULL, 'n'},
		{"unwind", required_argument, NULL, 'u'},
		{"unwind-table-mb", required_argument, NULL, 'U'},
		{"controller-uid", required_argument, NULL, 'C'},
		{"pin-dir", required_argument, NULL, 'P'},
		{"exporter-uid", required_argument, NULL, 'E'},
		{"debug-dir", required_argument, NULL, 'G'},
		{NULL, 0, NULL, 0},
	};
	unsigned v;
	int c;

	out->frequency_hz = 19;
	out->ringbuf_kb = 8192;
	out->max_depth = 64;
	out->drain_ms = 100;
	out->stats_ms = 1000;
	out->npids = 0;
	out->cpu_budget_pct = 1.5;
	out->control_interval_s = 1.0;
	out->no_throttle = false;
	out->unwind = LOADER_UNWIND_AUTO;
	out->unwind_table_mb = LOADER_UNWIND_TABLE_MB_DEFAULT;
	out->controller_uid = -1;
	out->exporter_uid = -1;
	out->debug_dir = LOADER_DEBUG_DIR_DEFAULT;
	optind = 1;
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, "", longopts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 'F':
			if (number_parse_uint(optarg, 1, 1000000, &out->frequency_hz) != 0)
				goto bad_value;
			break;
		case 'r':
			if (number_parse_uint(optarg, 4, 1u << 20, &out->ringbuf_kb) != 0 ||
			    (out->ringbuf_kb & (out->ringbuf_kb - 1)) != 0)
				goto bad_value;
			break;
		case 'D':
			if (number_parse_uint(optarg, 1, LOWPROF_MAX_USER_DEPTH, &out->max_depth) != 0)
				goto bad_value;
			break;
		case 'd':
			if (number_parse_uint(optarg, 1, 10000, &out->drain_ms) != 0)
				goto bad_value;
			break;
		case 's':
			if (number_parse_uint(optarg, 10, 60000, &out->stats_ms) != 0)
				goto bad_value;
			break;
		case 'b':
			if (number_parse_seconds(optarg, 100.0, &out->cpu_budget_pct) != 0 ||
			    out->cpu_budget_pct < 0.01)
				goto bad_value;
			break;
		case 'i':
			if (number_parse_seconds(optarg, 3600.0, &out->control_interval_s) != 0 ||
			    out->control_interval_s < 0.1)
				goto bad_value;
			break;
		case 'n':
			out->no_throttle = true;
			break;
		case 'u':
			if (strcmp(optarg, "auto") == 0)
				out->unwind = LOADER_UNWIND_AUTO;
			else if (strcmp(optarg, "dwarf") == 0)
				out->unwind = LOADER_UNWIND_DWARF;
			else if (strcmp(optarg, "fp") == 0)
				out->unwind = LOADER_UNWIND_FP;
			else
				goto bad_value;
			break;
		case 'P':
			/* Only under bpffs, and never a path that climbs out of it. */
			if (strncmp(optarg, "/sys/fs/bpf/", 12) != 0 || strstr(optarg, "..") != NULL ||
			    strlen(optarg) > 200)
				goto bad_value;
			out->pin_dir = optarg;
			break;
		case 'U':
			if (number_parse_uint(optarg, 1, LOADER_UNWIND_TABLE_MB_MAX,
					      &out->unwind_table_mb) != 0)
				goto bad_value;
			break;
		case 'C':
			if (number_parse_uint(optarg, 1, 0x7fffffff, &v) != 0)
				goto bad_value;
			out->controller_uid = (long)v;
			break;
		case 'E':
			if (number_parse_uint(optarg, 1, 0x7fffffff, &v) != 0)
				goto bad_value;
			out->exporter_uid = (long)v;
			break;
		case 'G':
			/* Absolute, and never a path that climbs out of where it points. */
			if (optarg[0] != '/' || strstr(optarg, "..") != NULL ||
			    strlen(optarg) > LOADER_DEBUG_DIR_MAX)
				goto bad_value;
			out->debug_dir = optarg;
			break;
		case 'p':
			if (number_parse_uint(optarg, 1, 0x7fffffff, &v) != 0)
				goto bad_value;
			if (out->npids == LOADER_MAX_PIDS) {
				snprintf(err, errlen, "too many --pid (at most %d)", LOADER_MAX_PIDS);
				return LOWPROF_EXIT_USAGE;
			}
			out->pids[out->npids++] = (pid_t)v;
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
	snprintf(err, errlen, "invalid value '%s' for %s", optarg, argv[optind - 1]);
	return LOWPROF_EXIT_USAGE;
}
