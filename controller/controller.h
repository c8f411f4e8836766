/*
 * The controller's loop: every control interval, take the loader's counters
 * of the interval (the host's /proc/stat ticks among them) and the host's CPU
 * pressure (measure/host_load.h), run the
 * pure policy (controller/policy.h) and, when the decision changes, ask the
 * loader for it (controller/control_client.h). start, run and stop are what
 * main() calls.
 */
#ifndef LOWPROF_CONTROLLER_CONTROLLER_H
#define LOWPROF_CONTROLLER_CONTROLLER_H

#include <stdbool.h>
#include <stddef.h>

#include "controller/control_client.h"
#include "controller/policy.h"
#include "measure/host_load.h"

struct controller {
	double interval_s;
	struct policy_settings set;
	struct policy_state state;
	struct control_client cc;
	int sfd; /* signalfd: a stop request also ends any wait for the loader */
	int tfd; /* the control interval */
	struct host_load_source host; /* /proc/pressure/cpu, kept open */
	struct throttle sent; /* what the loader was last asked for (or reported) */
	bool have_sent;
	unsigned next_push_intervals; /* the last Stats said: the next in this many intervals (0: not said) */
};

/*
 * Take the control socket, greet the loader, tell the supervisor we are ready. 0; -ECANCELED when stopped before the
 * loader answered; -ENOTSOCK when there is no control socket; another -errno
 * (the reason in err) when the loader is not there.
 */
int controller_start(struct controller *c, char *err, size_t errlen);

/* Until a stop request or the loader is gone: the exit status. */
int controller_run(struct controller *c);

void controller_stop(struct controller *c);

#endif /* LOWPROF_CONTROLLER_CONTROLLER_H */
