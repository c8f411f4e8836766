/*
 * What every component may call: memory, exit, signals, time, and the plain
 * I/O on fds it already holds. Found with strace -f over real runs (start,
 * interval writes, restarts, shutdown); see docs/SECURITY.md.
 */
#include "seccomp/seccomp_policy.h"

const char *const seccomp_base_allow[] = {
	/* fds already held */
	"read", "write", "close", "lseek", "pread64", "pwrite64", "readv", "writev",
	"fcntl", "dup", "dup2", "dup3", "newfstatat", "fstat", "statx", "poll", "ppoll",
	/* memory; glibc malloc trims with madvise, realloc uses mremap */
	"mmap", "munmap", "mprotect", "mremap", "madvise", "brk",
	/* exit, signals, and abort() (raise -> tgkill) */
	"exit", "exit_group", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
	"restart_syscall", "tgkill", "gettid", "getpid", "getppid",
	/* identity read back by log and privilege checks */
	"getuid", "geteuid", "getgid", "getegid",
	/* time (vDSO normally; these when it is not mapped) and sleeping */
	"clock_gettime", "clock_getres", "gettimeofday", "clock_nanosleep", "nanosleep",
	/* libc internals: locks, thread-exit lists, randomness for hashing and qsort's memory probe */
	"futex", "set_robust_list", "set_tid_address", "rseq", "sched_yield", "getrandom", "sysinfo",
	NULL,
};
