/*
 * Building and installing a component's seccomp filter (libseccomp).
 *
 * Default action SCMP_ACT_KILL_PROCESS (SCMP_ACT_LOG with --seccomp-log),
 * TSYNC so every thread gets it, NO_NEW_PRIVS (libseccomp sets it). A
 * component that cannot install its filter must not run: callers treat a
 * failure as fatal.
 */
#ifndef LOWPROF_SECCOMP_INSTALL_H
#define LOWPROF_SECCOMP_INSTALL_H

#include <stdbool.h>
#include <stddef.h>

#include "seccomp/seccomp_policy.h"

/* The union of every policy: the supervisor's filter and the outer filter. */
#define SECCOMP_UNION_NAME "union"

/*
 * Build the filter of component ("loader", ..., "supervisor", "union") and
 * load it into the kernel. log_only: SCMP_ACT_LOG instead of killing.
 * 0, or -errno with a message.
 */
int seccomp_install(const char *component, bool log_only, char *err, size_t errlen);

/* Write the filter's PFC text (seccomp_export_pfc) to fd. 0 or -errno. */
int seccomp_export(const char *component, bool log_only, int fd, char *err, size_t errlen);

/*
 * The syscall names a component may make (allowed, or answered with an errno),
 * sorted and without duplicates, one per call of fn; for docs and systemd's
 * SystemCallFilter=. Returns the count, or -errno.
 */
int seccomp_list_names(const char *component, void (*fn)(const char *name, const char *action, void *arg),
		       void *arg);

#endif
