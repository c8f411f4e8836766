/*
 * lowprof: the supervisor, and the only command users run. It validates the
 * command line, creates the shared memory ring and the fds every component
 * inherits, starts the loader (privileged) and the exporter, waits for their
 * readiness, and stops them in order: the loader first (its final drain goes
 * into the ring), then the exporter (which writes the final profile).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "ipc/lowprof_fds.h"
#include "ipc/shm_ring.h"
#include "lowprof_build_config.h"
#include "supervisor/component.h"
#include "supervisor/options.h"

#define READY_TIMEOUT_MS 30000
#define LOADER_STOP_TIMEOUT_MS 10000
#define EXPORTER_STOP_TIMEOUT_MS 120000

enum { COMP_EXPORTER, COMP_LOADER, COMP_COUNT };

struct supervisor {
	struct supervisor_options opt;
	struct component comp[COMP_COUNT];
	int shm_fd;
	int event_fd;
	int outdir_fd;
	int signal_fd;
	int status; /* exit status of lowprof */
};

static int64_t supervisor_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void supervisor_build_components(struct supervisor *sv)
{
	struct component *ld = &sv->comp[COMP_LOADER];
	struct component *ex = &sv->comp[COMP_EXPORTER];
	size_t i;

	component_add_arg(ld, "lowprof-loader");
	component_add_arg(ld, "--frequency=%u", sv->opt.frequency_hz);
	component_add_arg(ld, "--ringbuf-kb=%u", sv->opt.ringbuf_kb);
	component_add_arg(ld, "--max-depth=%u", sv->opt.max_depth);
	for (i = 0; i < sv->opt.npids; i++)
		component_add_arg(ld, "--pid=%d", (int)sv->opt.pids[i]);
	component_add_fd(ld, sv->shm_fd, LOWPROF_FD_SHM);
	component_add_fd(ld, sv->event_fd, LOWPROF_FD_EVENT);

	component_add_arg(ex, "lowprof-exporter");
	component_add_arg(ex, "--interval=%u", sv->opt.interval_s);
	component_add_arg(ex, "--frequency=%u", sv->opt.frequency_hz);
	component_add_arg(ex, "--output-label=%s", sv->opt.output_dir);
	component_add_fd(ex, sv->shm_fd, LOWPROF_FD_SHM);
	component_add_fd(ex, sv->event_fd, LOWPROF_FD_EVENT);
	component_add_fd(ex, sv->outdir_fd, LOWPROF_FD_OUTDIR);
}

static int supervisor_setup(struct supervisor *sv)
{
	static const char *const programs[COMP_COUNT] = {"lowprof-exporter", "lowprof-loader"};
	static const char *const names[COMP_COUNT] = {"exporter", "loader"};
	size_t shm_size = (size_t)sv->opt.ringbuf_kb * 1024u;
	char err[512];
	sigset_t mask;
	int i;

	for (i = 0; i < COMP_COUNT; i++) {
		component_init(&sv->comp[i], names[i]);
		if (component_find_binary(programs[i], LOWPROF_LIBEXECDIR, sv->comp[i].path,
					  sizeof(sv->comp[i].path), err, sizeof(err)) != 0) {
			log_error("%s", err);
			return -1;
		}
	}
	/* The shared ring at least as large as the BPF ring, so one full BPF ring fits. */
	if (shm_size < (1u << 20))
		shm_size = 1u << 20;
	if (shm_ring_create(shm_size, &sv->shm_fd, err, sizeof(err)) != 0) {
		log_error("shared memory ring: %s", err);
		return -1;
	}
	sv->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sv->outdir_fd = open(sv->opt.output_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sv->event_fd < 0 || sv->outdir_fd < 0) {
		log_error("eventfd/output directory: %s", strerror(errno));
		return -1;
	}
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
	supervisor_build_components(sv);
	return 0;
}

/* Reap exited children; returns the component index that died, or -1. */
static int supervisor_reap(struct supervisor *sv)
{
	int status, i, died = -1;
	pid_t pid;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0)
			break;
		for (i = 0; i < COMP_COUNT; i++) {
			if (sv->comp[i].pid == pid) {
				sv->comp[i].pid = 0;
				sv->comp[i].exit_status = status;
				component_poll_ready(&sv->comp[i]);
				died = i;
			}
		}
	}
	return died;
}

static void supervisor_stop_component(struct supervisor *sv, int idx, int timeout_ms)
{
	struct component *c = &sv->comp[idx];
	int64_t deadline;

	if (c->pid == 0)
		return;
	kill(c->pid, SIGTERM);
	deadline = supervisor_now_ms() + timeout_ms;
	while (c->pid != 0 && supervisor_now_ms() < deadline) {
		struct timespec pause = {0, 20 * 1000000L};

		supervisor_reap(sv);
		if (c->pid != 0)
			nanosleep(&pause, NULL);
	}
	if (c->pid != 0) {
		log_warn("%s did not stop within %d s: killing it", c->name, timeout_ms / 1000);
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &c->exit_status, 0);
		c->pid = 0;
	}
	if (!WIFEXITED(c->exit_status) || WEXITSTATUS(c->exit_status) != 0) {
		char why[128];

		component_describe_exit(c->exit_status, why, sizeof(why));
		log_error("%s %s while stopping", c->name, why);
		sv->status = LOWPROF_EXIT_FAILURE;
	}
}

