#include "supervisor/options.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/lowprof.h"
#include "common/number_parse.h"
#include "ipc/lowprof_fds.h"
#include "supervisor/status_socket.h"

#define ONE_YEAR_S (366.0 * 24 * 3600)

void supervisor_options_defaults(struct supervisor_options *o)
{
	memset(o, 0, sizeof(*o));
	o->output_dir = "./lowprof-out";
	o->frequency_hz = 19;
	o->ringbuf_kb = 8192;
	o->interval_s = 10;
	o->max_depth = 64;
	o->control_interval_s = 1;
	o->cpu_budget_pct = 1.5;
	o->liveness_timeout_s = 5;
	o->unwind = "auto";
	o->unwind_table_mb = 48;
	o->user = "nobody";
	o->restart_floor_ms = 200;
	o->restart_cap_ms = 30000;
	status_socket_default_dir(o->run_dir, sizeof(o->run_dir));
	o->max_sample_rate_path = "/proc/sys/kernel/perf_event_max_sample_rate";
	otlp_client_settings_init(&o->otlp);
}

void supervisor_options_usage(FILE *out)
{
	fprintf(out,
		"Usage: lowprof [OPTION]...\n"
		"Profile the on-CPU user and kernel stacks of every process on this host,\n"
		"within a CPU budget, and write a flame graph, pprof and folded stacks.\n"
		"\n"
		"  -d, --duration SECONDS  stop after SECONDS (default: until SIGINT/SIGTERM)\n"
		"  -o, --output DIR        write the profile into DIR (default ./lowprof-out,\n"
		"                          created if missing)\n"
		"  -F, --frequency HZ      samples per second per CPU (default 19; at most the\n"
		"                          kernel's perf_event_max_sample_rate)\n"
		"  -p, --pid PID           profile only this process; repeat for more\n"
		"                          (default: every process)\n"
		"      --ringbuf-kb N      BPF ring buffer size in KiB, a power of two\n"
		"                          (default 8192)\n"
		"      --interval SECONDS  rewrite the output files this often (default 10)\n"
		"      --max-depth N       deepest user stack recorded, 1-%d (default 64)\n"
		"      --unwind MODE       user stacks: dwarf (.eh_frame tables, works without\n"
		"                          frame pointers), fp (frame pointers), or auto:\n"
		"                          dwarf while the host is healthy (default auto)\n"
		"      --unwind-table-mb N kernel memory for unwind tables (default 48)\n"
		"      --user NAME         run the exporter, controller and unwinder as NAME\n"
		"                          (default nobody); the output directory is made\n"
		"                          writable by its group\n"
		"      --cpu-budget PCT    most of the host's CPU the agent may use, BPF time\n"
		"                          included (default 1.5; 100 switches the guard off)\n"
		"      --control-interval SECONDS\n"
		"                          how often the throttle decides (default 1)\n"
		"      --no-throttle       keep -F and the unwinding fixed whatever the load\n"
		"                          (for comparisons; the in-kernel budget guard stays)\n"
		"      --run-dir DIR       where the status socket lives (default /run/lowprof\n"
		"                          for root); `lowprof status` looks there\n"
		"      --liveness-timeout SECONDS\n"
		"                          restart a component silent this long (default 5)\n"
		"      --restart-backoff MS, --restart-backoff-max MS\n"
		"                          a dead component is restarted after MS (default 200),\n"
		"                          doubling per death up to the max (default 30000);\n"
		"                          more than 10 deaths in 5 minutes: reported failed\n"
		"      --otlp-endpoint URL send each interval's profile to an OTLP/HTTP\n"
		"                          collector (http:// or https://; /v1development/profiles\n"
		"                          is appended when the URL has no path)\n"
		"      --otlp-compression gzip|none  request body compression (default gzip)\n"
		"      --otlp-header NAME=VALUE      extra request header (repeatable)\n"
		"      --otlp-ca FILE      PEM CA bundle that verifies the collector (https)\n"
		"      --otlp-client-cert FILE, --otlp-client-key FILE\n"
		"                          client certificate and key for mutual TLS\n"
		"      --otlp-queue-mb N   bound of the delivery queue in MiB (default 16;\n"
		"                          decimals allowed); the oldest profile is dropped\n"
		"      --audit-log PATH    the loader's audit log, JSON lines, appended\n"
		"                          (default OUTPUT/audit.log; `lowprof audit PATH` reads it)\n"
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
		LOWPROF_MAX_USER_DEPTH);
}

