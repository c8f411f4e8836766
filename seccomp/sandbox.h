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

#endif
