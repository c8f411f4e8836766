#define _GNU_SOURCE /* accept4 */
#include "supervisor/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/pid_watch.h"
#include "common/mono_clock.h"
#include "ipc/lowprof_fds.h"
#include "ipc/shm_ring.h"
#include "ipc/unwinder_proto.h"
#include "lowprof_build_config.h"
#include "supervisor/audit_sink.h"
#include "supervisor/bpffs.h"
#include "seccomp/sandbox.h"
#include "settings/option_specs.h"
#include "supervisor/component.h"
#include "supervisor/config_reload.h"
#include "supervisor/harden.h"
#include "supervisor/output_dir.h"
#include "supervisor/privdrop.h"
#include "supervisor/sd_notify.h"
#include "supervisor/status_report.h"
#include "supervisor/status_socket.h"

#define READY_TIMEOUT_MS 30000
#define STOP_TIMEOUT_MS 10000
#define EXPORTER_STOP_TIMEOUT_MS 120000
#define STATUS_REQUEST_TIMEOUT_MS 200
/* Waking this much later than the loop asked to means the supervisor itself stalled. */
#define STALL_MS 2000
/*
 * The longest poll is half the liveness timeout, within these bounds. A host
 * that starves lowprof's processes (all of them, the supervisor too: seen
 * with a CPU-bound workload in another session under the autogroup
 * scheduler, 5-7 s) must be told from a silent component. Two checks do it:
 * the supervisor notices it was not running itself by waking far past the
 * deadline it asked for; and a component past its deadline is judged only
 * after a second look CONFIRM_MS later, which it survives by speaking (it
 * ran again) or by having waited for a CPU most of that time (its run delay
 * in /proc/PID/schedstat: starved, not hung).
 */
#define MIN_SLEEP_MS 500
#define MAX_SLEEP_MS 15000
#define CONFIRM_MS 1000

/* Start order; they are stopped in reverse. */
enum { COMP_EXPORTER, COMP_UNWINDER, COMP_LOADER, COMP_CONTROLLER, COMP_COUNT };

struct supervisor {
	const struct supervisor_options *opt;
	struct command *cmd; /* `-- COMMAND` (pid 0: none) */
	struct supervisor_options *reloaded; /* opt after a reload (ours to free), else NULL */
	char run_id[2 * 16 + 1]; /* --run-id, the same for every exporter of this run */
	struct restart_settings restart;
	struct component comp[COMP_COUNT];
	struct sd_notify sd;
	int shm_fd;
	int checkpoint_fd; /* the exporter's checkpoint (held_file.h), for every exporter of the run */
	int split_fd[2];   /* its window splits: profile.pb.gz's, offcpu.pb.gz's (held likewise) */
	int event_fd;
	int outdir_fd;
	struct audit_sink audit; /* the loader's audit records, into the file: kept across loader restarts */
	int signal_fd;
	int status_fd;
	int control_fd[2];       /* socketpair: [0] the loader's end, [1] the controller's */
	int unwind_fd[2];        /* socketpair: [0] the loader's end, [1] the unwinder's */
	int symbols_fd[2];       /* socketpair: [0] the loader's end, [1] the exporter's */
	int tls_fd[3];           /* --otlp-ca, --otlp-client-cert, --otlp-client-key; -1: none */
	int headers_fd;          /* --otlp-headers-file; -1: none */
	struct privdrop_user user; /* --user: the exporter (and by default the other two) */
	struct privdrop_user controller_user; /* --controller-user, else --user */
	struct privdrop_user unwinder_user;   /* --unwinder-user, else --user */
	char pin_dir[256];       /* this run's bpffs pins; "" when pinning is unavailable */
	int64_t started_ms;
	int64_t sampling_since_ms; /* loader and exporter first ready, -1 before */
	int64_t end_ms;          /* -1: until signalled */
	int64_t next_watchdog_ms;
	int64_t wake_due_ms;     /* when the loop asked poll to return at the latest */
	int64_t polled_ms;       /* when poll last returned (with wake_due_ms: detects our own stalls) */
	int64_t audit_sent_ms;   /* the audit counters last sent to the exporter */
	uint64_t audit_sent[4];  /* ... and what they were */
	/* The processes -p named: once every one has exited, lowprof stops, as
	 * `perf record -p` does (the loader takes each out of the BPF map). */
	struct pid_watch targets;
	size_t *targets_exited; /* pid_watch_exited's output */
	bool sd_ready_sent;
	bool stopping;
	int status;              /* exit status of lowprof */
};

static int64_t supervise_now_ms(void)
{
	return (int64_t)mono_ms();
}

/* argv[0], then what every component takes from the supervisor's options. */
/* Each component's program: the file looked up in LOWPROF_LIBEXECDIR and its
 * argv[0], which is its command name (the loader tells the unwinder's CPU
 * apart by it). */
static const char *const component_programs[COMP_COUNT] = {
	[COMP_EXPORTER] = "lowprof-exporter",
	[COMP_UNWINDER] = UNWINDER_PROGRAM,
	[COMP_LOADER] = "lowprof-loader",
	[COMP_CONTROLLER] = "lowprof-controller",
};

static void supervise_argv_begin(struct supervisor *sv, int id)
{
	struct component *c = &sv->comp[id];

	component_add_arg(c, "%s", component_programs[id]);
	if (sv->opt->seccomp_log)
		component_add_arg(c, SANDBOX_SECCOMP_LOG_ARG);
}

