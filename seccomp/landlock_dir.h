/*
 * landlock_dir: confine a process's file system access to one directory,
 * with what the kernel enforces on paths (Landlock). The seccomp filter
 * compares a dirfd argument only, which an absolute path or ".." ignores;
 * Landlock checks where the path resolves: no absolute path, "..", or
 * symlink out of the directory opens anything outside it.
 *
 * Inside the directory (and below it): read, write, create and remove regular
 * files, truncate, list. Everything else the kernel's Landlock ABI can name is
 * refused everywhere: reading or executing any other file, making
 * directories, devices, symlinks, sockets or FIFOs. Network access is not
 * handled (the exporter's collector is over TCP; the seccomp filter limits
 * its sockets). Inherited across fork and exec; needs NO_NEW_PRIVS (set here).
 */
#ifndef LOWPROF_SECCOMP_LANDLOCK_DIR_H
#define LOWPROF_SECCOMP_LANDLOCK_DIR_H

#include <stddef.h>

/*
 * Restrict the calling process (all its threads: call it before any thread
 * starts) to dirfd's directory. Returns the Landlock ABI version used (>= 1),
 * or -errno with a one-line message in err: -EOPNOTSUPP when the kernel has
 * no Landlock (not built, or disabled at boot), any other error as it came.
 */
int landlock_dir_confine(int dirfd, char *err, size_t errlen);

#endif /* LOWPROF_SECCOMP_LANDLOCK_DIR_H */
