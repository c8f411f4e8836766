/*
 * lowprof-loader: the privileged component. It alone owns the BPF program,
 * its maps and the perf events; it drains the BPF ring buffer on a timer into
 * the shared-memory ring the exporter reads.
 *
 * It also answers the controller on the control socket (control_server.c),
 * applies the throttle it asks for, falls back to the critical tier by itself
 * when the controller goes silent, and forwards one timeline entry per
 * control interval to the exporter.
 *
 * It is the exporter's broker too (symbol_broker.c): the exporter runs
 * without privileges and asks for /proc/PID/maps, mapped binaries, debug
 * files, kallsyms and process details, which the loader checks and opens.
 *
 * Inherited fds (ipc/lowprof_fds.h): NOTIFY, SHM, EVENT, CONTROL when a
 * controller runs (without it, the settings stay fixed), and SYMBOLS when an
 * exporter needs the broker (without it, none runs).
 *
 * main() parses the options, enters the sandbox, then starts, runs and stops
 * the loader (loader/loader_loop.c, loader/loader_control.c).
 */
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/heap_bound.h"
#include "common/log.h"
#include "ipc/lowprof_fds.h"
#include "ipc/notify.h"
#include "loader/audit_log.h"
#include "loader/cpu_uevents.h"
#include "loader/loader.h"
#include "seccomp/sandbox.h"

static int loader_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's debug output is the verifier log and friends: only with -v. */
	if (level == LIBBPF_DEBUG && log_get_level() < LOG_LEVEL_DEBUG)
		return 0;
	/* libbpf's messages already start with "libbpf: ". */
	fputs("lowprof-loader: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/*
 * First thing, before any input: keep only the capabilities the loader needs
 * (docs/SECURITY.md; a missing one is a configuration error naming it), take
 * the audit log fd, then install the seccomp filter.
 */
static void loader_sandbox(bool seccomp_log)
{
	/*
	 * In every unwind mode, since the loader is also the exporter's broker:
	 *  - CAP_BPF: maps, programs, BTF;
	 *  - CAP_PERFMON: perf events of every CPU, kernel stacks;
	 *  - CAP_SYS_PTRACE: the ptrace-mode read check of every process's
	 *    /proc/PID/maps, /proc/PID/root (binaries, for DWARF tables and for
	 *    the exporter) and /proc/PID/exe;
	 *  - CAP_DAC_READ_SEARCH: binaries and debug files their owners keep
	 *    unreadable to others (read-only bypass, no write);
	 *  - CAP_SYSLOG: real addresses in /proc/kallsyms, decided by the opener's
	 *    credentials when the broker opens it for the exporter;
	 *  - CAP_CHECKPOINT_RESTORE: /proc/PID/map_files, the only way to a
	 *    mapped file that no path names any more (a shared library deleted
	 *    or replaced under a running process), for its table and its names.
	 */
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH,
					   CAP_SYSLOG, CAP_CHECKPOINT_RESTORE};
	struct stat st;

	sandbox_limit_caps("loader", caps, sizeof(caps) / sizeof(caps[0]));
	/* The supervisor's channel (one record a message), or a file when run by hand. */
	if (fstat(LOWPROF_FD_AUDIT, &st) == 0 && (S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode))) {
		fcntl(LOWPROF_FD_AUDIT, F_SETFD, FD_CLOEXEC);
		/* A full channel (a stalled supervisor) must not stall the loader:
		 * the record is counted as suppressed instead. */
		if (S_ISSOCK(st.st_mode))
			fcntl(LOWPROF_FD_AUDIT, F_SETFL, O_NONBLOCK);
		audit_log_open(LOWPROF_FD_AUDIT);
	}
	sandbox_enter("loader", seccomp_log);
}

int main(int argc, char **argv)
{
	static struct loader l; /* large (reader buffers): not on the stack */
	char err[512];
	int rc, status;
	bool seccomp_log;

	heap_bound();
	log_init("lowprof-loader", LOG_LEVEL_INFO);
	sandbox_not_dumpable("loader");
	seccomp_log = sandbox_take_seccomp_log(&argc, argv);
	rc = loader_options_parse(argc, argv, &l.opt, err, sizeof(err));
	if (rc != 0)
		fatal(rc, "%s", err);
	if (l.opt.verbose)
		log_init("lowprof-loader", LOG_LEVEL_DEBUG);
	notify_set_liveness_timeout(l.opt.liveness_timeout_s);
	/* Before the sandbox: its seccomp filter allows no socket(). */
	l.uevent_fd = cpu_uevents_open();
	if (l.uevent_fd < 0)
		log_warn("listening for CPUs going offline and online: %s: a CPU that does is "
			 "not sampled again", strerror(-l.uevent_fd));
	loader_sandbox(seccomp_log);
	libbpf_set_print(loader_libbpf_print);
	rc = loader_start(&l, err, sizeof(err));
	if (rc != 0) {
		log_error("%s", err);
		loader_stop(&l, false);
		return LOWPROF_EXIT_FAILURE;
	}
	status = loader_run(&l);
	loader_stop(&l, status == LOWPROF_EXIT_OK);
	return status;
}