static void supervise_build_components(struct supervisor *sv)
{
	const struct supervisor_options *o = sv->opt;
	struct component *ld = &sv->comp[COMP_LOADER];
	struct component *ex = &sv->comp[COMP_EXPORTER];
	struct component *ct = &sv->comp[COMP_CONTROLLER];
	struct component *uw = &sv->comp[COMP_UNWINDER];
	size_t i;

	supervise_argv_begin(sv, COMP_LOADER);
	/* Only the controller's uid may speak on the control socket, the exporter's on
	 * the symbol socket. */
	component_add_arg(ld, "--controller-uid=%u", (unsigned)sv->controller_user.uid);
	component_add_arg(ld, "--exporter-uid=%u", (unsigned)sv->user.uid);
	component_add_arg(ld, "--frequency=%u", o->frequency_hz);
	component_add_arg(ld, "--ringbuf-kb=%u", o->ringbuf_kb);
	component_add_arg(ld, "--max-depth=%u", o->max_depth);
	component_add_arg(ld, "--cpu-budget=%g", o->cpu_budget_pct);
	component_add_arg(ld, "--control-interval=%u", o->control_interval_s);
	component_add_arg(ld, "--liveness-timeout=%u", o->liveness_timeout_s);
	component_add_arg(ld, "--interval=%u", o->interval_s);
	component_add_arg(ld, "--unwind=%s", settings_unwind_names[o->unwind]);
	component_add_arg(ld, "--unwind-table-mb=%u", o->unwind_table_mb);
	if (o->verbose)
		component_add_arg(ld, "--verbose");
	if (sv->pin_dir[0] != '\0')
		component_add_arg(ld, "--pin-dir=%s", sv->pin_dir);
	if (o->no_throttle)
		component_add_arg(ld, "--no-throttle");
	if (o->off_cpu) {
		component_add_arg(ld, "--off-cpu");
		component_add_arg(ld, "--off-cpu-min-us=%u", o->off_cpu_min_us);
		component_add_arg(ld, "--off-cpu-probability=%g", o->off_cpu_prob_pct);
	}
	for (i = 0; i < o->ntargets; i++) {
		component_add_arg(ld, "--pid=%d", (int)o->targets[i].pid);
		component_add_arg(ld, "--pid-start=%llu", o->targets[i].start);
	}
	if (o->follow_pid != 0)
		component_add_arg(ld, "--follow-pid=%d", (int)o->follow_pid);
	component_add_fd(ld, sv->shm_fd, LOWPROF_FD_SHM);
	component_add_fd(ld, sv->event_fd, LOWPROF_FD_EVENT);
	component_add_fd(ld, sv->control_fd[0], LOWPROF_FD_CONTROL);
	component_add_fd(ld, sv->unwind_fd[0], LOWPROF_FD_UNWIND);
	component_add_fd(ld, sv->symbols_fd[0], LOWPROF_FD_SYMBOLS);
	if (sv->audit.loader_end >= 0)
		component_add_fd(ld, sv->audit.loader_end, LOWPROF_FD_AUDIT);

	/* ELF and CFI parsing of untrusted binaries: no capabilities, not root. It sleeps
	 * in recvmsg between requests, so it sends no liveness pings. */
	supervise_argv_begin(sv, COMP_UNWINDER);
	component_add_fd(uw, sv->unwind_fd[1], LOWPROF_FD_UNWIND);
	uw->run_as = &sv->unwinder_user;
	uw->pings = false;

	supervise_argv_begin(sv, COMP_CONTROLLER);
	component_add_arg(ct, "--frequency=%u", o->frequency_hz);
	component_add_arg(ct, "--cpu-budget=%g", o->cpu_budget_pct);
	component_add_arg(ct, "--control-interval=%u", o->control_interval_s);
	component_add_arg(ct, "--liveness-timeout=%u", o->liveness_timeout_s);
	component_add_arg(ct, "--max-depth=%u", o->max_depth);
	if (o->verbose)
		component_add_arg(ct, "--verbose");
	if (o->no_throttle)
		component_add_arg(ct, "--no-throttle");
	/* The user's probability is the controller's ceiling, like -F. */
	if (o->off_cpu) {
		component_add_arg(ct, "--off-cpu");
		component_add_arg(ct, "--off-cpu-probability=%g", o->off_cpu_prob_pct);
	}
	component_add_fd(ct, sv->control_fd[1], LOWPROF_FD_CONTROL);
	ct->run_as = &sv->controller_user;

	supervise_argv_begin(sv, COMP_EXPORTER);
	component_add_arg(ex, "--interval=%u", o->interval_s);
	component_add_arg(ex, "--liveness-timeout=%u", o->liveness_timeout_s);
	component_add_arg(ex, "--window=%u", o->window.window_s);
	component_add_arg(ex, "--max-stacks=%u", o->window.max_stacks);
	if (o->window.archive) {
		component_add_arg(ex, "--archive");
		component_add_arg(ex, "--archive-max-age=%u", o->window.archive_max_age_s);
		component_add_arg(ex, "--archive-max-mb=%u", o->window.archive_max_mb);
	}
	component_add_arg(ex, "--frequency=%u", o->frequency_hz);
	if (o->off_cpu)
		component_add_arg(ex, "--off-cpu");
	component_add_arg(ex, "--output-label=%s", o->output_dir);
	if (o->kernel_addresses)
		component_add_arg(ex, "--kernel-addresses");
	component_add_arg(ex, "--run-id=%s", sv->run_id);
	if (o->otlp_enabled) {
		component_add_arg(ex, "--otlp-endpoint=%s", o->otlp.endpoint);
		component_add_arg(ex, "--otlp-compression=%s",
				  settings_otlp_compression_names[o->otlp.compression]);
		/* Those of --otlp-header only: the file's go as an fd, out of argv. */
		for (i = 0; i < o->otlp.nheaders - o->otlp.nheaders_from_file; i++)
			component_add_arg(ex, "--otlp-header=%s", o->otlp.headers[i]);
		if (sv->headers_fd >= 0)
			component_add_arg(ex, "--otlp-headers-file=/dev/fd/%d", LOWPROF_FD_OTLP_HEADERS);
		/* Opened here, as root: --user may not be able to read them. */
		if (sv->tls_fd[0] >= 0)
			component_add_arg(ex, "--otlp-ca=/dev/fd/%d", LOWPROF_FD_TLS_CA);
		if (sv->tls_fd[1] >= 0)
			component_add_arg(ex, "--otlp-client-cert=/dev/fd/%d", LOWPROF_FD_TLS_CERT);
		if (sv->tls_fd[2] >= 0)
			component_add_arg(ex, "--otlp-client-key=/dev/fd/%d", LOWPROF_FD_TLS_KEY);
		component_add_arg(ex, "--otlp-queue-bytes=%zu", o->otlp.queue_max_bytes);
	}
	component_add_fd(ex, sv->shm_fd, LOWPROF_FD_SHM);
	component_add_fd(ex, sv->event_fd, LOWPROF_FD_EVENT);
	component_add_fd(ex, sv->outdir_fd, LOWPROF_FD_OUTDIR);
	component_add_fd(ex, sv->checkpoint_fd, LOWPROF_FD_CHECKPOINT);
	component_add_fd(ex, sv->split_fd[0], LOWPROF_FD_WINDOW_SPLIT);
	component_add_fd(ex, sv->split_fd[1], LOWPROF_FD_OFFCPU_WINDOW_SPLIT);
	component_add_fd(ex, sv->symbols_fd[1], LOWPROF_FD_SYMBOLS);
	for (i = 0; i < 3; i++) {
		if (sv->tls_fd[i] >= 0)
			component_add_fd(ex, sv->tls_fd[i], LOWPROF_FD_TLS_CA + (int)i);
	}
	if (sv->headers_fd >= 0)
		component_add_fd(ex, sv->headers_fd, LOWPROF_FD_OTLP_HEADERS);
	/* No capabilities, not root: it gets maps, files and kallsyms from the loader. */
	ex->run_as = &sv->user;
}

