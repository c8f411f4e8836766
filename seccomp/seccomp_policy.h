/*
 * The syscall allowlists of lowprof's components (one file each:
 * filter_<component>.c) and how they are turned into a libseccomp filter
 * (seccomp_install.c).
 *
 * A policy is lists of syscall names, so that the same source builds on every
 * architecture libseccomp knows; a name this architecture lacks is skipped.
 * What is not listed kills the whole process (SCMP_ACT_KILL_PROCESS), or is
 * only logged with --seccomp-log (SCMP_ACT_LOG), for finding a missing entry.
 */
#ifndef LOWPROF_SECCOMP_POLICY_H
#define LOWPROF_SECCOMP_POLICY_H

#include <stdbool.h>
#include <stddef.h>

enum seccomp_policy_flags {
	/* clone only with CLONE_THREAD (threads, not processes); clone3 says ENOSYS
	 * so glibc falls back to clone, whose flags a filter can see. */
	SECCOMP_POLICY_THREADS_ONLY = 1u << 0,
	/* kill only with signal 0 (a liveness probe, never a signal). */
	SECCOMP_POLICY_KILL_PROBE_ONLY = 1u << 1,
	/* openat, unlinkat, renameat(2) only relative to LOWPROF_FD_OUTDIR: any
	 * other directory fd (AT_FDCWD: an absolute or relative path) is EACCES.
	 * With open itself refused, the component can reach no path but its
	 * output directory's. */
	SECCOMP_POLICY_PATHS_IN_OUTDIR = 1u << 2,
	/* socket only for AF_INET and AF_INET6 (TCP to a collector); any other
	 * family (netlink, packet, a Unix socket to a local daemon) is EACCES. */
	SECCOMP_POLICY_INET_SOCKETS_ONLY = 1u << 3,
};

struct seccomp_policy {
	const char *component;          /* "loader", "exporter", ... */
	const char *const *allow;       /* NULL-terminated syscall names */
	const char *const *eacces;      /* harmless probes answered with EACCES */
	const char *const *eperm;       /* refused with EPERM: a path that degrades gracefully */
	unsigned flags;                 /* enum seccomp_policy_flags */
};

extern const struct seccomp_policy seccomp_policy_loader;
extern const struct seccomp_policy seccomp_policy_exporter;
extern const struct seccomp_policy seccomp_policy_controller;
extern const struct seccomp_policy seccomp_policy_unwinder;
/* The supervisor's own calls; its installed filter is the union of every policy
 * (seccomp_install.h), because each component inherits it across exec. */
extern const struct seccomp_policy seccomp_policy_supervisor;

/* Calls every component makes (libc, exit, signals, memory). NULL-terminated. */
extern const char *const seccomp_base_allow[];

/* By name ("loader", ..., "supervisor", "union"); NULL if unknown. */
const struct seccomp_policy *seccomp_policy_find(const char *component);

#endif
