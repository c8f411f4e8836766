/*
 * lowprof-exporter: reads the shared ring, symbolizes with what the loader
 * hands it over the symbol socket (fds: recvmsg), writes files relative to
 * the output directory fd, and exports OTLP over libcurl (sockets, poll, TLS
 * randomness; threads only, never processes; TCP sockets only). It opens no path: openat,
 * unlinkat and renameat only relative to the output directory, open refused.
 * No exec, no ptrace.
 */
#include "seccomp/seccomp_policy.h"

static const char *const exporter_allow[] = {
	/* output files, relative to the output directory only (SECCOMP_POLICY_PATHS_IN_OUTDIR):
	 * openat, renameat of NAME.tmp over NAME, unlinkat of a stale temporary */
	"openat", "renameat", "renameat2", "unlinkat", "fsync", "fdatasync", "ftruncate", "fchmod",
	"signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime", "eventfd2",
	/* notification channel and OTLP/HTTP (libcurl, OpenSSL) */
	"socket", "connect", "getsockopt", "setsockopt", "getsockname", "getpeername", "shutdown",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "socketpair", "pipe2",
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	/* curl's threaded resolver and OpenSSL: threads only (SECCOMP_POLICY_THREADS_ONLY) */
	"clone",
	NULL,
};

/* Probes by libc, libcurl and OpenSSL (configuration files, /etc/localtime): answered
 * as a file nobody may read. */
static const char *const exporter_eacces[] = {"ioctl", "sched_getaffinity", "uname", "statfs",
					      "fstatfs", "open", "access", "faccessat", "faccessat2",
					      "readlink", "readlinkat", "getdents64", NULL};

const struct seccomp_policy seccomp_policy_exporter = {
	.component = "exporter",
	.allow = exporter_allow,
	.eacces = exporter_eacces,
	.eperm = NULL,
	.flags = SECCOMP_POLICY_THREADS_ONLY | SECCOMP_POLICY_PATHS_IN_OUTDIR |
		 SECCOMP_POLICY_INET_SOCKETS_ONLY,
};
