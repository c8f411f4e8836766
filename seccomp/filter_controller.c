/*
 * lowprof-controller: reads /proc/pressure/cpu (host pressure), talks to the loader on the
 * control socket, sleeps on a timer. No exec, no ptrace, no sockets of its own.
 */
#include "seccomp/seccomp_policy.h"

static const char *const controller_allow[] = {
	"openat", "open", "getdents64",
	"signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime",
	"recvfrom", "sendto", "recvmsg", "sendmsg",
	NULL,
};

static const char *const controller_eacces[] = {"ioctl", "sched_getaffinity", "uname", NULL};

const struct seccomp_policy seccomp_policy_controller = {
	.component = "controller",
	.allow = controller_allow,
	.eacces = controller_eacces,
	.eperm = NULL,
	.flags = 0,
};
