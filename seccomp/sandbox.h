/*
 * What each component calls at start to sandbox itself (docs/SECURITY.md).
 */
#ifndef LOWPROF_SECCOMP_SANDBOX_H
#define LOWPROF_SECCOMP_SANDBOX_H

#include <stdbool.h>
#include <sys/capability.h>

/* The supervisor passes this as the first argument of every component. */
#define SANDBOX_SECCOMP_LOG_ARG "--seccomp-log"

/*
 * First thing in every component, before any socket or secret is used: not
 * dumpable (PR_SET_DUMPABLE 0), so that no other process of its uid can
 * ptrace it, read /proc/PID/fd or take its fds with pidfd_getfd. Fatal
 * (LOWPROF_EXIT_CONFIG) if refused.
 */
void sandbox_not_dumpable(const char *component);

/*
 * If argv[1] is --seccomp-log, remove it (before the component parses its own
 * options) and return true.
 */
bool sandbox_take_seccomp_log(int *argc, char **argv);

/*
 * Keep exactly the capabilities in keep[] (fatal, status LOWPROF_EXIT_CONFIG,
 * naming what is missing, when one of them is not held). n may be 0: none.
 */
void sandbox_limit_caps(const char *component, const cap_value_t *keep, size_t n);

/*
 * Install the component's seccomp filter; SCMP_ACT_LOG instead of killing when
 * log_only. A failure is fatal (LOWPROF_EXIT_CONFIG): no component runs
 * unfiltered.
 */
void sandbox_enter(const char *component, bool log_only);

/*
 * Confine the file system access of the whole process to dirfd's directory
 * (Landlock, seccomp/landlock_dir.h), before any thread starts. A kernel
 * without Landlock is logged (the seccomp filter still holds); any other
 * failure is fatal (LOWPROF_EXIT_CONFIG).
 */
void sandbox_confine_to_dir(const char *component, int dirfd);

#endif
