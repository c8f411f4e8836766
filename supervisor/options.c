#include "supervisor/options.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/number_parse.h"
#include "common/proc_stat.h"
#include "ipc/lowprof_fds.h"
#include "settings/config_file.h"
#include "settings/option_specs.h"
#include "supervisor/config_reload.h"
#include "supervisor/status_socket.h"

/* --run-dir: room left in run_dir for the socket's name. */
#define OPTIONS_RUN_DIR_SPARE 16

void supervisor_options_defaults(struct supervisor_options *o)
{
	memset(o, 0, sizeof(*o));
	o->output_dir = SETTINGS_OUTPUT_DIR;
	o->frequency_hz = SETTINGS_FREQUENCY_HZ;
	o->ringbuf_kb = SETTINGS_RINGBUF_KB;
	o->interval_s = SETTINGS_INTERVAL_S;
	settings_window_init(&o->window);
	o->audit_log_max_mb = SETTINGS_AUDIT_LOG_MAX_MB;
	o->audit_log_keep = SETTINGS_AUDIT_LOG_KEEP;
	o->max_depth = SETTINGS_MAX_DEPTH;
	o->control_interval_s = SETTINGS_CONTROL_INTERVAL_S;
	o->cpu_budget_pct = SETTINGS_CPU_BUDGET_PCT;
	o->liveness_timeout_s = SETTINGS_LIVENESS_TIMEOUT_S;
	o->unwind = SETTINGS_UNWIND_AUTO;
	o->unwind_table_mb = SETTINGS_UNWIND_TABLE_MB;
	o->off_cpu_min_us = SETTINGS_OFFCPU_MIN_US;
	o->off_cpu_prob_pct = SETTINGS_OFFCPU_PROBABILITY_PCT;
	o->user = SETTINGS_USER;
	o->restart_floor_ms = SETTINGS_RESTART_BACKOFF_MS;
	o->restart_cap_ms = SETTINGS_RESTART_CAP_MS;
	status_socket_default_dir(o->run_dir, sizeof(o->run_dir));
	o->max_sample_rate_path = SETTINGS_MAX_SAMPLE_RATE_PATH;
	o->default_config_path = CONFIG_FILE_DEFAULT;
	o->otlp_queue_mb = SETTINGS_OTLP_QUEUE_BYTES / 1048576.0;
	otlp_settings_init(&o->otlp);
}

/* The keys of the configuration file, from the table itself. */
static void options_usage_keys(FILE *out)
{
	struct option_spec specs[SUPERVISOR_OPTIONS_MAX_SPECS];
	struct supervisor_options *o = calloc(1, sizeof(*o));
	size_t i, n, col = 2;
	int pass;

	if (o == NULL)
		return;
	supervisor_options_defaults(o);
	n = supervisor_options_specs(o, specs);
	fprintf(out, "\nConfiguration file: one KEY = VALUE a line, # comments; KEY is a long\n"
		     "option's name, VALUE as on the command line (true/false for a switch).\n"
		     "SIGHUP (systemctl reload lowprof) reads it again and applies the first\n"
		     "group; the second needs a restart of lowprof. otlp-header is not a key:\n"
		     "header values do not belong in a world-readable file.\n");
	for (pass = 0; pass < 2; pass++) {
		fprintf(out, "%s", pass == 0 ? "Applied on reload:\n " : "\nNeed a restart:\n ");
		col = 1;
		for (i = 0; i < n; i++) {
			if ((specs[i].flags & OPTION_CLI_ONLY) ||
			    config_reload_applies(specs[i].name) != (pass == 0))
				continue;
			if (col + strlen(specs[i].name) + 1 > 78) {
				fprintf(out, "\n ");
				col = 1;
			}
			col += (size_t)fprintf(out, " %s", specs[i].name);
		}
	}
	fprintf(out, "\n");
	free(o);
}

