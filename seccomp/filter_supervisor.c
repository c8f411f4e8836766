/*
 * lowprof (the supervisor): forks and execs the components, drops the
 * unprivileged ones to --user (setgroups, setres[ug]id, capability and
 * prctl calls between fork and exec), watches them (signalfd, wait4, kill),
 * and answers `lowprof status` on its Unix socket.
 *
 * Its installed filter is the union of every component's policy plus this
 * list, which also holds what a freshly exec'd component does before it
 * installs its own filter (the dynamic loader, option parsing, dropping
 * capabilities): a filter is inherited across fork and exec.
 */
#include "seccomp/seccomp_policy.h"

static const char *const supervisor_allow[] = {
	/* fork + exec and what the child does in between */
	"clone", "clone3", "fork", "vfork", "execve", "wait4", "waitid", "kill",
	"dup", "dup2", "dup3", "setgroups", "setresuid", "setresgid", "capget", "capset", "prctl",
	/* each component installs its own filter on top of this one; the exporter
	 * first confines its paths with Landlock (landlock_dir.c) */
	"seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
	/* the dynamic loader and libc start-up of every exec'd program */
	"arch_prctl", "access", "openat", "open", "readlink", "readlinkat", "prlimit64",
	/* setup, status socket, notification channels, end-of-run cleanup */
	"socket", "socketpair", "bind", "listen", "accept4", "accept", "connect",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "getsockopt", "setsockopt",
	"signalfd4", "eventfd2", "memfd_create", "ftruncate", "mkdir", "chmod", "fchmod",
	"unlink", "unlinkat", "rmdir", "getdents64", "uname", "statfs", "fstatfs",
	/* handing the output directory and lowprof's files in it to --user (output_dir.c) */
	"fchown", "fchownat",
	/* rotating the audit log (audit_sink.c) */
	"rename", "renameat", "renameat2",
	NULL,
};

const struct seccomp_policy seccomp_policy_supervisor = {
	.component = "supervisor",
	.allow = supervisor_allow,
	.eacces = NULL,
	.eperm = NULL,
	.flags = 0,
};
