/*
 * Capability sets (libcap): check that a process holds what it needs, then
 * keep exactly that: effective = permitted = the set, inheritable and ambient
 * empty, every other capability dropped from the bounding set.
 */
#ifndef LOWPROF_SECCOMP_CAPS_LIMIT_H
#define LOWPROF_SECCOMP_CAPS_LIMIT_H

#include <stddef.h>
#include <sys/capability.h>

/*
 * Names of the capabilities in need[] that are not in the effective set,
 * space-separated ("CAP_BPF CAP_PERFMON"), in missing. Returns how many.
 */
int caps_limit_missing(const cap_value_t *need, size_t n, char *missing, size_t len);

/*
 * Keep exactly keep[] (effective and permitted), clear inheritable and
 * ambient, drop the rest of the bounding set. Dropping the bounding set needs
 * CAP_SETPCAP: without it (file capabilities, not root) what cannot be
 * dropped is named in err and the call still succeeds with *bounding_kept
 * set; exec cannot regain it anyway under NO_NEW_PRIVS and seccomp.
 * 0, or -1 with a message.
 */
int caps_limit_to(const cap_value_t *keep, size_t n, int *bounding_kept, char *err, size_t errlen);

/* "CAP_BPF CAP_PERFMON" for logs and docs. */
void caps_limit_describe(const cap_value_t *caps, size_t n, char *buf, size_t len);

#endif
