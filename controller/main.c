/*
 * lowprof-controller: the throttle's brain, with no privileges of its own.
 * Every control interval it measures the host (/proc/stat, /proc/pressure/cpu)
 * and asks the loader for the interval's counters (samples, drops, BPF run
 * time, the agent's CPU time: the loader reads other processes' /proc entries,
 * which a sandboxed controller may not), runs the pure policy
 * (controller/policy.c), and, when the decision changes, asks the loader for
 * the new settings with SetThrottle. It never calls bpf(); it can only ask.
 * main() parses the options, enters the sandbox, then starts, runs and stops
 * the loop (controller/controller.c).
 *
 * Inherited fds (ipc/lowprof_fds.h): NOTIFY, CONTROL (a SOCK_SEQPACKET socket
 * to the loader, controller/control_client.h). Options:
 * --control-interval=SECONDS --cpu-budget=PCT --frequency=HZ [--no-throttle] [-v].
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "common/log.h"
#include "common/number_parse.h"
#include "controller/controller.h"
#include "ipc/lowprof_fds.h"
#include "seccomp/sandbox.h"

static int controller_parse_options(int argc, char **argv, struct controller *c, char *err,
				    size_t errlen)
{
	static const struct option longopts[] = {
		{"control-interval", required_argument, NULL, 'i'},
		{"cpu-budget", required_argument, NULL, 'b'},
		{"frequency", required_argument, NULL, 'F'},
		{"no-throttle", no_argument, NULL, 'n'},
		{"max-depth", required_argument, NULL, 'D'},
		{"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	unsigned freq = 19, depth = 64;
	double budget = 1.5;
	bool no_throttle = false;
	int ch;

	c->interval_s = 1.0;
	optind = 1;
	opterr = 0;
	for (;;) {
		ch = getopt_long(argc, argv, "v", longopts, NULL);
		if (ch == -1)
			break;
		switch (ch) {
		case 'i':
			if (number_parse_seconds(optarg, 3600.0, &c->interval_s) != 0 || c->interval_s < 0.1)
				goto bad_value;
			break;
		case 'b':
			if (number_parse_seconds(optarg, 100.0, &budget) != 0 || budget < 0.01)
				goto bad_value;
			break;
		case 'F':
			if (number_parse_uint(optarg, 1, 1000000, &freq) != 0)
				goto bad_value;
			break;
		case 'n':
			no_throttle = true;
			break;
		case 'D':
			if (number_parse_uint(optarg, 1, LOWPROF_MAX_USER_DEPTH, &depth) != 0)
				goto bad_value;
			break;
		case 'v':
			log_init("lowprof-controller", LOG_LEVEL_DEBUG);
			break;
		default:
			snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
			return LOWPROF_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return LOWPROF_EXIT_USAGE;
	}
	policy_settings_default(&c->set, freq);
	/* The user's --max-depth is the healthy tier's depth, and so every tier's ceiling. */
	c->set.tiers[THROTTLE_TIER_HEALTHY].max_depth = depth;
	c->set.cpu_budget_pct = budget;
	c->set.no_throttle = no_throttle;
	if (policy_settings_check(&c->set, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	return 0;
bad_value:
	snprintf(err, errlen, "invalid value '%s' for %s", optarg, argv[optind - 1]);
	return LOWPROF_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static struct controller c; /* holds a frame-sized reader: not on the stack */
	char err[512];
	int rc, status;
	bool seccomp_log;

	log_init("lowprof-controller", LOG_LEVEL_INFO);
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
