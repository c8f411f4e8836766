/*
 * Every default and every accepted range of lowprof's settings, written once.
 * The supervisor's command line (supervisor/options.c) and each component's
 * (loader, controller, exporter) read them from here, so that the value the
 * user gets by default, the range `lowprof --help` documents and the range a
 * component accepts from the supervisor cannot drift apart.
 *
 * The throttle's tiers (frequency, depth and unwinding per tier) are not
 * settings of the command line; they live with the throttle.
 */
#ifndef LOWPROF_SETTINGS_DEFAULTS_H
#define LOWPROF_SETTINGS_DEFAULTS_H

#include <linux/types.h> /* before bpf/lowprof.h */

#include "bpf/lowprof.h"

/* -F: samples per second per CPU. The supervisor bounds it by the kernel's
 * perf_event_max_sample_rate (read from the path below, this when unreadable);
 * the components, started with a value already checked, by a fixed ceiling. */
#define SETTINGS_FREQUENCY_HZ 19
#define SETTINGS_FREQUENCY_MAX_HZ 1000000
#define SETTINGS_MAX_SAMPLE_RATE_PATH "/proc/sys/kernel/perf_event_max_sample_rate"
#define SETTINGS_MAX_SAMPLE_RATE_FALLBACK 100000

/* -d: 0 runs until signalled; at most a year. */
#define SETTINGS_DURATION_MAX_S (366.0 * 24 * 3600)

#define SETTINGS_OUTPUT_DIR "./lowprof-out"

/* -p: processes profiled (none: every process). Pids and the loader's peer
 * uids are positive and at most SETTINGS_ID_MAX. */
#define SETTINGS_MAX_PIDS 1024
#define SETTINGS_ID_MAX 0x7fffffff

/* --ringbuf-kb: the BPF ring buffer, a power of two. The loader drains it
 * past a quarter full (the watermark wake-up), so its size only has to hold
 * what arrives while no loader runs (a restart): at 99 Hz a sample of ~600
 * bytes per CPU, 2 MiB is ~17 s of a 2-CPU host (~0.5 s of 64 CPUs: raise it
 * there). It was 8 MiB, a quarter of lowprof's memory at defaults. */
#define SETTINGS_RINGBUF_KB 2048
#define SETTINGS_RINGBUF_KB_MIN 4
#define SETTINGS_RINGBUF_KB_MAX (1u << 20)

/* --interval: the output files are rewritten this often. */
#define SETTINGS_INTERVAL_S 10
#define SETTINGS_INTERVAL_MAX_S 86400

/* --window: the output files cover the last this many seconds (a run shorter
 * than the window: the whole run). At most this many intervals per window. */
#define SETTINGS_WINDOW_S 600
#define SETTINGS_WINDOW_MAX_S (7u * 86400)
#define SETTINGS_WINDOW_MAX_INTERVALS 4096

/* --max-stacks: distinct stacks per window (and per interval); past it a
 * process's new stacks fold into its "[other stacks]". */
#define SETTINGS_MAX_STACKS 20000
#define SETTINGS_MAX_STACKS_MIN 16
#define SETTINGS_MAX_STACKS_MAX 10000000

/* --archive: each interval's pprof kept as its own file, removed oldest first
 * past --archive-max-age or --archive-max-mb. */
#define SETTINGS_ARCHIVE_MAX_AGE_S 86400
#define SETTINGS_ARCHIVE_MAX_AGE_MAX_S (366u * 86400)
#define SETTINGS_ARCHIVE_MAX_MB 256
#define SETTINGS_ARCHIVE_MAX_MB_MAX (1u << 20)

/* --max-depth: the deepest user stack recorded. */
#define SETTINGS_MAX_DEPTH 64
#define SETTINGS_MAX_DEPTH_MAX LOWPROF_MAX_USER_DEPTH

/* --control-interval: the throttle decides this often. Whole seconds on the
 * user's command line; the components accept fractions down to the minimum. */
#define SETTINGS_CONTROL_INTERVAL_S 1
#define SETTINGS_CONTROL_INTERVAL_MIN_S 0.1
#define SETTINGS_CONTROL_INTERVAL_MAX_S 3600

/* --cpu-budget: the agent's overhead ceiling, % of the host's CPU (100: no guard). */
#define SETTINGS_CPU_BUDGET_PCT 1.5
#define SETTINGS_CPU_BUDGET_MIN_PCT 0.01
#define SETTINGS_CPU_BUDGET_MAX_PCT 100.0

/* --unwind: the words accepted, in the order of enum settings_unwind. */
enum settings_unwind {
	SETTINGS_UNWIND_AUTO = 0, /* the throttle chooses: DWARF while healthy */
	SETTINGS_UNWIND_DWARF = 1,
	SETTINGS_UNWIND_FP = 2,
};
#define SETTINGS_UNWIND_NAMES {"auto", "dwarf", "fp", NULL}

/* --unwind-table-mb: the tables in use on this host take 8-12 MiB of rows
 * (bench/memory); 16 leaves room and keeps all of lowprof's memory under
 * 40 MiB with the rows full; past it the least recently used tables go. */
#define SETTINGS_UNWIND_TABLE_MB 16
#define SETTINGS_UNWIND_TABLE_MB_MAX 2048

/* --off-cpu-min-us: blocked periods shorter than this are not recorded
 * (a millisecond: the waits worth a look, not the scheduler's churn). */
