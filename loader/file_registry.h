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
#include <stdint.h>
#include <sys/types.h>

#include "bpf/lowprof.h"

struct file_registry;

/* At most max files (LRU beyond it). NULL on ENOMEM. */
struct file_registry *file_registry_new(size_t max);
void file_registry_free(struct file_registry *r);

/*
 * Remember fd (read-only, of the file with identity id; the registry owns it
 * from now on, also on failure) and the path it was found by. A file already
 * known keeps its first fd (fd is closed). Makes it the most recently used;
 * past the bound the least recently used entry is dropped and its identity
 * written to *evicted (when evicted is not NULL: the caller audits it).
 * Returns 1 when an entry was evicted, 0 otherwise, -errno on failure.
 */
int file_registry_add(struct file_registry *r, const struct lowprof_file_id *id, int fd,
		      const char *path, struct lowprof_file_id *evicted);

/* Forget a file (its table was evicted, or it proved not to be what it claimed). */
void file_registry_forget(struct file_registry *r, const struct lowprof_file_id *id);

/* Kernel device encoding (major << 20 | minor) of a user-space dev_t, and back. */
uint32_t file_registry_kdev(dev_t dev);
dev_t file_registry_udev(uint32_t kdev);

/*
 * A read-only fd of the file with this identity (the caller closes it) and
 * the path the loader found it by (for display only: "/usr/lib/x/libc.so.6",
 * or "(deleted)" suffixed). -ENOENT if the loader does not know the file (any
 * more), -errno on failure.
 */
int file_registry_open(struct file_registry *r, const struct lowprof_file_id *id, char *path,
		       size_t pathlen);

#endif
