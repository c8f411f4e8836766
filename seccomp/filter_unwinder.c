/*
 * lowprof-unwinder: parses the files it is handed as fds; answers in sealed
 * memfds. It opens no path: a libc probe that tries (the time zone file for a
 * log time stamp) is told EACCES.
 */
#include "seccomp/seccomp_policy.h"

static const char *const unwinder_allow[] = {
	"recvmsg", "sendmsg", "recvfrom", "sendto",
	"memfd_create", "ftruncate",
	/* its CPU limit per request (ITIMER_PROF: its own process only) */
	"setitimer",
	NULL,
};

static const char *const unwinder_eacces[] = {"openat", "open", "access", "faccessat", "faccessat2",
					      "ioctl", "uname", NULL};

const struct seccomp_policy seccomp_policy_unwinder = {
	.component = "unwinder",
	.allow = unwinder_allow,
	.eacces = unwinder_eacces,
	.eperm = NULL,
	.flags = 0,
};
