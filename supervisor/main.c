/*
 * lowprof: the only command users run.
 *   lowprof [OPTION]...                  profile this host (supervisor/supervise.c)
 *   lowprof status [--json] [--run-dir DIR]
 *   lowprof restart COMPONENT [--run-dir DIR]
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "ipc/lowprof_fds.h"
#include "lowprof_build_config.h"
#include "supervisor/options.h"
#include "supervisor/status_socket.h"
#include "supervisor/supervise.h"

/* `lowprof status` and `lowprof restart NAME`: ask a running instance. */
static int main_client(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"run-dir", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static char reply[STATUS_REPLY_MAX];
	char run_dir[256], req[STATUS_REQUEST_MAX], err[512];
	const char *cmd = argv[1];
	bool json = false;
	int c;

	status_socket_default_dir(run_dir, sizeof(run_dir));
	optind = 2;
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, "", longopts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'r':
			snprintf(run_dir, sizeof(run_dir), "%s", optarg);
			break;
		case 'h':
			printf("Usage: lowprof status [--json] [--run-dir DIR]\n"
			       "       lowprof restart COMPONENT [--run-dir DIR]\n");
			return 0;
		default:
			fprintf(stderr, "lowprof %s: unknown option '%s'\n", cmd, argv[optind - 1]);
			return LOWPROF_EXIT_USAGE;
		}
	}
	if (strcmp(cmd, "status") == 0) {
		if (optind != argc) {
			fprintf(stderr, "lowprof status: unexpected argument '%s'\n", argv[optind]);
			return LOWPROF_EXIT_USAGE;
		}
		snprintf(req, sizeof(req), "%s", json ? "status-json" : "status");
	} else {
		if (optind + 1 != argc || strlen(argv[optind]) > 32) {
			fprintf(stderr, "lowprof restart: expected one component name (loader, controller, exporter)\n");
			return LOWPROF_EXIT_USAGE;
		}
		snprintf(req, sizeof(req), "restart %s", argv[optind]);
	}
	if (status_socket_query(run_dir, req, reply, sizeof(reply), err, sizeof(err)) != 0) {
		fprintf(stderr, "lowprof %s: %s\n", cmd, err);
		return LOWPROF_EXIT_FAILURE;
	}
	fputs(reply, stdout);
	return strncmp(reply, "error:", 6) == 0 ? LOWPROF_EXIT_FAILURE : 0;
}

int main(int argc, char **argv)
{
	struct supervisor_options opt;
	char err[512];
	int rc;

	log_init("lowprof", LOG_LEVEL_INFO);
	if (argc > 1 && (strcmp(argv[1], "status") == 0 || strcmp(argv[1], "restart") == 0))
		return main_client(argc, argv);
	supervisor_options_defaults(&opt);
	rc = supervisor_options_parse(argc, argv, &opt, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "lowprof: %s\n", err);
		return rc;
	}
	if (opt.show_help) {
		supervisor_options_usage(stdout);
		return 0;
	}
	if (opt.show_version) {
		printf("lowprof %s\n", LOWPROF_VERSION);
		return 0;
	}
	if (opt.verbose)
		log_init("lowprof", LOG_LEVEL_DEBUG);
	return supervise_run(&opt);
}