void supervisor_options_usage(FILE *out)
{
	fprintf(out,
		"Usage: lowprof [OPTION]...\n"
		"  or:  lowprof [OPTION]... -- COMMAND [ARG]...\n"
		"Profile the on-CPU user and kernel stacks of every process on this host,\n"
		"within a CPU budget, and write a flame graph, pprof and folded stacks.\n"
		"With a COMMAND: run it (as you, once sampling runs) and profile it and the\n"
		"processes it starts, nothing else, until it exits (its status is said;\n"
		"lowprof's own is below). Under sudo, `-- runuser -u \"$SUDO_USER\" -- COMMAND`\n"
		"runs it as the user who ran sudo.\n"
		"\n"
		"      --config FILE       read settings from FILE (default %s\n"
		"                          when it exists); the command line wins\n"
		"  -d, --duration SECONDS  stop after SECONDS (default: until SIGINT/SIGTERM)\n"
		"  -o, --output DIR        write the profile into DIR (default %s,\n"
		"                          created if missing)\n"
		"  -F, --frequency HZ      samples per second per CPU (default %u; at most the\n"
		"                          kernel's perf_event_max_sample_rate)\n"
		"  -p, --pid PID           profile only this process; repeat for more\n"
		"                          (default: every process); stops once all exited\n"
		"      --ringbuf-kb N      BPF ring buffer size in KiB, a power of two\n"
		"                          (default %u)\n"
		"      --interval SECONDS  rewrite the output files this often (default %u;\n"
		"                          at rest, up to 6 intervals apart)\n"
		"      --window SECONDS    the output files cover the last SECONDS (default %u;\n"
		"                          a shorter run: all of it)\n"
		"      --max-stacks N      distinct stacks per window (default %u); past it a\n"
		"                          process's new stacks count as its [other stacks]\n"
		"      --archive           also keep each interval's pprof as its own file,\n"
		"                          profile-TIME.pb.gz, removed oldest first past\n"
		"      --archive-max-age SECONDS (default %u) or --archive-max-mb N (default %u)\n"
		"      --max-depth N       deepest user stack recorded, 1-%d (default %u)\n"
		"      --unwind MODE       user stacks: dwarf (.eh_frame tables, works without\n"
		"                          frame pointers), fp (frame pointers), or auto:\n"
		"                          dwarf while the host is healthy (default auto)\n"
		"      --unwind-table-mb N kernel memory for unwind tables (default %u)\n"
		"      --user NAME         run the exporter, controller and unwinder as NAME\n"
		"                          (default %s); the output directory is made\n"
		"                          writable by its group\n"
		"      --controller-user NAME, --unwinder-user NAME\n"
		"                          run that component as NAME instead (default:\n"
		"                          --user): one user each keeps a compromised one\n"
		"                          from signalling the others or writing the outputs\n"
		"      --cpu-budget PCT    most of the host's CPU the agent may use, BPF time\n"
		"                          included (default %g; %g switches the guard off)\n"
		"      --control-interval SECONDS\n"
		"                          how often the throttle decides (default %u)\n"
		"      --no-throttle       keep -F and the unwinding fixed whatever the load\n"
		"                          (for comparisons; the in-kernel budget guard stays)\n"
		"      --off-cpu           also profile time off CPU (blocked, sleeping):\n"
		"                          offcpu.folded, offcpu.svg, offcpu.pb.gz\n"
		"      --off-cpu-min-us US blocked periods shorter than US are not recorded\n"
		"                          (default 1000)\n"
		"      --off-cpu-probability PCT\n"
		"                          share of context switches whose stack is taken at\n"
		"                          start (default 100); the controller lowers it to\n"
		"                          stay within --cpu-budget\n"
		"      --run-dir DIR       where the status socket lives (default %s\n"
		"                          for root); `lowprof status` looks there\n"
		"      --liveness-timeout SECONDS\n"
		"                          restart a component silent this long (default %u)\n"
		"      --restart-backoff MS, --restart-backoff-max MS\n"
		"                          a dead component is restarted after MS (default %u),\n"
		"                          doubling per death up to the max (default %u);\n"
		"                          more than 10 deaths in 5 minutes: reported failed\n"
		"      --otlp-endpoint URL send each interval's profile to an OTLP/HTTP\n"
		"                          collector (http:// or https://; %s\n"
		"                          is appended when the URL has no path)\n"
		"      --otlp-compression gzip|none  request body compression (default gzip)\n"
		"      --otlp-header NAME=VALUE      extra request header (repeatable)\n"
		"      --otlp-headers-file FILE      headers from FILE, one NAME=VALUE a line, kept\n"
		"                          out of every command line (owner root or you,\n"
		"                          not group/world-writable): for secrets\n"
		"      --otlp-ca FILE      PEM CA bundle that verifies the collector (https)\n"
		"      --otlp-client-cert FILE, --otlp-client-key FILE\n"
		"                          client certificate and key for mutual TLS\n"
		"      --otlp-queue-mb N   bound of the delivery queue in MiB (default %u;\n"
		"                          decimals allowed); the oldest profile is dropped\n"
		"      --audit-log PATH    the loader's audit log, JSON lines, appended\n"
		"                          (default OUTPUT/audit.log; `lowprof audit PATH` reads it\n"
		"                          and its rotated files); SIGHUP reopens it (logrotate)\n"
		"      --audit-log-max-mb N, --audit-log-keep N\n"
		"                          rotate it past N MiB (default %u) to PATH.1 .. PATH.N\n"
		"                          (default %u kept, the oldest removed)\n"
		"      --kernel-addresses  keep raw kernel addresses in the outputs (they\n"
		"                          show where the kernel lies: KASLR)\n"
		"      --seccomp-log       seccomp filters log forbidden calls instead of\n"
		"                          killing (diagnosis only; docs/SECURITY.md)\n"
		"  -v, --verbose           more diagnostics on stderr\n"
		"  -h, --help              show this help and exit\n"
		"      --version           show the version and exit\n"
		"\n"
		"\n"
		"Other commands:\n"
		"  lowprof status [--json] [--run-dir DIR]   state of a running lowprof\n"
		"  lowprof restart COMPONENT [--run-dir DIR] respawn a failed component\n"
		"  lowprof audit PATH                        the audit log as a table\n"
		"  lowprof config check FILE                 validate a configuration file\n"
		"  lowprof config show [OPTION]...           the effective settings\n"
		"\n"
		"Output files (in DIR): flamegraph.svg, profile.pb.gz (pprof), profile.folded,\n"
		"summary.json. Needs root, or CAP_BPF + CAP_PERFMON (see README).\n"
		"Exit status: 0 success, 1 runtime failure, 2 bad command line.\n",
		CONFIG_FILE_DEFAULT, SETTINGS_OUTPUT_DIR, SETTINGS_FREQUENCY_HZ, SETTINGS_RINGBUF_KB, SETTINGS_INTERVAL_S,
		SETTINGS_WINDOW_S, SETTINGS_MAX_STACKS, SETTINGS_ARCHIVE_MAX_AGE_S, SETTINGS_ARCHIVE_MAX_MB,
		SETTINGS_MAX_DEPTH_MAX, SETTINGS_MAX_DEPTH, SETTINGS_UNWIND_TABLE_MB, SETTINGS_USER,
		SETTINGS_CPU_BUDGET_PCT, SETTINGS_CPU_BUDGET_MAX_PCT, SETTINGS_CONTROL_INTERVAL_S,
		SETTINGS_RUN_DIR, SETTINGS_LIVENESS_TIMEOUT_S, SETTINGS_RESTART_BACKOFF_MS,
		SETTINGS_RESTART_CAP_MS, SETTINGS_OTLP_PATH, SETTINGS_OTLP_QUEUE_BYTES >> 20,
		SETTINGS_AUDIT_LOG_MAX_MB, SETTINGS_AUDIT_LOG_KEEP);
	options_usage_keys(out);
}

