/*
 * lowprof-exporter: reads the shared ring, symbolizes, writes files relative
 * to the output directory fd, and exports OTLP over libcurl (sockets, poll,
 * TLS randomness; threads only, never processes). No exec, no ptrace.
 */
#include "seccomp/seccomp_policy.h"

static const char *const exporter_allow[] = {
	/* symbolization: /proc/PID/maps, mapped binaries, /proc/kallsyms */
	"openat", "open", "getdents64", "readlink", "readlinkat", "access", "faccessat", "faccessat2",
	/* output files: openat(dirfd), fsync, renameat, unlinkat of a stale temporary */
	"fsync", "fdatasync", "renameat", "renameat2", "unlinkat", "ftruncate", "fchmod",
	"signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime", "eventfd2",
	/* notification channel and OTLP/HTTP (libcurl, OpenSSL) */
	"socket", "connect", "getsockopt", "setsockopt", "getsockname", "getpeername", "shutdown",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "socketpair", "pipe2",
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	/* curl's threaded resolver and OpenSSL: threads only (SECCOMP_POLICY_THREADS_ONLY) */
	"clone",
	NULL,
};

static const char *const exporter_eacces[] = {"ioctl", "sched_getaffinity", "uname", "statfs",
					      "fstatfs", NULL};

const struct seccomp_policy seccomp_policy_exporter = {
	.component = "exporter",
	.allow = exporter_allow,
	.eacces = exporter_eacces,
	.eperm = NULL,
	.flags = SECCOMP_POLICY_THREADS_ONLY,
};
