/*
 * lowprof-loader: libbpf (bpf, perf_event_open, the BTF file, the ring
 * buffer's epoll and mmap), perf ioctls (and FS_IOC_GETVERSION on mapped
 * files), the start-up /proc scan and the opening of mapped files,
 * the unwinder's fd passing, and pins in bpffs.
 */
#include "seccomp/seccomp_policy.h"

static const char *const loader_allow[] = {
	"bpf", "perf_event_open", "ioctl", "uname",
	/* /proc/PID/maps, /proc/PID/root/..., BTF, bpffs; the process scan */
	"openat", "open", "getdents64", "readlink", "readlinkat", "access", "faccessat", "faccessat2",
	"statfs", "fstatfs",
	/* mapped files: resolved within the process's root, no symlinks (loader/mapped_file.c) */
	"openat2",
	/* pinning and unpinning in bpffs */
	"mkdir", "mkdirat", "unlink", "unlinkat", "rmdir",
	/* ring buffer: libbpf's epoll set, drained by ring_buffer__consume */
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	/* main loop */
	"signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime",
	/* control socket (wire protocol) and the unwinder socket (SCM_RIGHTS) */
	"recvfrom", "sendto", "recvmsg", "sendmsg", "getsockopt", "setsockopt",
	/* the peer check holds the sender it checked last (loader/monitor.c) */
	"pidfd_open",
	"memfd_create", "ftruncate",
	/* libbpf raises RLIMIT_MEMLOCK on kernels without memcg accounting */
	"prlimit64", "setrlimit", "getrlimit",
	NULL,
};

/* Started alone (no supervisor), the loader forks its own unwinder; sandboxed
 * it may not: fork says EPERM and the loader carries on with frame pointers. */
static const char *const loader_eperm[] = {"clone", "clone3", "fork", "vfork", "execve", "execveat",
					   NULL};

static const char *const loader_eacces[] = {"sched_getaffinity", NULL};

const struct seccomp_policy seccomp_policy_loader = {
	.component = "loader",
	.allow = loader_allow,
	.eacces = loader_eacces,
	.eperm = loader_eperm,
};
