/*
 * interp_trust: which files may stand for every process's dynamic loader
 * and libraries.
 *
 * The walker finds a process's dynamic loader without a VMA lookup: the 64
 * bytes mapped at its AT_BASE hash to a file in unwind_interp, and that
 * file's table unwinds, and its symbols name, the frames there (docs/
 * UNWINDING.md, source 6); a library the same way, at its base in the
 * dynamic loader's list (source 7). The lookup is by content, not by
 * identity, so a file that enters unwind_interp stands for the dynamic
 * loader or library of every process whose header and build id match: any user can
 * copy ld.so's or libc's header (and build id) into a file of its own, change the rest
 * (its CFI, its symbols), and have it sampled.
 * So only a file no unprivileged user can have written enters the map; any
 * other file is still unwound, through its VMA, for its own processes.
 *
 * Trusted: a regular file owned by root (as the loader sees the owner: a
 * user namespace's root is its owner's uid here), with no write permission
 * for its group or others, on a file system that is not FUSE (a FUSE server,
 * which an unprivileged user may run through fusermount, reports whatever
 * owner and mode it likes).
 */
#ifndef LOWPROF_LOADER_INTERP_TRUST_H
#define LOWPROF_LOADER_INTERP_TRUST_H

#include <stdbool.h>
#include <sys/stat.h>

/* statfs's f_type of FUSE (linux/magic.h has no name for it). */
#define INTERP_TRUST_FUSE_MAGIC 0x65735546UL

/* The rule above, on a file's status and its file system's f_type. */
bool interp_trust_status(const struct stat *st, unsigned long fs_type);

/* The rule on an open file; false when fstat or fstatfs fails. */
bool interp_trust_fd(int fd);

#endif
