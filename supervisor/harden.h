/*
 * The supervisor's own least privilege, applied once its setup is done
 * (sockets, memfd, output directory and audit log opened) and before it
 * starts any component: only the capabilities it needs to start and restart
 * the components, then the union seccomp filter (seccomp/seccomp_install.h).
 */
#ifndef LOWPROF_SUPERVISOR_HARDEN_H
#define LOWPROF_SUPERVISOR_HARDEN_H

#include <stdbool.h>
#include <stddef.h>

/* 0, or -1 with a message (fatal for the caller: nothing runs unfiltered). */
int supervise_harden(bool seccomp_log, char *err, size_t errlen);

#endif