/* New each run, the same for every exporter of this run: a restarted exporter
 * reloads the profile its predecessor wrote, a fresh run does not. */
static void supervise_draw_run_id(struct supervisor *sv)
{
	unsigned char run_id[16];
	size_t i;

	memset(run_id, 0, sizeof(run_id));
	if (getrandom(run_id, sizeof(run_id), 0) != (ssize_t)sizeof(run_id)) {
		uint64_t t = (uint64_t)supervise_now_ms() ^ ((uint64_t)getpid() << 32);

		memcpy(run_id, &t, sizeof(t));
	}
	for (i = 0; i < sizeof(run_id); i++)
		snprintf(&sv->run_id[2 * i], 3, "%02x", run_id[i]);
}

/* The TLS files, opened once for every exporter of the run. */
static int supervise_open_tls(struct supervisor *sv)
{
	const char *paths[3] = {sv->opt->otlp.ca_file, sv->opt->otlp.client_cert,
				sv->opt->otlp.client_key};
	static const char *const opts[3] = {"--otlp-ca", "--otlp-client-cert", "--otlp-client-key"};
	int i;

	char err[256];

	sv->headers_fd = -1;
	if (sv->opt->otlp_enabled && sv->opt->otlp.headers_file != NULL) {
		sv->headers_fd = open(sv->opt->otlp.headers_file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		/* Checked again on what is handed on: it may have changed since the options. */
		if (sv->headers_fd < 0 ||
		    otlp_settings_check_headers_file(sv->headers_fd, sv->opt->otlp.headers_file, err,
						     sizeof(err)) != 0) {
			log_error("%s", sv->headers_fd < 0 ? strerror(errno) : err);
			return -1;
		}
	}
	for (i = 0; i < 3; i++) {
		sv->tls_fd[i] = -1;
		if (!sv->opt->otlp_enabled || paths[i] == NULL)
			continue;
		sv->tls_fd[i] = open(paths[i], O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (sv->tls_fd[i] < 0) {
			log_error("%s %s: %s", opts[i], paths[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The audit log: opened here, as root, so every loader sends its records to
 * the same file without the path (supervisor/audit_sink.h), and the file can
 * be rotated and reopened while the loader runs. */
static int supervise_open_audit(struct supervisor *sv)
{
	char path[4200], err[512];

	if (sv->opt->audit_log != NULL)
		snprintf(path, sizeof(path), "%s", sv->opt->audit_log);
	else
		snprintf(path, sizeof(path), "%s/audit.log", sv->opt->output_dir);
	if (audit_sink_open(&sv->audit, path, (uint64_t)sv->opt->audit_log_max_mb << 20,
			    sv->opt->audit_log_keep, err, sizeof(err)) != 0) {
		log_error("%s", err);
		return -1;
	}
	return 0;
}

/* SIGHUP's part for the audit log: the records sent so far go to the file as
 * it was, then the path is opened anew (logrotate moved the file away). */
static void supervisor_audit_reopen(struct supervisor *sv)
{
	if (audit_sink_reopen(&sv->audit) == 0)
		log_info("SIGHUP: audit log %s reopened", sv->audit.path);
}

/* NAME (or fallback when NAME is NULL) from the user database, for OPTION. */
static int supervise_lookup_user(const char *option, const char *name, const char *fallback,
				 struct privdrop_user *out)
{
	char err[256];

	if (privdrop_lookup(name != NULL ? name : fallback, out, err, sizeof(err)) != 0) {
		log_error("%s: %s", option, err);
		return -1;
	}
	return 0;
}

static int supervise_setup(struct supervisor *sv)
{
	static const char *const names[COMP_COUNT] = {"exporter", "unwinder", "loader", "controller"};
	size_t shm_size = (size_t)sv->opt->ringbuf_kb * 1024u;
	char err[512];
	sigset_t mask;
	int i;

	restart_settings_default(&sv->restart);
	sv->restart.backoff_floor_ms = sv->opt->restart_floor_ms;
	sv->restart.backoff_cap_ms = sv->opt->restart_cap_ms;
	if (supervise_lookup_user("--user", sv->opt->user, sv->opt->user, &sv->user) != 0 ||
	    supervise_lookup_user("--controller-user", sv->opt->controller_user, sv->opt->user,
				  &sv->controller_user) != 0 ||
	    supervise_lookup_user("--unwinder-user", sv->opt->unwinder_user, sv->opt->user,
				  &sv->unwinder_user) != 0)
		return -1;
	for (i = 0; i < COMP_COUNT; i++) {
		component_init(&sv->comp[i], names[i], &sv->restart);
		if (component_find_binary(component_programs[i], LOWPROF_LIBEXECDIR, sv->comp[i].path,
					  sizeof(sv->comp[i].path), err, sizeof(err)) != 0) {
			log_error("%s", err);
			return -1;
		}
	}
	/* The shared ring outlives every component: the supervisor holds the memfd, so a
	 * restarted exporter continues where the last one stopped. At least as large as
	 * the BPF ring, so one full BPF ring fits. */
	if (shm_size < (1u << 20))
		shm_size = 1u << 20;
	if (shm_ring_create(shm_size, &sv->shm_fd, err, sizeof(err)) != 0) {
		log_error("shared memory ring: %s", err);
		return -1;
	}
	/* Held here like the ring: a restarted exporter reads back what the last
	 * one wrote; a new run starts with an empty one. */
	sv->checkpoint_fd = memfd_create("lowprof-checkpoint", MFD_CLOEXEC);
	sv->split_fd[0] = memfd_create("lowprof-window-split", MFD_CLOEXEC);
	sv->split_fd[1] = memfd_create("lowprof-offcpu-window-split", MFD_CLOEXEC);
	if (sv->checkpoint_fd < 0 || sv->split_fd[0] < 0 || sv->split_fd[1] < 0) {
		log_error("memfds for the exporter's checkpoint and window splits: %s", strerror(errno));
		return -1;
	}
	sv->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sv->outdir_fd = open(sv->opt->output_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sv->event_fd < 0 || sv->outdir_fd < 0) {
		log_error("eventfd/output directory: %s", strerror(errno));
		return -1;
	}
	if (output_dir_hand_over(sv->outdir_fd, sv->opt->output_dir, &sv->user, err, sizeof(err)) != 0) {
		log_error("%s", err);
		return -1;
	}
	/* SEQPACKET like the other two sockets: each message is exactly one frame of
	 * ipc/wire.h (its length prefix still checked against the message and the
	 * cap), read by the loader's monitor like the symbol socket. Nothing needs a
	 * stream: frames are small and a controller restart leaves no half-frame
	 * behind. The supervisor keeps both ends so either side can be restarted
	 * onto the same connection. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv->control_fd) != 0) {
		log_error("socketpair: %s", strerror(errno));
		return -1;
	}
	/* Before any controller writes: from now on every byte the loader reads
	 * carries its sender's pid and uid (SCM_CREDENTIALS), which it checks. */
	if (setsockopt(sv->control_fd[0], SOL_SOCKET, SO_PASSCRED, &(int){1}, sizeof(int)) != 0) {
		log_error("SO_PASSCRED: %s", strerror(errno));
		return -1;
	}
	/* SEQPACKET: one request or reply per message, with its fd (ipc/unwinder_proto.h,
	 * ipc/sym_wire.h). The loader checks the exporter's credentials on each request. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv->unwind_fd) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv->symbols_fd) != 0) {
		log_error("socketpair: %s", strerror(errno));
		return -1;
	}
	if (setsockopt(sv->symbols_fd[0], SOL_SOCKET, SO_PASSCRED, &(int){1}, sizeof(int)) != 0) {
		log_error("SO_PASSCRED: %s", strerror(errno));
		return -1;
	}
	if (supervise_open_tls(sv) != 0)
		return -1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sv->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sv->signal_fd < 0) {
		log_error("signalfd: %s", strerror(errno));
		return -1;
	}
	sv->status_fd = status_socket_listen(sv->opt->run_dir, err, sizeof(err));
	if (sv->status_fd < 0) {
		/* Not fatal: profiling works without `lowprof status`. */
		log_warn("%s; `lowprof status` will not see this instance", err);
		sv->status_fd = -1;
	}
	if (bpffs_prepare(sv->pin_dir, sizeof(sv->pin_dir), err, sizeof(err)) != 0) {
		log_warn("%s; a restarted loader will not adopt the running session", err);
		sv->pin_dir[0] = '\0';
	}
	if (sd_notify_open(&sv->sd) != 0)
		log_warn("NOTIFY_SOCKET is set but unusable: no systemd notifications");
	if (supervise_open_audit(sv) != 0)
		return -1;
	supervise_draw_run_id(sv);
	supervise_build_components(sv);
	return 0;
}

static void supervise_send_restarts(struct supervisor *sv)
{
	char msg[128];

	/* The exporter puts these into summary.json. */
	snprintf(msg, sizeof(msg), "restarts loader=%u controller=%u exporter=%u",
		 sv->comp[COMP_LOADER].restart.total_restarts,
		 sv->comp[COMP_CONTROLLER].restart.total_restarts,
		 sv->comp[COMP_EXPORTER].restart.total_restarts);
	component_send(&sv->comp[COMP_EXPORTER], msg);
}

/* The throttle's budget and control interval, for the pacing of the files'
 * writes: a message rather than arguments, so that a reload changing the
 * budget does not restart the exporter. */
static void supervise_send_pace(struct supervisor *sv)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "pace budget_ppm=%u control_ms=%u",
		 (unsigned)(sv->opt->cpu_budget_pct * 10000.0 + 0.5),
		 sv->opt->control_interval_s * 1000u);
	component_send(&sv->comp[COMP_EXPORTER], msg);
}

/* What the audit sink suppressed: records refused (malformed) or not written. */
static uint64_t supervise_audit_suppressed(const struct supervisor *sv)
{
	return sv->audit.refused + sv->audit.failed;
}

static void supervise_audit_counts(const struct supervisor *sv, uint64_t v[4])
{
	v[0] = sv->audit.records;
	v[1] = supervise_audit_suppressed(sv);
	v[2] = sv->audit.rotations;
	v[3] = sv->audit.reopens;
}

/* Counters changed since the last sent (the loop wakes to send them). */
static bool supervise_audit_pending(const struct supervisor *sv)
{
	uint64_t v[4];

	if (sv->audit.sock < 0 || sv->comp[COMP_EXPORTER].pid == 0)
		return false;
	supervise_audit_counts(sv, v);
	return memcmp(v, sv->audit_sent, sizeof(v)) != 0;
}

/* The audit log's counters, for summary.json's "caps": when they changed, at
 * most once a second (or now, to a new exporter). */
static void supervise_send_audit(struct supervisor *sv, int64_t now, bool force)
{
	uint64_t v[4];
	char msg[160];

	if (sv->audit.sock < 0 || sv->comp[COMP_EXPORTER].pid == 0)
		return;
	supervise_audit_counts(sv, v);
	if (!force && (now - sv->audit_sent_ms < 1000 || memcmp(v, sv->audit_sent, sizeof(v)) == 0))
		return;
	snprintf(msg, sizeof(msg), "audit records=%u suppressed=%u rotations=%u reopens=%u",
		 (unsigned)v[0], (unsigned)v[1], (unsigned)v[2], (unsigned)v[3]);
	component_send(&sv->comp[COMP_EXPORTER], msg);
	memcpy(sv->audit_sent, v, sizeof(v));
	sv->audit_sent_ms = now;
}

static void supervise_start(struct supervisor *sv, int idx, int64_t now)
{
	struct component *c = &sv->comp[idx];
	int rc = component_spawn(c, now);

	if (rc != 0) {
		log_error("starting %s: %s", c->name, strerror(-rc));
		c->exit_status = LOWPROF_EXIT_FAILURE << 8;
		snprintf(c->last_exit, sizeof(c->last_exit), "could not start: %s", strerror(-rc));
		if (restart_policy_died(&c->restart, &sv->restart, now, false) == RESTART_FAILED)
			c->state = COMPONENT_FAILED;
		else
			c->state = COMPONENT_BACKOFF;
		return;
	}
	log_debug("started %s (pid %d)", c->name, (int)c->pid);
}

/* A component died: decide whether and when it comes back. */
static void supervise_on_death(struct supervisor *sv, int idx, int status, int64_t now)
{
	struct component *c = &sv->comp[idx];
	bool permanent = WIFEXITED(status) && WEXITSTATUS(status) == LOWPROF_EXIT_CONFIG;
	enum restart_verdict v;

	c->pid = 0;
	c->exit_status = status;
	component_describe_exit(status, c->last_exit, sizeof(c->last_exit));
	if (c->kill_reason_liveness)
		snprintf(c->last_exit, sizeof(c->last_exit), "missed its liveness deadline (killed)");
	if (sv->stopping)
		return;
	if (c->reloading) {
		/* Stopped by a reload: back at once with its new command line, no death counted. */
		c->reloading = false;
		log_info("%s restarted with the new settings", c->name);
		supervise_start(sv, idx, now);
		return;
	}
	v = restart_policy_died(&c->restart, &sv->restart, now, permanent);
	if (v == RESTART_FAILED) {
		c->state = COMPONENT_FAILED;
		log_error("%s %s: %s; not restarting it (`lowprof restart %s` tries again)", c->name,
			  c->last_exit, permanent ? "configuration error" : "crash loop", c->name);
		return;
	}
	c->state = COMPONENT_BACKOFF;
	log_warn("%s %s; restarting it in %lld ms", c->name, c->last_exit,
		 (long long)(c->restart.restart_at_ms - now));
	supervise_send_restarts(sv);
}

static void supervise_reap(struct supervisor *sv, int64_t now)
{
	int status, i;
	pid_t pid;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0)
			break;
		if (command_take_status(sv->cmd, pid, status))
			continue;
		for (i = 0; i < COMP_COUNT; i++) {
			if (sv->comp[i].pid == pid) {
				component_read_messages(&sv->comp[i], now);
				supervise_on_death(sv, i, status, now);
			}
		}
	}
}

static void supervise_on_ready(struct supervisor *sv, int idx, int64_t now);

/* Whether c is past its deadline and waits for its second look. */
static bool supervise_suspect(const struct component *c)
{
	return c->suspect_ms > c->last_message_ms;
}

/* When c's silence is next judged (ms, supervise_now_ms), or -1: no deadline. */
static int64_t supervise_liveness_deadline(const struct supervisor *sv, const struct component *c)
{
	if (c->pid == 0 || c->kill_reason_liveness || !c->pings)
		return -1;
	if (supervise_suspect(c))
		return c->suspect_ms + CONFIRM_MS;
	return c->last_message_ms + (c->state == COMPONENT_STARTING
					     ? READY_TIMEOUT_MS
					     : (int64_t)sv->opt->liveness_timeout_s * 1000);
}

/* The longest poll: half the liveness timeout (see MIN_SLEEP_MS). */
static int64_t supervise_max_sleep_ms(const struct supervisor *sv)
{
	int64_t ms = (int64_t)sv->opt->liveness_timeout_s * 1000 / 2;

	return ms < MIN_SLEEP_MS ? MIN_SLEEP_MS : ms > MAX_SLEEP_MS ? MAX_SLEEP_MS : ms;
}

/*
 * c is past its deadline and we read nothing from it: the first time, look
 * again CONFIRM_MS later; then kill it unless it spent most of that time
 * waiting for a CPU (a starved host: its next ping is coming). A stopped or
 * hung component does not wait for a CPU; a spinning one runs. True: kill.
 */
static bool supervise_confirm_silent(struct component *c, int64_t now)
{
	int64_t delay = component_run_delay_ns(c);

	if (!supervise_suspect(c)) {
		c->suspect_ms = now;
		c->suspect_delay_ns = delay;
		log_debug("%s (pid %d) silent for %lld ms: looking again in %d ms", c->name,
			  (int)c->pid, (long long)(now - c->last_message_ms), CONFIRM_MS);
		return false;
	}
	if (delay >= 0 && c->suspect_delay_ns >= 0 &&
	    (delay - c->suspect_delay_ns) / 1000000 * 2 > now - c->suspect_ms) {
		log_warn("%s (pid %d) silent for %lld ms, but it waited for a CPU for %lld of the "
			 "last %lld ms: starved, not killed",
			 c->name, (int)c->pid, (long long)(now - c->last_message_ms),
			 (long long)((delay - c->suspect_delay_ns) / 1000000),
			 (long long)(now - c->suspect_ms));
		c->suspect_ms = now;
		c->suspect_delay_ns = delay;
		return false;
	}
	return true;
}

/* Liveness: a running component says something at least every 0.4 timeout (ipc/notify.h). */
static void supervise_check_liveness(struct supervisor *sv, int64_t now)
{
	int64_t deadline, late;
	int i;

	/*
	 * Waking much later than asked means the supervisor itself did not run
	 * (a VM paused by its host, a starved machine): its components probably
	 * did not either, and must not be blamed for silence nobody was there
	 * to hear. Their deadline starts again.
	 */
	late = sv->wake_due_ms > 0 ? sv->polled_ms - sv->wake_due_ms : 0;
	if (now - sv->polled_ms > late)
		late = now - sv->polled_ms; /* held up after poll returned */
	if (late > STALL_MS) {
		log_warn("the supervisor did not run for %lld ms: liveness deadlines restart",
			 (long long)late);
		for (i = 0; i < COMP_COUNT; i++)
			sv->comp[i].last_message_ms = now;
	}

	for (i = 0; i < COMP_COUNT; i++) {
		struct component *c = &sv->comp[i];

		deadline = supervise_liveness_deadline(sv, c);
		if (deadline < 0 || now < deadline)
			continue;
		/* What it sent meanwhile and we have not read yet proves it alive:
		 * silence is judged on the socket, not on how busy we were. */
		if (component_read_messages(c, now))
			supervise_on_ready(sv, i, now);
		deadline = supervise_liveness_deadline(sv, c);
		if (deadline < 0 || now < deadline || !supervise_confirm_silent(c, now))
			continue;
		log_warn("%s (pid %d) silent for %lld ms: killing it", c->name, (int)c->pid,
			 (long long)(now - c->last_message_ms));
		c->kill_reason_liveness = true;
		kill(c->pid, SIGKILL);
	}
}

static void supervise_restart_due(struct supervisor *sv, int64_t now)
{
	int i;

	for (i = 0; i < COMP_COUNT; i++) {
		if (sv->comp[i].state == COMPONENT_BACKOFF && now >= sv->comp[i].restart.restart_at_ms)
			supervise_start(sv, i, now);
	}
}

static void supervise_status_line(struct supervisor *sv, char *buf, size_t len)
{
	int running = 0, i;

	for (i = 0; i < COMP_COUNT; i++)
		running += sv->comp[i].state == COMPONENT_RUNNING;
	snprintf(buf, len, "STATUS=%s: %d of %d components running",
		 sv->sampling_since_ms >= 0 ? "profiling" : "starting", running, COMP_COUNT);
}

static void supervise_answer_status(struct supervisor *sv, int64_t now)
{
	static char reply[STATUS_REPLY_MAX];
	struct status_meta meta;
	char req[STATUS_REQUEST_MAX];
	uid_t uid;
	int fd, n, i;

	for (;;) {
		fd = accept4(sv->status_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			return;
		n = -1;
		if (status_socket_read_request(fd, STATUS_REQUEST_TIMEOUT_MS, req, sizeof(req), &uid) == 0) {
			meta.pid = getpid();
			meta.now_ms = now;
			meta.started_ms = sv->started_ms;
			meta.output_dir = sv->opt->output_dir;
			meta.version = LOWPROF_VERSION;
			meta.audit = sv->audit.sock >= 0 ? &sv->audit : NULL;
			if (strcmp(req, "status-json") == 0) {
				n = status_report_json(&meta, sv->comp, COMP_COUNT, reply, sizeof(reply));
			} else if (strcmp(req, "status") == 0) {
				n = status_report_text(&meta, sv->comp, COMP_COUNT, reply, sizeof(reply));
			} else if (strncmp(req, "restart ", 8) == 0) {
				n = snprintf(reply, sizeof(reply), "error: no component named '%s'\n", req + 8);
				for (i = 0; i < COMP_COUNT; i++) {
					struct component *c = &sv->comp[i];

					if (strcmp(req + 8, c->name) != 0)
						continue;
					if (uid != 0 && uid != geteuid()) {
						n = snprintf(reply, sizeof(reply), "error: permission denied\n");
					} else if (c->state != COMPONENT_FAILED) {
						n = snprintf(reply, sizeof(reply), "%s is %s, not failed: nothing to do\n",
							     c->name, component_state_name(c->state));
					} else {
						restart_policy_reset(&c->restart, &sv->restart);
						log_info("%s: restart requested", c->name);
						supervise_start(sv, i, now);
						n = snprintf(reply, sizeof(reply), "restarting %s\n", c->name);
					}
				}
			} else {
				n = snprintf(reply, sizeof(reply), "error: unknown request\n");
			}
		}
		if (n > 0)
			send(fd, reply, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
	}
}

/* Whether two command lines differ. */
static bool supervise_args_differ(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return true;
	for (i = 0; i < na; i++) {
		if (strcmp(a[i], b[i]) != 0)
			return true;
	}
	return false;
}

/*
 * SIGHUP: the settings read again (supervisor/config_reload.c). Each
 * component whose command line changed is stopped and started again with the
 * new one; a bad file changes nothing.
 */
static void supervise_reload_config(struct supervisor *sv)
{
	char *old_argv[COMP_COUNT][COMPONENT_MAX_ARGS];
	size_t old_argc[COMP_COUNT];
	struct supervisor_options *next;
	char err[512];
	bool changed;
	int i;

	/* The structure main handed us is not const in fact: its texts move to the next. */
	next = config_reload_load((struct supervisor_options *)sv->opt, &changed, err, sizeof(err));
	if (next == NULL) {
		log_error("reload: %s; the running settings stay", err);
		return;
	}
	if (sv->reloaded != NULL) {
		supervisor_options_free(sv->reloaded);
		free(sv->reloaded);
	}
	sv->reloaded = next;
	sv->opt = next;
	log_init("lowprof", next->verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	if (!changed) {
		log_info("reload: %s read; nothing to apply",
			 next->config_used != NULL ? next->config_used : "no configuration file");
		return;
	}
	for (i = 0; i < 3; i++) {
		if (sv->tls_fd[i] >= 0)
			close(sv->tls_fd[i]);
	}
	if (supervise_open_tls(sv) != 0)
		log_error("reload: the exporter starts without the TLS file above");
	for (i = 0; i < COMP_COUNT; i++) {
		old_argc[i] = sv->comp[i].argc;
		memcpy(old_argv[i], sv->comp[i].argv, old_argc[i] * sizeof(char *));
		sv->comp[i].argc = 0;
		sv->comp[i].nfds = 0;
	}
	supervise_build_components(sv);
	for (i = 0; i < COMP_COUNT; i++) {
		struct component *c = &sv->comp[i];

		if (supervise_args_differ(old_argv[i], old_argc[i], c->argv, c->argc) && c->pid != 0) {
			log_info("reload: restarting the %s with the new settings", c->name);
			c->reloading = true;
			/* The exporter ends its files as at any stop, but the run goes
			 * on: no end-of-run report from it. */
			if (i == COMP_EXPORTER)
				component_send(c, "restart");
			kill(c->pid, SIGTERM);
		}
		while (old_argc[i] > 0)
			free(old_argv[i][--old_argc[i]]);
	}
}

static void supervise_handle_signals(struct supervisor *sv, int64_t now)
{
	struct signalfd_siginfo si;

	while (read(sv->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM) {
			log_info("%s: stopping", strsignal((int)si.ssi_signo));
			sv->stopping = true;
		} else if (si.ssi_signo == SIGHUP) {
			supervisor_audit_reopen(sv);
			supervise_reload_config(sv);
			/* The exporter writes every file now (paced writes may be
			 * behind), within the budget as it now is. */
			if (sv->comp[COMP_EXPORTER].pid != 0 && !sv->comp[COMP_EXPORTER].reloading) {
				supervise_send_pace(sv);
				kill(sv->comp[COMP_EXPORTER].pid, SIGHUP);
			}
		}
	}
	supervise_reap(sv, now);
}

static void supervise_on_ready(struct supervisor *sv, int idx, int64_t now)
{
	char line[160];
	int i;

	log_debug("%s ready", sv->comp[idx].name);
	if (idx == COMP_EXPORTER) {
		supervise_send_restarts(sv);
		supervise_send_pace(sv);
		supervise_send_audit(sv, now, true);
	}
	if (sv->sampling_since_ms < 0 && sv->comp[COMP_LOADER].state == COMPONENT_RUNNING &&
	    sv->comp[COMP_EXPORTER].state == COMPONENT_RUNNING) {
		sv->sampling_since_ms = now;
		if (sv->opt->duration_s > 0) {
			/* The duration counts from the moment sampling started. */
			sv->end_ms = now + (int64_t)llround(sv->opt->duration_s * 1000.0);
			log_info("profiling for %g s; output in %s", sv->opt->duration_s, sv->opt->output_dir);
		} else {
			log_info("profiling until interrupted (Ctrl-C); output in %s", sv->opt->output_dir);
		}
		/* Its first instructions are sampled: it runs only now. */
		command_release(sv->cmd);
	}
	for (i = 0; i < COMP_COUNT; i++) {
		if (sv->comp[i].state != COMPONENT_RUNNING)
			return;
	}
	if (!sv->sd_ready_sent) {
		supervise_status_line(sv, line, sizeof(line));
		sd_notify_send(&sv->sd, "READY=1");
		sd_notify_send(&sv->sd, line);
		sv->sd_ready_sent = true;
	}
}

/* The earliest moment something needs doing, as a poll timeout. */
static int supervise_timeout(const struct supervisor *sv, int64_t now)
{
	int64_t next = now + supervise_max_sleep_ms(sv), deadline;
	int i;

	/* The earliest liveness deadline, if nearer. */
	for (i = 0; i < COMP_COUNT; i++) {
		deadline = supervise_liveness_deadline(sv, &sv->comp[i]);
		if (deadline >= 0 && deadline < next)
			next = deadline;
	}

	if (sv->sampling_since_ms < 0 && sv->started_ms + READY_TIMEOUT_MS + 1 < next)
		next = sv->started_ms + READY_TIMEOUT_MS + 1;
	if (sv->end_ms >= 0 && sv->end_ms < next)
		next = sv->end_ms;
	if (sv->sd.watchdog_ms > 0 && sv->next_watchdog_ms < next)
		next = sv->next_watchdog_ms;
	for (i = 0; i < COMP_COUNT; i++) {
		if (sv->comp[i].state == COMPONENT_BACKOFF && sv->comp[i].restart.restart_at_ms < next)
			next = sv->comp[i].restart.restart_at_ms;
	}
	/* Audit counters held back by the once-a-second limit. */
	if (supervise_audit_pending(sv) && sv->audit_sent_ms + 1000 < next)
		next = sv->audit_sent_ms + 1000;
	return next <= now ? 0 : (int)(next - now);
}

/*
 * What the running components sent since the last pass: one poll that does
 * not wait tells whose socket holds anything, and only those are read. The
 * loop passes at least every half liveness timeout and at each `lowprof
 * status` request, which so sees every line sent before it; a line's time is
 * when it is read, so a silent component is judged between one and one and a
 * half timeouts after its last line (plus CONFIRM_MS).
 */
static void supervise_read_running(struct supervisor *sv, int64_t now)
{
	struct pollfd pfd[COMP_COUNT];
	int idx[COMP_COUNT], n = 0, i;

	for (i = 0; i < COMP_COUNT; i++) {
		if (sv->comp[i].state != COMPONENT_RUNNING || sv->comp[i].notify_fd < 0)
			continue;
		pfd[n].fd = sv->comp[i].notify_fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		idx[n++] = i;
	}
	if (n == 0 || poll(pfd, (nfds_t)n, 0) <= 0)
		return;
	for (i = 0; i < n; i++) {
		if (pfd[i].revents != 0 && component_read_messages(&sv->comp[idx[i]], now))
			supervise_on_ready(sv, idx[i], now);
	}
}

/* Have all the processes given with -p, and the command, exited (said
 * once)? Never without either. */
static bool supervise_targets_gone(struct supervisor *sv)
{
	char how[96];

	if (sv->targets.n == 0 || sv->targets.live == 0)
		return false;
	(void)pid_watch_exited(&sv->targets, sv->targets_exited);
	if (sv->targets.live > 0)
		return false;
	if (sv->cmd->pid == 0) {
		log_info("every process given with -p has exited: stopping");
		return true;
	}
	command_describe_end(sv->cmd, how, sizeof(how));
	log_info("the command %s%s: stopping", how,
		 sv->targets.n > 1 ? ", and every process given with -p has exited" : "");
	return true;
}

static bool supervise_essential_failed(const struct supervisor *sv)
{
	const struct component *ld = &sv->comp[COMP_LOADER];

	/* Without a loader that ever worked there is nothing to profile: stop. */
	return ld->state == COMPONENT_FAILED && !ld->ever_ready;
}

static void supervise_loop(struct supervisor *sv)
{
	struct pollfd pfd[4 + COMP_COUNT];
	int64_t now;
	int i, timeout;

	while (!sv->stopping) {
		now = supervise_now_ms();
		if (sv->end_ms >= 0 && now >= sv->end_ms)
			return;
		if (supervise_targets_gone(sv))
			return;
		if (sv->sampling_since_ms < 0 && now - sv->started_ms > READY_TIMEOUT_MS) {
			log_error("the loader and exporter were not ready after %d s", READY_TIMEOUT_MS / 1000);
			sv->status = LOWPROF_EXIT_FAILURE;
			return;
		}
		if (supervise_essential_failed(sv)) {
			log_error("the loader cannot start: stopping");
			sv->status = LOWPROF_EXIT_FAILURE;
			return;
		}
		pfd[0].fd = sv->signal_fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = sv->status_fd;
		pfd[1].events = POLLIN;
		for (i = 0; i < COMP_COUNT; i++) {
			pfd[2 + i].fd = sv->comp[i].notify_fd;
			/* A running component's lines (pings, state) are read at each
			 * pass (supervise_read_running), not as they come: they do not
			 * each wake us. A hang-up still does. */
			pfd[2 + i].events = sv->comp[i].state == COMPONENT_RUNNING ? 0 : POLLIN;
		}
		pfd[2 + COMP_COUNT].fd = sv->audit.sock;
		pfd[2 + COMP_COUNT].events = POLLIN;
		/* A -p target's exit wakes us (supervise_targets_gone at the top). */
		pfd[3 + COMP_COUNT].fd = pid_watch_fd(&sv->targets);
		pfd[3 + COMP_COUNT].events = POLLIN;
		timeout = supervise_timeout(sv, now);
		sv->wake_due_ms = now + timeout;
		if (poll(pfd, 4 + COMP_COUNT, timeout) < 0 && errno != EINTR) {
			log_error("poll: %s", strerror(errno));
			sv->status = LOWPROF_EXIT_FAILURE;
			return;
		}
		now = supervise_now_ms();
		sv->polled_ms = now;
		for (i = 0; i < COMP_COUNT; i++) {
			if (pfd[2 + i].revents && component_read_messages(&sv->comp[i], now))
				supervise_on_ready(sv, i, now);
		}
		supervise_read_running(sv, now);
		if (pfd[0].revents & POLLIN)
			supervise_handle_signals(sv, now);
		if (pfd[1].revents & POLLIN)
			supervise_answer_status(sv, now);
		if (pfd[2 + COMP_COUNT].revents & POLLIN)
			audit_sink_drain(&sv->audit);
		supervise_send_audit(sv, now, false);
		supervise_check_liveness(sv, now);
		supervise_restart_due(sv, now);
		if (sv->sd.watchdog_ms > 0 && now >= sv->next_watchdog_ms) {
			sd_notify_send(&sv->sd, "WATCHDOG=1");
			sv->next_watchdog_ms = now + sv->sd.watchdog_ms;
		}
	}
}

static void supervise_stop_component(struct supervisor *sv, int idx, int timeout_ms)
{
	struct component *c = &sv->comp[idx];
	int64_t deadline;

	if (c->pid == 0)
		return;
	kill(c->pid, SIGTERM);
	deadline = supervise_now_ms() + timeout_ms;
	while (c->pid != 0 && supervise_now_ms() < deadline) {
		struct timespec pause = {0, 20 * 1000000L};

		supervise_reap(sv, supervise_now_ms());
		if (c->pid != 0)
			nanosleep(&pause, NULL);
	}
	if (c->pid != 0) {
		log_warn("%s did not stop within %d s: killing it", c->name, timeout_ms / 1000);
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &c->exit_status, 0);
		c->pid = 0;
	}
	c->state = COMPONENT_STOPPED;
	/* Dying of the SIGTERM we sent is a clean stop for a program without a handler. */
	if (WIFSIGNALED(c->exit_status) && WTERMSIG(c->exit_status) == SIGTERM)
		return;
	if (!WIFEXITED(c->exit_status) || WEXITSTATUS(c->exit_status) != 0) {
		char why[128];

		component_describe_exit(c->exit_status, why, sizeof(why));
		log_error("%s %s while stopping", c->name, why);
		sv->status = LOWPROF_EXIT_FAILURE;
	}
}

int supervise_run(const struct supervisor_options *opt, struct command *cmd)
{
	struct supervisor sv;
	char path[4200];
	int i;

	memset(&sv, 0, sizeof(sv));
	sv.opt = opt;
	sv.cmd = cmd;
	sv.shm_fd = sv.checkpoint_fd = sv.event_fd = sv.outdir_fd = sv.signal_fd = sv.status_fd = -1;
	sv.split_fd[0] = sv.split_fd[1] = -1;
	sv.audit.file_fd = sv.audit.sock = sv.audit.loader_end = -1;
	sv.tls_fd[0] = sv.tls_fd[1] = sv.tls_fd[2] = -1;
	sv.headers_fd = -1;
	sv.control_fd[0] = sv.control_fd[1] = -1;
	sv.unwind_fd[0] = sv.unwind_fd[1] = -1;
	sv.symbols_fd[0] = sv.symbols_fd[1] = -1;
	sv.sampling_since_ms = -1;
	sv.end_ms = -1;
	sv.started_ms = supervise_now_ms();
	if (supervise_setup(&sv) != 0)
		return LOWPROF_EXIT_FAILURE;
	/* Held before the sandbox, which has no pidfd_open: the processes
	 * resolved at the command line's check, by pid and start time. */
	sv.targets_exited = calloc(opt->ntargets + 1, sizeof(*sv.targets_exited));
	if (sv.targets_exited == NULL || pid_watch_init(&sv.targets, opt->ntargets) != 0) {
		log_error("out of memory");
		return LOWPROF_EXIT_FAILURE;
	}
	for (i = 0; i < (int)opt->ntargets; i++)
		pid_watch_add(&sv.targets, opt->targets[i].pid, opt->targets[i].start);
	if (supervise_harden(opt->seccomp_log, path, sizeof(path)) != 0) {
		log_error("sandboxing the supervisor: %s", path);
		return LOWPROF_EXIT_CONFIG;
	}
	sv.next_watchdog_ms = sv.started_ms;
	/* The exporter first, so the ring has a reader before samples arrive. */
	for (i = 0; i < COMP_COUNT; i++)
		supervise_start(&sv, i, sv.started_ms);
	supervise_loop(&sv);

	sv.stopping = true;
	sd_notify_send(&sv.sd, "STOPPING=1");
	/* Controller first (it would only see the loader vanish), then the loader, whose
	 * final drain lands in the ring, then the exporter, which writes it out. */
	supervise_stop_component(&sv, COMP_CONTROLLER, STOP_TIMEOUT_MS);
	supervise_stop_component(&sv, COMP_LOADER, STOP_TIMEOUT_MS);
	audit_sink_close(&sv.audit); /* the stopped loader's last records first */
	supervise_stop_component(&sv, COMP_UNWINDER, STOP_TIMEOUT_MS);
	supervise_stop_component(&sv, COMP_EXPORTER, EXPORTER_STOP_TIMEOUT_MS);
	for (i = 0; i < COMP_COUNT; i++)
		component_free_args(&sv.comp[i]);
	pid_watch_close(&sv.targets);
	free(sv.targets_exited);
	/* Not released (lowprof failed first): it exits without running. */
	command_close(cmd);
	if (sv.reloaded != NULL) {
		supervisor_options_free(sv.reloaded);
		free(sv.reloaded);
	}
	if (sv.status_fd >= 0) {
		snprintf(path, sizeof(path), "%s/%s", opt->run_dir, STATUS_SOCKET_NAME);
		unlink(path);
	}
	sd_notify_close(&sv.sd);
	return sv.status;
}
