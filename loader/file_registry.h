/*
 * file_registry: the files that back sampled user frames, by the identity
 * the kernel reports for them (struct lowprof_file_id, bpf/lowprof.h).
 *
 * The loader opens a file once, when the BPF program first names it (its
 * pending set: a pid and an address that map it, so that the file is found
 * through that process's /proc/PID/map_files or root, its device and inode
 * checked to be exactly the reported ones). The open file serves both the
 * unwind table (built from it) and the exporter's symbolization (the symbol
 * broker hands out a dup of it: the exporter asks once per file, not per
 * process, and never names a path). Bounded: least recently used entries go
 * first, and their eviction is audited with the table's.
 */
#ifndef LOWPROF_LOADER_FILE_REGISTRY_H
#define LOWPROF_LOADER_FILE_REGISTRY_H

#include <stddef.h>

#include "bpf/lowprof.h"

struct file_registry;

/*
 * A read-only fd of the file with this identity (the caller closes it) and
 * the path the loader found it by (for display only: "/usr/lib/x/libc.so.6",
 * or "(deleted)" suffixed). -ENOENT if the loader does not know the file (any
 * more), -errno on failure.
 */
int file_registry_open(struct file_registry *r, const struct lowprof_file_id *id, char *path,
		       size_t pathlen);

#endif
