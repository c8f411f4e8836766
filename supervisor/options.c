#include "supervisor/options.h"

#include <errno.h>
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
#include "ipc/lowprof_fds.h"
#include "settings/option_specs.h"
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
	o->max_depth = SETTINGS_MAX_DEPTH;
	o->control_interval_s = SETTINGS_CONTROL_INTERVAL_S;
	o->cpu_budget_pct = SETTINGS_CPU_BUDGET_PCT;
	o->liveness_timeout_s = SETTINGS_LIVENESS_TIMEOUT_S;
	o->unwind = SETTINGS_UNWIND_AUTO;
	o->unwind_table_mb = SETTINGS_UNWIND_TABLE_MB;
	o->user = SETTINGS_USER;
	o->restart_floor_ms = SETTINGS_RESTART_BACKOFF_MS;
	o->restart_cap_ms = SETTINGS_RESTART_CAP_MS;
	status_socket_default_dir(o->run_dir, sizeof(o->run_dir));
	o->max_sample_rate_path = SETTINGS_MAX_SAMPLE_RATE_PATH;
	otlp_settings_init(&o->otlp);
}

void supervisor_options_usage(FILE *out)
{
	fprintf(out,
		"Usage: lowprof [OPTION]...\n"
		"Profile the on-CPU user and kernel stacks of every process on this host,\n"
		"within a CPU budget, and write a flame graph, pprof and folded stacks.\n"
		"\n"
		"  -d, --duration SECONDS  stop after SECONDS (default: until SIGINT/SIGTERM)\n"
		"  -o, --output DIR        write the profile into DIR (default %s,\n"
		"                          created if missing)\n"
		"  -F, --frequency HZ      samples per second per CPU (default %u; at most the\n"
		"                          kernel's perf_event_max_sample_rate)\n"
		"  -p, --pid PID           profile only this process; repeat for more\n"
		"                          (default: every process)\n"
		"      --ringbuf-kb N      BPF ring buffer size in KiB, a power of two\n"
		"                          (default %u)\n"
		"      --interval SECONDS  rewrite the output files this often (default %u)\n"
		"      --max-depth N       deepest user stack recorded, 1-%d (default %u)\n"
		"      --unwind MODE       user stacks: dwarf (.eh_frame tables, works without\n"
		"                          frame pointers), fp (frame pointers), or auto:\n"
		"                          dwarf while the host is healthy (default auto)\n"
		"      --unwind-table-mb N kernel memory for unwind tables (default %u)\n"
		"      --user NAME         run the exporter, controller and unwinder as NAME\n"
		"                          (default %s); the output directory is made\n"
		"                          writable by its group\n"
		"      --cpu-budget PCT    most of the host's CPU the agent may use, BPF time\n"
		"                          included (default %g; %g switches the guard off)\n"
		"      --control-interval SECONDS\n"
		"                          how often the throttle decides (default %u)\n"
		"      --no-throttle       keep -F and the unwinding fixed whatever the load\n"
		"                          (for comparisons; the in-kernel budget guard stays)\n"
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
		"                          (default OUTPUT/audit.log; `lowprof audit PATH` reads it)\n"
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
		"\n"
		"Output files (in DIR): flamegraph.svg, profile.pb.gz (pprof), profile.folded,\n"
		"summary.json. Needs root, or CAP_BPF + CAP_PERFMON (see README).\n"
		"Exit status: 0 success, 1 runtime failure, 2 bad command line.\n",
		SETTINGS_OUTPUT_DIR, SETTINGS_FREQUENCY_HZ, SETTINGS_RINGBUF_KB, SETTINGS_INTERVAL_S,
		SETTINGS_MAX_DEPTH_MAX, SETTINGS_MAX_DEPTH, SETTINGS_UNWIND_TABLE_MB, SETTINGS_USER,
		SETTINGS_CPU_BUDGET_PCT, SETTINGS_CPU_BUDGET_MAX_PCT, SETTINGS_CONTROL_INTERVAL_S,
		SETTINGS_RUN_DIR, SETTINGS_LIVENESS_TIMEOUT_S, SETTINGS_RESTART_BACKOFF_MS,
		SETTINGS_RESTART_CAP_MS, SETTINGS_OTLP_PATH, SETTINGS_OTLP_QUEUE_BYTES >> 20);
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

static int options_check_pid(const struct option_spec *spec, const char *value, void *slot,
			     char *err, size_t errlen)
{
	pid_t pid = *(const pid_t *)slot;

	if (kill(pid, 0) != 0 && errno != EPERM)
		return errbuf_fail(-ESRCH, err, errlen, "no process with pid %d", (int)pid);
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

int supervisor_options_parse(int argc, char **argv, struct supervisor_options *o,
			     char *err, size_t errlen)
{
	const char *run_dir = NULL;
	double queue_mb = -1;
	bool otlp_other = false;
	char run_dir_expect[64];
	const struct option_spec specs[] = {
		{.name = "duration", .short_name = 'd', .kind = OPTION_DOUBLE, .dest = &o->duration_s,
		 .min = 0, .max = SETTINGS_DURATION_MAX_S, .flags = OPTION_ABOVE_MIN,
		 .label = "duration", .expect = "a positive number of seconds"},
		{.name = "output", .short_name = 'o', .kind = OPTION_STRING, .dest = &o->output_dir},
		{.name = "frequency", .short_name = 'F', .kind = OPTION_UINT, .dest = &o->frequency_hz,
		 .min = 1, .max = options_max_sample_rate(o->max_sample_rate_path), .label = "frequency",
		 .unit = " Hz (kernel.perf_event_max_sample_rate)"},
		SETTINGS_OPT_PID(o->pids, &o->npids, options_check_pid),
		SETTINGS_OPT_RINGBUF_KB(&o->ringbuf_kb),
		SETTINGS_OPT_INTERVAL(&o->interval_s),
		SETTINGS_OPT_MAX_DEPTH(&o->max_depth),
		SETTINGS_OPT_CPU_BUDGET(&o->cpu_budget_pct),
		{.name = "control-interval", .kind = OPTION_UINT, .dest = &o->control_interval_s,
		 .min = 1, .max = SETTINGS_CONTROL_INTERVAL_MAX_S, .unit = " seconds"},
		SETTINGS_OPT_NO_THROTTLE(&o->no_throttle),
		{.name = "run-dir", .kind = OPTION_STRING, .dest = &run_dir, .expect = run_dir_expect,
		 .check = options_check_run_dir},
		{.name = "liveness-timeout", .kind = OPTION_UINT, .dest = &o->liveness_timeout_s,
		 .min = 1, .max = SETTINGS_LIVENESS_TIMEOUT_MAX_S, .unit = " seconds"},
		SETTINGS_OPT_UNWIND(&o->unwind),
		SETTINGS_OPT_UNWIND_TABLE_MB(&o->unwind_table_mb),
		{.name = "user", .kind = OPTION_STRING, .dest = &o->user},
		{.name = "restart-backoff", .kind = OPTION_UINT, .dest = &o->restart_floor_ms,
		 .min = SETTINGS_RESTART_BACKOFF_MIN_MS, .max = SETTINGS_RESTART_BACKOFF_MAX_MS,
		 .unit = " ms"},
		{.name = "restart-backoff-max", .kind = OPTION_UINT, .dest = &o->restart_cap_ms,
		 .min = SETTINGS_RESTART_BACKOFF_MIN_MS, .max = SETTINGS_RESTART_CAP_MAX_MS,
		 .unit = " ms"},
		SETTINGS_OPT_OTLP(&o->otlp, &o->otlp_enabled, &otlp_other),
		/* Decimals allowed: the tests bound the queue to a few KiB. */
		{.name = "otlp-queue-mb", .kind = OPTION_DOUBLE, .dest = &queue_mb,
		 .min = SETTINGS_OTLP_QUEUE_MIN_BYTES / 1048576.0, .max = SETTINGS_OTLP_QUEUE_MAX_MB,
		 .expect = "0.001 (1 KiB) to 4096 MiB", .seen = &otlp_other},
		{.name = "seccomp-log", .kind = OPTION_FLAG, .dest = &o->seccomp_log},
		{.name = "kernel-addresses", .kind = OPTION_FLAG, .dest = &o->kernel_addresses},
		{.name = "audit-log", .kind = OPTION_STRING, .dest = &o->audit_log,
		 .check = options_check_audit_log},
		{.name = "verbose", .short_name = 'v', .kind = OPTION_FLAG, .dest = &o->verbose},
		{.name = "help", .short_name = 'h', .kind = OPTION_FLAG, .dest = &o->show_help,
		 .flags = OPTION_STOP},
		{.name = "version", .kind = OPTION_FLAG, .dest = &o->show_version, .flags = OPTION_STOP},
		{.name = NULL},
	};
	const struct option_parser parser = {.specs = specs, .first = 1,
					     .hint = " (see lowprof --help)"};
	int rc;

	snprintf(run_dir_expect, sizeof(run_dir_expect), "an absolute path under %zu characters",
		 sizeof(o->run_dir) - OPTIONS_RUN_DIR_SPARE);
	rc = option_table_parse(&parser, argc, argv, err, errlen);
	if (rc == OPTION_TABLE_STOP)
		return 0;
	if (rc != 0)
		return LOWPROF_EXIT_USAGE;
	if (run_dir != NULL)
		snprintf(o->run_dir, sizeof(o->run_dir), "%s", run_dir);
	if (queue_mb >= 0)
		o->otlp.queue_max_bytes = (size_t)(queue_mb * 1048576.0);
	if (o->restart_cap_ms < o->restart_floor_ms) {
		errbuf_set(err, errlen, "--restart-backoff-max (%u ms) is below --restart-backoff (%u ms)",
			   o->restart_cap_ms, o->restart_floor_ms);
		return LOWPROF_EXIT_USAGE;
	}
	if (otlp_other && !o->otlp_enabled) {
		errbuf_set(err, errlen, "--otlp-* options need --otlp-endpoint");
		return LOWPROF_EXIT_USAGE;
	}
	/* The same checks the exporter's client makes, CA and key files included,
	 * so a bad value stops lowprof here rather than crash-looping the exporter. */
	if (o->otlp_enabled && otlp_settings_load_headers_file(&o->otlp, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (o->otlp_enabled && otlp_settings_validate(&o->otlp, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (options_check_output_dir(o->output_dir, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	return 0;
}