static unsigned options_max_sample_rate(const char *path)
{
	unsigned rate = SETTINGS_MAX_SAMPLE_RATE_FALLBACK; /* the kernel's default */
	char buf[32];
	size_t n;
	FILE *f;

	f = fopen(path, "re");
	if (f == NULL)
		return rate;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (number_parse_uint(buf, 1, UINT_MAX, &rate) != 0)
		rate = SETTINGS_MAX_SAMPLE_RATE_FALLBACK;
	return rate;
}

/* mkdir -p, then prove the directory is writable by creating a file in it. */
static int options_check_output_dir(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX], *p;
	int fd;

	if (strlen(dir) == 0 || strlen(dir) >= sizeof(path) - 32) {
		snprintf(err, errlen, "invalid output directory '%s'", dir);
		return -1;
	}
	strcpy(path, dir);
	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			goto mkdir_failed;
		*p = '/';
	}
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		goto mkdir_failed;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "output directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	{
		int probe = openat(fd, ".lowprof-write-test", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (probe < 0) {
			snprintf(err, errlen, "output directory '%s' is not writable: %s", dir,
				 strerror(errno));
			close(fd);
			return -1;
		}
		close(probe);
		unlinkat(fd, ".lowprof-write-test", 0);
	}
	close(fd);
	return 0;
