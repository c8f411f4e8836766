/*
 * Where the exporter's view of other processes comes from: their memory maps,
 * the files mapped into them, separate debug files, kallsyms, and each
 * process's executable path and cgroup.
 *
 * The exporter runs as an unprivileged user under a seccomp filter that lets
 * it open no path (docs/SECURITY.md), so in a real run all of it comes from
 * the loader: proc_source_broker asks over the symbol-source socket
 * (ipc/sym_wire.h) and gets file descriptors back. proc_source_direct opens
 * the paths itself (under a /proc root and a debug root of the caller's
 * choosing): the unit tests use it with fixture directories.
 *
 * Every open returns a read-only fd the caller closes, or -errno; -EAGAIN
 * means "not now" (the loader is restarting or busy): the callers retry later
 * rather than remember a failure.
 */
#ifndef LOWPROF_EXPORTER_PROC_SOURCE_H
#define LOWPROF_EXPORTER_PROC_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/lowprof.h"
#include "exporter/symbols/proc_maps.h"

struct proc_source;

struct proc_source_stats {
	uint64_t requests;    /* asked of the loader (broker) or opened (direct) */
	uint64_t failures;    /* answered with an error */
	uint64_t timeouts;    /* no answer in time (broker) */
	uint64_t stale;       /* late answers to earlier requests, discarded (broker) */
	uint64_t unavailable; /* not asked: the loader did not answer recently (broker) */
};

/*
 * Direct reads: proc_root ("/proc"), debug_root ("/usr/lib/debug"; NULL or ""
 * for none), kallsyms_path ("/proc/kallsyms"; NULL for none). NULL when out
 * of memory.
 */
struct proc_source *proc_source_direct_new(const char *proc_root, const char *debug_root,
					   const char *kallsyms_path);

/*
 * The direct source's stand-in for the loader's file registry: path is a file
 * proc_source_open_file may open, by the identity written to *id (its device
 * in the kernel's encoding, its inode, generation 0), checked again at each
 * open. At most PROC_SOURCE_DIRECT_MAX_FILES. 0, or -errno (stat failed,
 * -ENOSPC when full).
 */
#define PROC_SOURCE_DIRECT_MAX_FILES 16
int proc_source_direct_add_file(struct proc_source *src, const char *path,
				struct lowprof_file_id *id);

/*
 * Through the loader, over the SOCK_SEQPACKET socket sock (made non-blocking
 * here; not closed by proc_source_free). Each request waits at most
 * timeout_ms for its answer; after a timeout, requests fail at once with
 * -EAGAIN for a second, so a restarting loader costs one wait, not one per
 * lookup. stop_fd (-1: none) becoming readable ends a wait as a timeout
 * does: the process's signalfd, so that a stop asked for while the loader
 * is silent (it never started) is not held up by the wait; the fd is only
 * polled, never read. NULL when out of memory.
 */
struct proc_source *proc_source_broker_new(int sock, unsigned timeout_ms, int stop_fd);

void proc_source_free(struct proc_source *src);

/* /proc/PID/maps. */
int proc_source_open_maps(struct proc_source *src, uint32_t pid);
/* The same for n pids at once (the broker asks for all before waiting):
 * fds[i] is the fd or -errno for pids[i]. */
void proc_source_open_maps_many(struct proc_source *src, const uint32_t *pids, size_t n, int *fds);
/* The file mapped by entry e of pid's maps, checked to be that very file (inode). */
int proc_source_open_mapped_file(struct proc_source *src, uint32_t pid,
				 const struct proc_maps_entry *e);
/*
 * The file that backs sampled code, by the identity the BPF program reported
 * (a sample's file list): the broker asks the loader, which answers only for
 * a file it opened and registered itself. path (pathlen bytes, may be 0)
 * gets the path the file was found by, for display ("" when unknown).
 */
int proc_source_open_file(struct proc_source *src, const struct lowprof_file_id *id, char *path,
			  size_t pathlen);
/* DEBUG_ROOT/.build-id/xx/rest.debug of a lowercase-hex build id. */
int proc_source_open_debug_file(struct proc_source *src, const char *build_id);
/* /proc/kallsyms. */
int proc_source_open_kallsyms(struct proc_source *src);

/*
 * pid's executable path (readlink of /proc/PID/exe, "" when unknown, into exe
 * of exelen bytes) and its /proc/PID/cgroup text (malloc'd into *cgroup, not
 * NUL-terminated, *cgroup_len bytes; NULL when unknown). 0 when anything was
 * learnt, else -errno.
 */
int proc_source_process(struct proc_source *src, uint32_t pid, char *exe, size_t exelen,
			char **cgroup, size_t *cgroup_len);

void proc_source_get_stats(const struct proc_source *src, struct proc_source_stats *out);

/* The broker's wait for each answer from now on (the direct source has none). */
void proc_source_set_timeout(struct proc_source *src, unsigned timeout_ms);

#endif /* LOWPROF_EXPORTER_PROC_SOURCE_H */
