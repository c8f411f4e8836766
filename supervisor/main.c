/*
 * lowprof: the only command users run.
 *   lowprof [OPTION]...                  profile this host (supervisor/supervise.c)
 *   lowprof [OPTION]... -- COMMAND [ARG]...  profile a command (supervisor/command.h)
 *   lowprof status [--json] [--run-dir DIR]
 *   lowprof restart COMPONENT [--run-dir DIR]
 *   lowprof audit PATH                   the loader's audit log as a table
 *   lowprof config check FILE            validate a configuration file
 *   lowprof config show [OPTION]...      the effective settings
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/heap_bound.h"
#include "common/log.h"
#include "common/proc_stat.h"
#include "ipc/lowprof_fds.h"
#include "lowprof_build_config.h"
#include "seccomp/sandbox.h"
#include "settings/option_table.h"
#include "supervisor/audit_read.h"
#include "supervisor/component.h"
#include "supervisor/audit_sink.h"
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

/* `lowprof audit PATH`: PATH's rotated files first (PATH.N .. PATH.1), then
 * PATH; malformed lines are reported, not fatal (status 1 if any). */
static int main_audit(int argc, char **argv)
{
	static char files[AUDIT_SINK_KEEP_MAX + 1][AUDIT_SINK_PATH_MAX + 16];
	size_t n, i;
	FILE *in;
	int bad = 0, rc;

	if (argc != 3 || argv[2][0] == '-') {
		fprintf(stderr, "usage: lowprof audit PATH (the file --audit-log names; default OUTPUT/audit.log)\n");
		return argc == 3 && strcmp(argv[2], "--help") == 0 ? 0 : LOWPROF_EXIT_USAGE;
	}
	n = audit_sink_files(argv[2], files, sizeof(files) / sizeof(files[0]));
	for (i = 0; i < n; i++) {
		in = fopen(files[i], "re");
		if (in == NULL) {
			fprintf(stderr, "lowprof audit: %s: %s\n", files[i], strerror(errno));
			return LOWPROF_EXIT_FAILURE;
		}
		rc = audit_read_print(in, stdout, stderr);
		fclose(in);
		if (rc < 0) {
			fprintf(stderr, "lowprof audit: reading %s failed\n", files[i]);
			return LOWPROF_EXIT_FAILURE;
		}
		bad += rc;
	}
	if (bad > 0)
		fprintf(stderr, "lowprof audit: %d malformed line(s) skipped\n", bad);
	return bad > 0 ? LOWPROF_EXIT_FAILURE : 0;
}

/*
 * `lowprof config check FILE`: FILE read as lowprof would read it, nothing
 * started; `lowprof config show [OPTION]...`: the settings lowprof would run
 * with (defaults, the configuration file, then OPTIONs), as a file's lines.
 */
static int main_config(int argc, char **argv)
{
	struct supervisor_options opt;
	char *sub_argv[COMPONENT_MAX_ARGS];
	char err[512];
	int rc, i, sub_argc = 0;
	bool check = argc == 4 && strcmp(argv[2], "check") == 0;

	if (!check && (argc < 3 || strcmp(argv[2], "show") != 0)) {
		fprintf(stderr, "usage: lowprof config check FILE | lowprof config show [OPTION]...\n");
		return argc == 3 && strcmp(argv[2], "--help") == 0 ? 0 : LOWPROF_EXIT_USAGE;
	}
	sub_argv[sub_argc++] = argv[0];
	for (i = 3; !check && i < argc && sub_argc + 1 < COMPONENT_MAX_ARGS; i++)
		sub_argv[sub_argc++] = argv[i];
	sub_argv[sub_argc] = NULL;
	supervisor_options_defaults(&opt);
	if (check) {
		opt.config_path = argv[3];
		opt.default_config_path = NULL;
	}
	rc = supervisor_options_load(sub_argc, sub_argv, &opt, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "lowprof config: %s\n", err);
		supervisor_options_free(&opt);
		return rc;
	}
	if (check)
		printf("%s: ok\n", argv[3]);
	else
		supervisor_options_print(&opt, stdout);
	supervisor_options_free(&opt);
	return 0;
}

/* Fork the command, held until sampling runs, and make it the target that
 * follows (supervisor/command.h). 0, or -errno with one line in err. */
static int main_start_command(struct supervisor_options *o, struct command *cmd, char *err,
			      size_t errlen)
{
	struct options_target *t;
	int rc;

	if (o->ntargets >= SETTINGS_MAX_PIDS) {
		snprintf(err, errlen, "a command and %d -p processes: at most %d targets",
			 SETTINGS_MAX_PIDS, SETTINGS_MAX_PIDS);
		return -E2BIG;
	}
	rc = command_spawn(cmd, o->command, err, errlen);
	if (rc != 0)
		return rc;
	t = &o->targets[o->ntargets];
	t->pid = cmd->pid;
	rc = proc_stat_field(cmd->pid, PROC_STAT_STARTTIME, &t->start);
	if (rc != 0) {
		snprintf(err, errlen, "the start time of the command's process: %s", strerror(-rc));
		command_close(cmd);
		return rc;
	}
	o->ntargets++;
	o->follow_pid = cmd->pid;
	return 0;
}

int main(int argc, char **argv)
{
	struct command cmd = {.release_fd = -1};
	struct supervisor_options opt;
	char err[512];
	int rc;

	heap_bound();
	log_init("lowprof", LOG_LEVEL_INFO);
	if (argc > 1 && (strcmp(argv[1], "status") == 0 || strcmp(argv[1], "restart") == 0))
		return main_client(argc, argv);
	if (argc > 1 && strcmp(argv[1], "audit") == 0)
		return main_audit(argc, argv);
	if (argc > 1 && strcmp(argv[1], "config") == 0)
		return main_config(argc, argv);
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
	if (opt.command != NULL && main_start_command(&opt, &cmd, err, sizeof(err)) != 0) {
		fprintf(stderr, "lowprof: %s\n", err);
		return LOWPROF_EXIT_USAGE;
	}
	sandbox_not_dumpable("supervisor");
	return supervise_run(&opt, &cmd);
}