mkdir_failed:
	snprintf(err, errlen, "cannot create output directory '%s': %s", path, strerror(errno));
	return -1;
}

/* The process (thread group) pid belongs to: pid itself for a process, its
 * process for one of its threads; 0 if unknown. */
static pid_t options_tgid_of(pid_t pid)
{
	char path[64], line[128];
	long tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	}
	fclose(f);
	return tgid > 0 && tgid <= INT_MAX ? (pid_t)tgid : 0;
}

/* Each -p pid into a target: a pid that runs, with its start time; a
 * thread's id (`top -H`, a busy thread) stands for its process: the BPF
 * program samples thread groups, so a thread's own id would match no
 * sample, and a -p run of it would record nothing. */
static int options_resolve_pids(struct supervisor_options *o, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < o->npids; i++) {
		pid_t pid = o->pids[i], tgid;
		struct options_target *t = &o->targets[i];

		if (kill(pid, 0) != 0 && errno != EPERM)
			return errbuf_fail(-ESRCH, err, errlen, "no process with pid %d", (int)pid);
		tgid = options_tgid_of(pid);
		if (tgid > 0 && tgid != pid) {
			fprintf(stderr, "lowprof: %d is a thread of process %d: profiling the process\n",
				(int)pid, (int)tgid);
			pid = tgid;
		}
		t->pid = pid;
		if (proc_stat_field(pid, PROC_STAT_STARTTIME, &t->start) != 0)
			return errbuf_fail(-ESRCH, err, errlen, "no process with pid %d", (int)o->pids[i]);
	}
	o->ntargets = o->npids;
	return 0;
}

static int options_check_run_dir(const struct option_spec *spec, const char *value, void *slot,
				 char *err, size_t errlen)
{
	return value[0] == '/' && strlen(value) < sizeof(((struct supervisor_options *)0)->run_dir) -
							      OPTIONS_RUN_DIR_SPARE
		       ? 0
		       : -EINVAL;
}

static int options_check_audit_log(const struct option_spec *spec, const char *value, void *slot,
				   char *err, size_t errlen)
{
	return value[0] != '\0' && strlen(value) < SETTINGS_AUDIT_LOG_MAX ? 0 : -EINVAL;
}

