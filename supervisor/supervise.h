/*
 * The supervisor proper: starts the components with their inherited fds,
 * restarts each one alone when it dies (supervisor/restart_policy.h), kills
 * one that misses its liveness deadline, answers the status socket, speaks
 * sd_notify, and stops everything in order.
 */
#ifndef LOWPROF_SUPERVISOR_SUPERVISE_H
#define LOWPROF_SUPERVISOR_SUPERVISE_H

#include "supervisor/command.h"
#include "supervisor/options.h"

/* Runs lowprof until the duration ends, a signal stops it or every target
 * (-p, the command) has exited; returns the exit status. cmd: the held
 * command (pid 0: none), released once sampling runs. */
int supervise_run(const struct supervisor_options *opt, struct command *cmd);

#endif
