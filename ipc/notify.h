/*
 * A component's channel to the supervisor: the inherited LOWPROF_FD_NOTIFY,
 * a SOCK_SEQPACKET socket where every message is one line of text.
 *   "ready"                 once, when the component can do its job (s6 style)
 *   "ping"                  from the main loop: liveness (rate-limited here)
 *   "state k=v k=v ..."     values for `lowprof status` (controller, exporter)
 * Sends never block: a full or closed channel is not the component's problem.
 */
#ifndef LOWPROF_IPC_NOTIFY_H
#define LOWPROF_IPC_NOTIFY_H

#include <stdint.h>

/*
 * Pings come 0.4 of the supervisor's --liveness-timeout apart (the component
 * is told it with the same option): 12 s at the default 30 s, which is the
 * longest quiet interval of the loader and the controller on a quiet host
 * (throttle_quiet_max_intervals, ipc/throttle.h), so a ping never needs a
 * wake-up of its own there; one may be lost or late before the component
 * is judged silent.
 */
#define NOTIFY_PING_PER_MILLE 400

/* The liveness timeout the component was started with (seconds). Until it
 * is called, pings come once a second. */
void notify_set_liveness_timeout(unsigned seconds);
/* The longest a loop may sleep between two notify_ping calls, ms. */
unsigned notify_ping_interval_ms(void);
void notify_ready(void);
/* Call from every main-loop iteration: sends at most one ping per
 * notify_ping_interval_ms (with a tenth of slack). */
void notify_ping(void);
void notify_state(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