size_t supervisor_options_specs(struct supervisor_options *o, struct option_spec *specs)
{
	static char run_dir_expect[64];
	const struct option_spec rows[] = {
		{.name = "config", .kind = OPTION_STRING, .dest = &o->config_path,
		 .flags = OPTION_CLI_ONLY},
		{.name = "duration", .short_name = 'd', .kind = OPTION_DOUBLE, .dest = &o->duration_s,
		 .min = 0, .max = SETTINGS_DURATION_MAX_S, .flags = OPTION_ABOVE_MIN,
		 .label = "duration", .expect = "a positive number of seconds"},
		{.name = "output", .short_name = 'o', .kind = OPTION_STRING, .dest = &o->output_dir},
		{.name = "frequency", .short_name = 'F', .kind = OPTION_UINT, .dest = &o->frequency_hz,
		 .min = 1, .max = options_max_sample_rate(o->max_sample_rate_path), .label = "frequency",
		 .unit = " Hz (kernel.perf_event_max_sample_rate)"},
		SETTINGS_OPT_PID(o->pids, &o->npids, NULL),
		SETTINGS_OPT_RINGBUF_KB(&o->ringbuf_kb),
		SETTINGS_OPT_INTERVAL(&o->interval_s),
		SETTINGS_OPT_WINDOW(&o->window),
		SETTINGS_OPT_MAX_DEPTH(&o->max_depth),
		SETTINGS_OPT_CPU_BUDGET(&o->cpu_budget_pct),
		{.name = "control-interval", .kind = OPTION_UINT, .dest = &o->control_interval_s,
		 .min = 1, .max = SETTINGS_CONTROL_INTERVAL_MAX_S, .unit = " seconds"},
		SETTINGS_OPT_NO_THROTTLE(&o->no_throttle),
		{.name = "run-dir", .kind = OPTION_STRING, .dest = &o->run_dir_arg,
		 .expect = run_dir_expect, .check = options_check_run_dir},
		SETTINGS_OPT_LIVENESS_TIMEOUT(&o->liveness_timeout_s),
		SETTINGS_OPT_UNWIND(&o->unwind),
		SETTINGS_OPT_UNWIND_TABLE_MB(&o->unwind_table_mb),
		{.name = "user", .kind = OPTION_STRING, .dest = &o->user},
		{.name = "controller-user", .kind = OPTION_STRING, .dest = &o->controller_user},
		{.name = "unwinder-user", .kind = OPTION_STRING, .dest = &o->unwinder_user},
		{.name = "restart-backoff", .kind = OPTION_UINT, .dest = &o->restart_floor_ms,
		 .min = SETTINGS_RESTART_BACKOFF_MIN_MS, .max = SETTINGS_RESTART_BACKOFF_MAX_MS,
		 .unit = " ms"},
		{.name = "restart-backoff-max", .kind = OPTION_UINT, .dest = &o->restart_cap_ms,
		 .min = SETTINGS_RESTART_BACKOFF_MIN_MS, .max = SETTINGS_RESTART_CAP_MAX_MS,
		 .unit = " ms"},
		SETTINGS_OPT_OTLP(&o->otlp, &o->otlp_enabled, &o->otlp_other),
		/* Decimals allowed: the tests bound the queue to a few KiB. */
		{.name = "otlp-queue-mb", .kind = OPTION_DOUBLE, .dest = &o->otlp_queue_mb,
		 .min = SETTINGS_OTLP_QUEUE_MIN_BYTES / 1048576.0, .max = SETTINGS_OTLP_QUEUE_MAX_MB,
		 .expect = "0.001 (1 KiB) to 4096 MiB", .seen = &o->otlp_other},
		{.name = "seccomp-log", .kind = OPTION_FLAG, .dest = &o->seccomp_log},
		{.name = "kernel-addresses", .kind = OPTION_FLAG, .dest = &o->kernel_addresses},
		{.name = "audit-log", .kind = OPTION_STRING, .dest = &o->audit_log,
		 .check = options_check_audit_log},
		{.name = "audit-log-max-mb", .kind = OPTION_UINT, .dest = &o->audit_log_max_mb,
		 .min = 1, .max = SETTINGS_AUDIT_LOG_MAX_MB_MAX},
		{.name = "audit-log-keep", .kind = OPTION_UINT, .dest = &o->audit_log_keep, .min = 1,
		 .max = SETTINGS_AUDIT_LOG_KEEP_MAX},
		SETTINGS_OPT_OFF_CPU(&o->off_cpu, &o->off_cpu_min_us, &o->off_cpu_prob_pct),
		SETTINGS_OPT_VERBOSE(&o->verbose),
		{.name = "help", .short_name = 'h', .kind = OPTION_FLAG, .dest = &o->show_help,
		 .flags = OPTION_STOP | OPTION_CLI_ONLY},
		{.name = "version", .kind = OPTION_FLAG, .dest = &o->show_version,
		 .flags = OPTION_STOP | OPTION_CLI_ONLY},
		{.name = NULL},
	};
	size_t i, n = sizeof(rows) / sizeof(rows[0]);

	_Static_assert(sizeof(rows) / sizeof(rows[0]) <= SUPERVISOR_OPTIONS_MAX_SPECS,
		       "SUPERVISOR_OPTIONS_MAX_SPECS is too small");
	snprintf(run_dir_expect, sizeof(run_dir_expect), "an absolute path under %zu characters",
		 sizeof(o->run_dir) - OPTIONS_RUN_DIR_SPARE);
	/* Header values are secrets: in a file readable by others, or on a
	 * component's command line (ps shows it), they would leak. */
	for (i = 0; i < n; i++) {
		specs[i] = rows[i];
		if (rows[i].name != NULL && strcmp(rows[i].name, "otlp-header") == 0)
			specs[i].flags |= OPTION_CLI_ONLY;
	}
	return n - 1;
}