static void supervisor_report_death(struct supervisor *sv, int idx)
{
	struct component *c = &sv->comp[idx];
	char why[128];

	component_describe_exit(c->exit_status, why, sizeof(why));
	log_error("%s %s%s", c->name, why, c->ready ? "" : " before it was ready");
	sv->status = LOWPROF_EXIT_FAILURE;
}

/* Run until the duration ends, a signal arrives, or a component dies. */
static void supervisor_run(struct supervisor *sv)
{
	int64_t start = supervisor_now_ms(), end = -1, ready_deadline = start + READY_TIMEOUT_MS;
	bool all_ready = false;
	struct pollfd pfd[1 + COMP_COUNT];
	int i, timeout, died;

	if (sv->opt.duration_s > 0)
		end = start + (int64_t)llround(sv->opt.duration_s * 1000.0);
	for (;;) {
		int64_t now = supervisor_now_ms();

		if (end >= 0 && all_ready && now >= end)
			return;
		if (!all_ready && now >= ready_deadline) {
			log_error("components not ready after %d s", READY_TIMEOUT_MS / 1000);
			sv->status = LOWPROF_EXIT_FAILURE;
			return;
		}
		timeout = (int)((all_ready ? (end >= 0 ? end : now + 60000) : ready_deadline) - now);
		pfd[0].fd = sv->signal_fd;
		pfd[0].events = POLLIN;
		for (i = 0; i < COMP_COUNT; i++) {
			pfd[1 + i].fd = sv->comp[i].notify_fd;
			pfd[1 + i].events = POLLIN;
		}
		if (poll(pfd, 1 + COMP_COUNT, timeout < 0 ? 0 : timeout) < 0 && errno != EINTR) {
			log_error("poll: %s", strerror(errno));
			sv->status = LOWPROF_EXIT_FAILURE;
			return;
		}
		for (i = 0; i < COMP_COUNT; i++) {
			if (pfd[1 + i].revents)
				component_poll_ready(&sv->comp[i]);
		}
		if (!all_ready && sv->comp[COMP_LOADER].ready && sv->comp[COMP_EXPORTER].ready) {
			all_ready = true;
			if (end >= 0) {
				/* The duration counts from the moment sampling started. */
				end = supervisor_now_ms() + (end - start);
				log_info("profiling for %g s; output in %s", sv->opt.duration_s, sv->opt.output_dir);
			} else {
				log_info("profiling until interrupted (Ctrl-C); output in %s", sv->opt.output_dir);
			}
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sv->signal_fd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM) {
					log_info("%s: stopping", strsignal((int)si.ssi_signo));
					return;
				}
			}
			died = supervisor_reap(sv);
			if (died >= 0) {
				supervisor_report_death(sv, died);
				return;
			}
		}
	}
}

int main(int argc, char **argv)
{
	struct supervisor sv;
	char err[512];
	int rc, i;

	memset(&sv, 0, sizeof(sv));
	sv.shm_fd = sv.event_fd = sv.outdir_fd = sv.signal_fd = -1;
	log_init("lowprof", LOG_LEVEL_INFO);
	supervisor_options_defaults(&sv.opt);
	rc = supervisor_options_parse(argc, argv, &sv.opt, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "lowprof: %s\n", err);
		return rc;
	}
	if (sv.opt.show_help) {
		supervisor_options_usage(stdout);
		return 0;
	}
	if (sv.opt.show_version) {
		printf("lowprof %s\n", LOWPROF_VERSION);
		return 0;
	}
	if (sv.opt.verbose)
		log_init("lowprof", LOG_LEVEL_DEBUG);
	if (supervisor_setup(&sv) != 0)
		return LOWPROF_EXIT_FAILURE;

	/* The exporter first, so the ring has a reader before samples arrive. */
	for (i = 0; i < COMP_COUNT; i++) {
		rc = component_spawn(&sv.comp[i]);
		if (rc != 0) {
			log_error("starting %s: %s", sv.comp[i].name, strerror(-rc));
			sv.status = LOWPROF_EXIT_FAILURE;
			break;
		}
		log_debug("started %s (pid %d)", sv.comp[i].name, (int)sv.comp[i].pid);
	}
	if (sv.status == 0)
		supervisor_run(&sv);
	supervisor_stop_component(&sv, COMP_LOADER, LOADER_STOP_TIMEOUT_MS);
	supervisor_stop_component(&sv, COMP_EXPORTER, EXPORTER_STOP_TIMEOUT_MS);
	for (i = 0; i < COMP_COUNT; i++)
		component_free_args(&sv.comp[i]);
	return sv.status;
}
