/*
 * lowprof-controller: the throttle's brain, with no privileges of its own.
 * Every control interval it reads the host's CPU pressure (/proc/pressure/cpu)
 * and takes the loader's counters of the interval (samples, drops, BPF run
 * time, the agent's CPU time: the loader reads other processes' /proc entries,
 * which a sandboxed controller may not; and the host's /proc/stat ticks, which
 * the loader reads for its timeline anyway), runs the pure policy
 * (controller/policy.c), and, when the decision changes, asks the loader for
 * the new settings with SetThrottle. It never calls bpf(); it can only ask.
 * main() parses the options, enters the sandbox, then starts, runs and stops
 * the loop (controller/controller.c).
 *
 * Inherited fds (ipc/lowprof_fds.h): NOTIFY, CONTROL (a SOCK_SEQPACKET socket
 * to the loader, controller/control_client.h). Options:
 * --control-interval=SECONDS --cpu-budget=PCT --frequency=HZ [--no-throttle]
 * [--off-cpu --off-cpu-probability=PCT] [-v].
 */
#include <errno.h>
#include <stdio.h>

#include "common/heap_bound.h"
#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_options.h"
#include "ipc/lowprof_fds.h"
#include "ipc/notify.h"
#include "seccomp/sandbox.h"

static int controller_parse_options(int argc, char **argv, struct controller *c, char *err,
				    size_t errlen)
{
	struct controller_options o;

	if (controller_options_parse(argc, argv, &o, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (o.verbose)
		log_init("lowprof-controller", LOG_LEVEL_DEBUG);
	notify_set_liveness_timeout(o.liveness_timeout_s);
	c->interval_s = o.interval_s;
	policy_settings_default(&c->set, o.frequency_hz);
	/* The user's --max-depth is the healthy tier's depth, and so every tier's ceiling. */
	c->set.tiers[THROTTLE_TIER_HEALTHY].max_depth = o.max_depth;
	c->set.cpu_budget_pct = o.cpu_budget_pct;
	c->set.no_throttle = o.no_throttle;
	/* The same ppm as the loader's ceiling. */
	if (o.off_cpu)
		c->set.offcpu_max_ppm = throttle_offcpu_ppm(o.off_cpu_prob_pct);
	if (policy_settings_check(&c->set, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	return 0;
}

int main(int argc, char **argv)
{
	static struct controller c; /* holds a frame-sized reader: not on the stack */
	char err[512];
	int rc, status;
	bool seccomp_log;

	heap_bound();
	log_init("lowprof-controller", LOG_LEVEL_INFO);
	sandbox_not_dumpable("controller");
	seccomp_log = sandbox_take_seccomp_log(&argc, argv);
	rc = controller_parse_options(argc, argv, &c, err, sizeof(err));
	if (rc != 0)
		fatal(rc, "%s", err);
	/* Before the first byte from the loader or /proc is read. */
	sandbox_enter("controller", seccomp_log);
	rc = controller_start(&c, err, sizeof(err));
	if (rc == -ECANCELED)
		return LOWPROF_EXIT_OK; /* stopped before the loader answered */
	if (rc != 0)
		fatal(rc == -ENOTSOCK ? LOWPROF_EXIT_CONFIG : LOWPROF_EXIT_FAILURE, "%s", err);
	status = controller_run(&c);
	controller_stop(&c);
	return status;
}