void supervisor_options_settle(struct supervisor_options *o)
{
	if (o->run_dir_arg != NULL)
		snprintf(o->run_dir, sizeof(o->run_dir), "%s", o->run_dir_arg);
	o->otlp.queue_max_bytes = (size_t)(o->otlp_queue_mb * 1048576.0);
}

/* The file to read: --config, else the default when it exists, else none. */
static const char *options_config_path(const struct supervisor_options *cli)
{
	if (cli->config_path != NULL)
		return cli->config_path;
	if (cli->default_config_path != NULL && access(cli->default_config_path, F_OK) == 0)
		return cli->default_config_path;
	return NULL;
}

/*
 * The file's lines into o, then the command line's options over them. The
 * command line was parsed once into cli (a copy of o) to learn --config and
 * which repeatable options it gives: those replace the file's list rather
 * than add to it.
 */
static int options_apply_file(struct supervisor_options *o, const struct supervisor_options *cli_in,
			      char *err, size_t errlen)
{
	struct option_spec specs[SUPERVISOR_OPTIONS_MAX_SPECS], cli_specs[SUPERVISOR_OPTIONS_MAX_SPECS];
	struct supervisor_options *cli = (struct supervisor_options *)cli_in;
	const char *path = options_config_path(cli);
	size_t len, i, n;

	if (path == NULL)
		return 0;
	if (config_file_read(path, &o->config_text, &len, err, errlen) != 0)
		return -1;
	o->config_used = path;
	n = supervisor_options_specs(o, specs);
	supervisor_options_specs(cli, cli_specs);
	if (config_file_apply(o->config_text, len, path, specs, err, errlen) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (specs[i].count != NULL && *cli_specs[i].count > 0)
			*specs[i].count = 0;
	}
	return 0;
}

