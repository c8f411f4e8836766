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

#define NOTIFY_PING_INTERVAL_MS 1000

void notify_ready(void);
/* Call from every main-loop iteration: sends at most one ping per second. */
void notify_ping(void);
void notify_state(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