#define SETTINGS_OFFCPU_MIN_US 1000
#define SETTINGS_OFFCPU_MIN_US_MAX 60000000
/* --off-cpu-probability: the share of switch-outs whose stack is taken at
 * start, in percent; the controller lowers it when off-CPU work is costly. */
#define SETTINGS_OFFCPU_PROBABILITY_PCT 100.0
#define SETTINGS_OFFCPU_PROBABILITY_MIN_PCT 0.0001

/* --user: the unprivileged components run as this user. */
#define SETTINGS_USER "nobody"

/* --run-dir: where the status socket lives when lowprof runs as root (others:
 * $XDG_RUNTIME_DIR/lowprof or /tmp/lowprof-UID). */
#define SETTINGS_RUN_DIR "/run/lowprof"

/* --audit-log-max-mb, --audit-log-keep: past the size, the audit log is
 * rotated to PATH.1 .. PATH.keep (the oldest removed). */
#define SETTINGS_AUDIT_LOG_MAX_MB 16
#define SETTINGS_AUDIT_LOG_MAX_MB_MAX (1u << 20)
#define SETTINGS_AUDIT_LOG_KEEP 4
#define SETTINGS_AUDIT_LOG_KEEP_MAX 99

/* --audit-log: a path at most this long (default: OUTPUT/audit.log). */
#define SETTINGS_AUDIT_LOG_MAX 4000

/* --liveness-timeout: a component silent this long is killed and restarted.
 * The components ping 0.4 of it apart (12 s), on passes their loops make
 * anyway: at rest, their quiet intervals are that long (ipc/throttle.h).
 * 30 s and not less: each of those passes is a wake of the loader, the
 * controller and the exporter, 250-500 us of CPU each on an idle host, and
 * at 15 s they were most of lowprof's cost at rest (docs/BENCHMARKS.md,
 * "Cheaper wakes at rest"); a dead component is seen at once whatever the
 * timeout, a hung one within 1.5 times it (docs/SUPERVISION.md). */
#define SETTINGS_LIVENESS_TIMEOUT_S 30
#define SETTINGS_LIVENESS_TIMEOUT_MAX_S 3600

/* --restart-backoff, --restart-backoff-max: the first restart delay, doubled
 * per death up to the max. */
#define SETTINGS_RESTART_BACKOFF_MS 200
#define SETTINGS_RESTART_BACKOFF_MIN_MS 10
#define SETTINGS_RESTART_BACKOFF_MAX_MS 600000
#define SETTINGS_RESTART_CAP_MS 30000
#define SETTINGS_RESTART_CAP_MAX_MS 3600000

/* The loader's own: the drain period while DWARF tables have work (new
 * processes, exec/exit events), the drain period otherwise (the BPF program
 * also wakes the loader once the ring passes a quarter full), statistics. */
#define SETTINGS_DRAIN_MS 100
#define SETTINGS_IDLE_DRAIN_MS 1000
#define SETTINGS_RINGBUF_WAKEUP_DIVISOR 4
/* While the loader rests (a quiet interval longer than one), this many bytes
 * of samples waiting wake it: a few samples, so that a trickle
 * (throttle_quiet) waits for the rest's end but load coming to a resting
 * host is seen at once. */
#define SETTINGS_RINGBUF_REST_WAKE_BYTES 4096
#define SETTINGS_DRAIN_MAX_MS 10000
#define SETTINGS_STATS_MS 1000
#define SETTINGS_STATS_MIN_MS 10
#define SETTINGS_STATS_MAX_MS 60000

/* --pin-dir: only under bpffs, at most this long. */
#define SETTINGS_PIN_DIR_PREFIX "/sys/fs/bpf/"
#define SETTINGS_PIN_DIR_MAX 200

/* --debug-dir: where Debian's dbgsym packages install debug files; an
 * absolute path at most this long (the broker builds paths under it). */
#define SETTINGS_DEBUG_DIR "/usr/lib/debug"
#define SETTINGS_DEBUG_DIR_MAX 512

/* The exporter's own. */
#define SETTINGS_KALLSYMS_PATH "/proc/kallsyms"
#define SETTINGS_OUTPUT_LABEL "."
/* --run-id: 32 lowercase hex digits, drawn by the supervisor once per run. */
#define SETTINGS_RUN_ID_LEN 32

/* OTLP export (docs/OTLP.md). --otlp-queue-mb: decimals allowed (the tests
 * bound the queue to a few KiB); the exporter gets the bytes. */
#define SETTINGS_OTLP_QUEUE_BYTES (16u << 20)
#define SETTINGS_OTLP_QUEUE_MIN_BYTES 1024
#define SETTINGS_OTLP_QUEUE_MAX_MB 4096.0
#define SETTINGS_OTLP_QUEUE_MAX_BYTES (1ULL << 40)
#define SETTINGS_OTLP_MAX_HEADERS 32
#define SETTINGS_OTLP_PATH "/v1development/profiles"
#define SETTINGS_OTLP_CONNECT_TIMEOUT_MS 5000
#define SETTINGS_OTLP_TIMEOUT_MS 30000
#define SETTINGS_OTLP_BACKOFF_INITIAL_MS 1000
#define SETTINGS_OTLP_BACKOFF_MAX_MS 30000
#define SETTINGS_OTLP_MAX_ELAPSED_MS 300000
/* --otlp-compression: the words accepted, in the order of enum otlp_compression. */
#define SETTINGS_OTLP_COMPRESSION_NAMES {"gzip", "none", NULL}

#endif /* LOWPROF_SETTINGS_DEFAULTS_H */