int supervisor_options_load(int argc, char **argv, struct supervisor_options *o, char *err,
			    size_t errlen)
{
	struct option_spec specs[SUPERVISOR_OPTIONS_MAX_SPECS];
	struct supervisor_options *cli;
	struct option_parser parser = {.specs = specs, .first = 1, .hint = " (see lowprof --help)"};
	int rc;

	o->argc = argc;
	o->argv = argv;
	/* The command line alone first: --config, --help, and its own errors before the file's. */
	cli = malloc(sizeof(*cli));
	if (cli == NULL)
		return errbuf_fail(LOWPROF_EXIT_USAGE, err, errlen, "out of memory");
	*cli = *o;
	cli->config_text = NULL;
	supervisor_options_specs(cli, specs);
	rc = option_table_parse(&parser, argc, argv, err, errlen);
	if (rc == OPTION_TABLE_STOP) {
		o->show_help = cli->show_help;
		o->show_version = cli->show_version;
		free(cli);
		return 0;
	}
	if (rc != 0) {
		free(cli);
		return LOWPROF_EXIT_USAGE;
	}
	rc = options_apply_file(o, cli, err, errlen);
	free(cli);
	if (rc != 0)
		return LOWPROF_EXIT_USAGE;
	supervisor_options_specs(o, specs);
	if (option_table_parse(&parser, argc, argv, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	supervisor_options_settle(o);
	if (settings_window_check(&o->window, o->interval_s, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (o->restart_cap_ms < o->restart_floor_ms) {
		errbuf_set(err, errlen, "--restart-backoff-max (%u ms) is below --restart-backoff (%u ms)",
			   o->restart_cap_ms, o->restart_floor_ms);
		return LOWPROF_EXIT_USAGE;
	}
	if (o->otlp_other && !o->otlp_enabled) {
		errbuf_set(err, errlen, "--otlp-* options need --otlp-endpoint");
		return LOWPROF_EXIT_USAGE;
	}
	/* The same checks the exporter's client makes, CA and key files included,
	 * so a bad value stops lowprof here rather than crash-looping the exporter. */
	if (o->otlp_enabled && otlp_settings_load_headers_file(&o->otlp, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (o->otlp_enabled && otlp_settings_validate(&o->otlp, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	return 0;
}

/* Where `--` ends the options: argc's index of it, or argc. */
static int options_command_at(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return i;
	}
	return argc;
}

int supervisor_options_parse(int argc, char **argv, struct supervisor_options *o,
			     char *err, size_t errlen)
{
	int end = options_command_at(argc, argv), rc;

	/* The options end at `--`; a reload parses them again without the command. */
	if (end < argc) {
		if (end + 1 == argc)
			return errbuf_fail(LOWPROF_EXIT_USAGE, err, errlen,
					   "'--' must be followed by a command to profile (see lowprof --help)");
		o->command = argv + end + 1;
	}
	rc = supervisor_options_load(end, argv, o, err, errlen);

	if (rc != 0 || o->show_help || o->show_version)
		return rc;
	if (options_resolve_pids(o, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (options_check_output_dir(o->output_dir, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	return 0;
}

void supervisor_options_print(struct supervisor_options *o, FILE *out)
{
	struct option_spec specs[SUPERVISOR_OPTIONS_MAX_SPECS];
	size_t i, j, n = supervisor_options_specs(o, specs);
	char value[4200];

	fprintf(out, "# effective settings: defaults, then %s, then the command line\n",
		o->config_used != NULL ? o->config_used : "no configuration file");
	for (i = 0; i < n; i++) {
		if (specs[i].flags & OPTION_CLI_ONLY) {
			if (specs[i].count != NULL && *specs[i].count > 0)
				fprintf(out, "# %s: %zu given on the command line (not shown)\n",
					specs[i].name, *specs[i].count);
			continue;
		}
		if (specs[i].count != NULL && *specs[i].count == 0) {
			fprintf(out, "# %s = (none)\n", specs[i].name);
			continue;
		}
		for (j = 0; j < option_table_count(&specs[i]); j++) {
			option_table_format(&specs[i], j, value, sizeof(value));
			/* duration 0: until stopped, which the key cannot say. */
			if ((specs[i].flags & OPTION_ABOVE_MIN) && specs[i].kind == OPTION_DOUBLE &&
			    *(const double *)specs[i].dest <= specs[i].min)
				fprintf(out, "# %s = (none)\n", specs[i].name);
			else if (specs[i].kind == OPTION_STRING && value[0] == '\0')
				fprintf(out, "# %s = (default)\n", specs[i].name);
			else /* the other otlp-* keys need an endpoint */
				fprintf(out, "%s%s = %s\n",
					!o->otlp_enabled && strncmp(specs[i].name, "otlp-", 5) == 0
						? "# " : "",
					specs[i].name, value);
		}
	}
}

void supervisor_options_retire_text(struct supervisor_options *to, struct supervisor_options *from)
{
	struct options_retired *r;

	if (from->config_text != NULL) {
		r = malloc(sizeof(*r));
		if (r == NULL)
			return; /* the text stays with from, whose owner keeps it */
		r->text = from->config_text;
		r->next = from->retired;
		from->retired = r;
		from->config_text = NULL;
	}
	for (r = from->retired; r != NULL && r->next != NULL; r = r->next)
		;
	if (r != NULL) {
		r->next = to->retired;
		to->retired = from->retired;
		from->retired = NULL;
	}
}

void supervisor_options_free(struct supervisor_options *o)
{
	struct options_retired *r;

	free(o->config_text);
	o->config_text = NULL;
	while (o->retired != NULL) {
		r = o->retired;
		o->retired = r->next;
		free(r->text);
		free(r);
	}
}
