/*
 * lowprof: the only command users run.
 *   lowprof [OPTION]...                  profile this host (supervisor/supervise.c)
 *   lowprof status [--json] [--run-dir DIR]
 *   lowprof restart COMPONENT [--run-dir DIR]
 *   lowprof audit PATH                   the loader's audit log as a table
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "ipc/lowprof_fds.h"
#include "lowprof_build_config.h"
#include "seccomp/sandbox.h"
#include "settings/option_table.h"
#include "supervisor/audit_read.h"
#include "supervisor/options.h"
#include "supervisor/status_socket.h"
#include "supervisor/supervise.h"

/* `lowprof status` and `lowprof restart NAME`: ask a running instance. */
static int main_client(int argc, char **argv)
{
	static char reply[STATUS_REPLY_MAX];
	char run_dir[256], req[STATUS_REQUEST_MAX], err[512];
	const char *cmd = argv[1], *run_dir_opt = NULL;
	bool json = false, help = false;
	int rc, operands;
	const struct option_spec specs[] = {
		{.name = "json", .kind = OPTION_FLAG, .dest = &json},
		{.name = "run-dir", .kind = OPTION_STRING, .dest = &run_dir_opt},
		{.name = "help", .kind = OPTION_FLAG, .dest = &help, .flags = OPTION_STOP},
		{.name = NULL},
	};
	const struct option_parser parser = {.specs = specs, .first = 2, .operands = &operands};

	status_socket_default_dir(run_dir, sizeof(run_dir));
	rc = option_table_parse(&parser, argc, argv, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "lowprof %s: %s\n", cmd, err);
		return LOWPROF_EXIT_USAGE;
	}
	if (help) {
		printf("Usage: lowprof status [--json] [--run-dir DIR]\n"
		       "       lowprof restart COMPONENT [--run-dir DIR]\n");
		return 0;
	}
	if (run_dir_opt != NULL)
		snprintf(run_dir, sizeof(run_dir), "%s", run_dir_opt);
	if (strcmp(cmd, "status") == 0) {
		if (operands != argc) {
			fprintf(stderr, "lowprof status: unexpected argument '%s'\n", argv[operands]);
			return LOWPROF_EXIT_USAGE;
		}
		snprintf(req, sizeof(req), "%s", json ? "status-json" : "status");
	} else {
		if (operands + 1 != argc || strlen(argv[operands]) > 32) {
			fprintf(stderr, "lowprof restart: expected one component name (loader, controller, exporter)\n");
			return LOWPROF_EXIT_USAGE;
		}
		snprintf(req, sizeof(req), "restart %s", argv[operands]);
	}
	if (status_socket_query(run_dir, req, reply, sizeof(reply), err, sizeof(err)) != 0) {
		fprintf(stderr, "lowprof %s: %s\n", cmd, err);
		return LOWPROF_EXIT_FAILURE;
	}
	fputs(reply, stdout);
	return strncmp(reply, "error:", 6) == 0 ? LOWPROF_EXIT_FAILURE : 0;
}

/* `lowprof audit PATH`: malformed lines are reported, not fatal (status 1 if any). */
static int main_audit(int argc, char **argv)
{
	FILE *in;
	int bad;

	if (argc != 3 || argv[2][0] == '-') {
		fprintf(stderr, "usage: lowprof audit PATH (the file --audit-log names; default OUTPUT/audit.log)\n");
		return argc == 3 && strcmp(argv[2], "--help") == 0 ? 0 : LOWPROF_EXIT_USAGE;
	}
	in = fopen(argv[2], "re");
	if (in == NULL) {
		fprintf(stderr, "lowprof audit: %s: %s\n", argv[2], strerror(errno));
		return LOWPROF_EXIT_FAILURE;
	}
	bad = audit_read_print(in, stdout, stderr);
	fclose(in);
	if (bad < 0) {
		fprintf(stderr, "lowprof audit: reading %s failed\n", argv[2]);
		return LOWPROF_EXIT_FAILURE;
	}
	if (bad > 0)
		fprintf(stderr, "lowprof audit: %d malformed line(s) skipped\n", bad);
	return bad > 0 ? LOWPROF_EXIT_FAILURE : 0;
}

int main(int argc, char **argv)
{
	struct supervisor_options opt;
	char err[512];
	int rc;

	log_init("lowprof", LOG_LEVEL_INFO);
	if (argc > 1 && (strcmp(argv[1], "status") == 0 || strcmp(argv[1], "restart") == 0))
		return main_client(argc, argv);
	if (argc > 1 && strcmp(argv[1], "audit") == 0)
		return main_audit(argc, argv);
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
	sandbox_not_dumpable("supervisor");
	return supervise_run(&opt);
}