static unsigned options_max_sample_rate(const char *path)
{
	unsigned rate = 100000; /* the kernel's default when the file is unreadable */
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
		rate = 100000;
	return rate;
}

static int options_pid_exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
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

int supervisor_options_parse(int argc, char **argv, struct supervisor_options *o,
			     char *err, size_t errlen)
{
	enum { OPT_RINGBUF = 256, OPT_INTERVAL, OPT_VERSION, OPT_MAX_DEPTH, OPT_CPU_BUDGET,
	       OPT_CONTROL_INTERVAL, OPT_NO_THROTTLE, OPT_RUN_DIR, OPT_LIVENESS, OPT_UNWIND,
	       OPT_UNWIND_MB, OPT_USER, OPT_RESTART_FLOOR, OPT_RESTART_CAP, OPT_OTLP_ENDPOINT,
	       OPT_OTLP_COMPRESSION, OPT_OTLP_HEADER, OPT_OTLP_CA, OPT_OTLP_CERT, OPT_OTLP_KEY,
	       OPT_OTLP_QUEUE, OPT_SECCOMP_LOG, OPT_AUDIT_LOG };
	static const struct option longopts[] = {
		{"duration", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"frequency", required_argument, NULL, 'F'},
		{"pid", required_argument, NULL, 'p'},
		{"ringbuf-kb", required_argument, NULL, OPT_RINGBUF},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
		{"cpu-budget", required_argument, NULL, OPT_CPU_BUDGET},
		{"control-interval", required_argument, NULL, OPT_CONTROL_INTERVAL},
		{"no-throttle", no_argument, NULL, OPT_NO_THROTTLE},
		{"run-dir", required_argument, NULL, OPT_RUN_DIR},
		{"liveness-timeout", required_argument, NULL, OPT_LIVENESS},
		{"unwind", required_argument, NULL, OPT_UNWIND},
		{"unwind-table-mb", required_argument, NULL, OPT_UNWIND_MB},
		{"user", required_argument, NULL, OPT_USER},
		{"restart-backoff", required_argument, NULL, OPT_RESTART_FLOOR},
		{"restart-backoff-max", required_argument, NULL, OPT_RESTART_CAP},
		{"otlp-endpoint", required_argument, NULL, OPT_OTLP_ENDPOINT},
		{"otlp-compression", required_argument, NULL, OPT_OTLP_COMPRESSION},
		{"otlp-header", required_argument, NULL, OPT_OTLP_HEADER},
		{"otlp-ca", required_argument, NULL, OPT_OTLP_CA},
		{"otlp-client-cert", required_argument, NULL, OPT_OTLP_CERT},
		{"otlp-client-key", required_argument, NULL, OPT_OTLP_KEY},
		{"otlp-queue-mb", required_argument, NULL, OPT_OTLP_QUEUE},
		{"seccomp-log", no_argument, NULL, OPT_SECCOMP_LOG},
		{"audit-log", required_argument, NULL, OPT_AUDIT_LOG},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	unsigned max_rate, v;
	double queue_mb;
	bool otlp_other = false;
	const char *opt_name;
	int c, idx;

	optind = 1;
	opterr = 0;
	for (;;) {
		idx = -1;
		c = getopt_long(argc, argv, ":d:o:F:p:vh", longopts, &idx);
		if (c == -1)
			break;
		opt_name = argv[optind - 1];
		switch (c) {
		case 'd':
			if (number_parse_seconds(optarg, ONE_YEAR_S, &o->duration_s) != 0 ||
			    o->duration_s <= 0) {
				snprintf(err, errlen, "invalid duration '%s': expected a positive number of seconds",
					 optarg);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case 'o':
			o->output_dir = optarg;
			break;
		case 'F':
			max_rate = options_max_sample_rate(o->max_sample_rate_path);
			if (number_parse_uint(optarg, 1, max_rate, &o->frequency_hz) != 0) {
				snprintf(err, errlen,
					 "invalid frequency '%s': expected 1 to %u Hz (kernel.perf_event_max_sample_rate)",
					 optarg, max_rate);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case 'p':
			if (number_parse_uint(optarg, 1, 0x7fffffff, &v) != 0) {
				snprintf(err, errlen, "invalid pid '%s'", optarg);
				return LOWPROF_EXIT_USAGE;
			}
			if (!options_pid_exists((pid_t)v)) {
				snprintf(err, errlen, "no process with pid %u", v);
				return LOWPROF_EXIT_USAGE;
			}
			if (o->npids == SUPERVISOR_MAX_PIDS) {
				snprintf(err, errlen, "too many --pid options (at most %d)", SUPERVISOR_MAX_PIDS);
				return LOWPROF_EXIT_USAGE;
			}
			o->pids[o->npids++] = (pid_t)v;
			break;
		case OPT_RINGBUF:
			if (number_parse_uint(optarg, 4, 1u << 20, &o->ringbuf_kb) != 0 ||
			    (o->ringbuf_kb & (o->ringbuf_kb - 1)) != 0) {
				snprintf(err, errlen,
					 "invalid --ringbuf-kb '%s': expected a power of two from 4 to 1048576",
					 optarg);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case OPT_INTERVAL:
			if (number_parse_uint(optarg, 1, 86400, &o->interval_s) != 0) {
				snprintf(err, errlen, "invalid --interval '%s': expected 1 to 86400 seconds",
					 optarg);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case OPT_MAX_DEPTH:
			if (number_parse_uint(optarg, 1, LOWPROF_MAX_USER_DEPTH, &o->max_depth) != 0) {
				snprintf(err, errlen, "invalid --max-depth '%s': expected 1 to %d", optarg,
					 LOWPROF_MAX_USER_DEPTH);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case OPT_CPU_BUDGET:
			if (number_parse_seconds(optarg, 100.0, &o->cpu_budget_pct) != 0 ||
			    o->cpu_budget_pct < 0.01) {
				snprintf(err, errlen, "invalid --cpu-budget '%s': expected a percentage from 0.01 to 100",
					 optarg);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case OPT_CONTROL_INTERVAL:
			if (number_parse_uint(optarg, 1, 3600, &o->control_interval_s) != 0) {
				snprintf(err, errlen,
					 "invalid --control-interval '%s': expected 1 to 3600 seconds", optarg);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case OPT_NO_THROTTLE:
			o->no_throttle = true;
			break;
		case OPT_RUN_DIR:
			if (optarg[0] != '/' || strlen(optarg) >= sizeof(o->run_dir) - 16) {
				snprintf(err, errlen, "invalid --run-dir '%s': expected an absolute path under %zu characters",
					 optarg, sizeof(o->run_dir) - 16);
				return LOWPROF_EXIT_USAGE;
			}
			snprintf(o->run_dir, sizeof(o->run_dir), "%s", optarg);
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "dwarf") != 0 &&
			    strcmp(optarg, "fp") != 0) {
				snprintf(err, errlen, "invalid --unwind '%s': expected dwarf, fp or auto", optarg);
				return LOWPROF_EXIT_USAGE;
			}
			o->unwind = optarg;
			break;
		case OPT_UNWIND_MB:
			if (number_parse_uint(optarg, 1, 2048, &o->unwind_table_mb) != 0) {
				snprintf(err, errlen, "invalid --unwind-table-mb '%s': expected 1 to 2048", optarg);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case OPT_RESTART_FLOOR:
			if (number_parse_uint(optarg, 10, 600000, &o->restart_floor_ms) != 0) {
				snprintf(err, errlen, "invalid --restart-backoff '%s': expected 10 to 600000 ms",
					 optarg);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case OPT_RESTART_CAP:
			if (number_parse_uint(optarg, 10, 3600000, &o->restart_cap_ms) != 0) {
				snprintf(err, errlen,
					 "invalid --restart-backoff-max '%s': expected 10 to 3600000 ms", optarg);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case OPT_USER:
			o->user = optarg;
			break;
		case OPT_SECCOMP_LOG:
			o->seccomp_log = true;
			break;
		case OPT_AUDIT_LOG:
			if (optarg[0] == '\0' || strlen(optarg) >= 4000) {
				snprintf(err, errlen, "invalid --audit-log '%s'", optarg);
				return LOWPROF_EXIT_USAGE;
			}
			o->audit_log = optarg;
			break;
		case OPT_LIVENESS:
			if (number_parse_uint(optarg, 1, 3600, &o->liveness_timeout_s) != 0) {
				snprintf(err, errlen, "invalid --liveness-timeout '%s': expected 1 to 3600 seconds",
					 optarg);
				return LOWPROF_EXIT_USAGE;
			}
			break;
		case OPT_OTLP_ENDPOINT:
			o->otlp.endpoint = optarg;
			o->otlp_enabled = true;
			break;
		case OPT_OTLP_COMPRESSION:
			if (otlp_client_parse_compression(optarg, &o->otlp.compression, err, errlen) != 0)
				return LOWPROF_EXIT_USAGE;
			otlp_other = true;
			break;
		case OPT_OTLP_HEADER:
			if (o->otlp.nheaders == OTLP_CLIENT_MAX_HEADERS) {
				snprintf(err, errlen, "too many --otlp-header options (at most %d)",
					 OTLP_CLIENT_MAX_HEADERS);
				return LOWPROF_EXIT_USAGE;
			}
			o->otlp.headers[o->otlp.nheaders++] = optarg;
			otlp_other = true;
			break;
		case OPT_OTLP_CA:
			o->otlp.ca_file = optarg;
			otlp_other = true;
			break;
		case OPT_OTLP_CERT:
			o->otlp.client_cert = optarg;
			otlp_other = true;
			break;
		case OPT_OTLP_KEY:
			o->otlp.client_key = optarg;
			otlp_other = true;
			break;
		case OPT_OTLP_QUEUE:
			/* Decimals allowed: the tests bound the queue to a few KiB. */
			if (number_parse_seconds(optarg, 4096.0, &queue_mb) != 0 ||
			    queue_mb * 1048576.0 < 1024.0) {
				snprintf(err, errlen,
					 "invalid --otlp-queue-mb '%s': expected 0.001 (1 KiB) to 4096 MiB", optarg);
				return LOWPROF_EXIT_USAGE;
			}
			o->otlp.queue_max_bytes = (size_t)(queue_mb * 1048576.0);
			otlp_other = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			o->show_help = true;
			return 0;
		case OPT_VERSION:
			o->show_version = true;
			return 0;
		case ':':
			snprintf(err, errlen, "option '%s' needs a value", opt_name);
			return LOWPROF_EXIT_USAGE;
		default:
			snprintf(err, errlen, "unknown option '%s' (see lowprof --help)", opt_name);
			return LOWPROF_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see lowprof --help)", argv[optind]);
		return LOWPROF_EXIT_USAGE;
	}
	if (o->restart_cap_ms < o->restart_floor_ms) {
		snprintf(err, errlen, "--restart-backoff-max (%u ms) is below --restart-backoff (%u ms)",
			 o->restart_cap_ms, o->restart_floor_ms);
		return LOWPROF_EXIT_USAGE;
	}
	if (otlp_other && !o->otlp_enabled) {
		snprintf(err, errlen, "--otlp-* options need --otlp-endpoint");
		return LOWPROF_EXIT_USAGE;
	}
	/* The same checks the exporter's client makes, CA and key files included,
	 * so a bad value stops lowprof here rather than crash-looping the exporter. */
	if (o->otlp_enabled && otlp_client_settings_validate(&o->otlp, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (options_check_output_dir(o->output_dir, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	return 0;
}
