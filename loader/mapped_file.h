/*
 * mapped_file: a mapping as /proc/PID/maps shows it, and opening the very file
 * mapped there. Shared by the process tracker (binaries for unwind tables)
 * and the symbol broker (binaries for the exporter).
 *
 * The path in a maps line is only a hint: the process may have replaced it
 * (a rename, a symlink) since it mapped the file, and it resolves in the
 * process's root. mapped_file_open() therefore opens it with openat2 and
 * O_PATH (no side effect whatever it names: a device, a FIFO), following no
 * symlink and no magic link, checks that it is a regular file with the device
 * and inode of the maps line (overlayfs before Linux 6.8 handled explicitly),
 * only then opens that inode for reading, and finally checks that the
 * process still maps it there.
 */
#ifndef LOWPROF_LOADER_MAPPED_FILE_H
#define LOWPROF_LOADER_MAPPED_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The path length /proc/PID/maps can show (PATH_MAX). */
#define MAPPED_FILE_PATH_MAX 4096

/* One /proc/PID/maps line. */
struct mapped_file {
	uint64_t start, end, pgoff, ino;
	unsigned major, minor;
	char perms[5];  /* "r-xp" */
	bool deleted;   /* the path ends in " (deleted)": only map_files reaches it */
	char path[MAPPED_FILE_PATH_MAX]; /* "" for anonymous mappings; " (deleted)" kept */
};

/* Parse one maps line (any kind of mapping). false: not a maps line, or start >= end. */
bool mapped_file_parse_line(const char *line, struct mapped_file *m);

/* An executable mapping of a file: 'x' permission, an inode, an absolute path. */
bool mapped_file_executable(const struct mapped_file *m);

/*
 * Open the file behind m in process pid read-only (O_CLOEXEC | O_NONBLOCK |
 * O_NOCTTY), the first of: PATH under PROC_ROOT/PID/root (RESOLVE_IN_ROOT),
 * PATH from the loader's root (a chroot: maps shows the reader's paths),
 * PROC_ROOT/PID/map_files/START-END (with CAP_CHECKPOINT_RESTORE, which the
 * loader keeps: the only way to a file deleted or replaced since it was
 * mapped), each without symlinks and only when it is a regular
 * file with m's device and inode; then, with recheck, PID must still map it
 * at m's range (one more read of its maps: for fds handed to the exporter).
 * Returns the fd with its stat in *st, or -errno (-ESTALE: the path names
 * another file, or the mapping changed; -ELOOP: a symlink on the way).
 */
int mapped_file_open(const char *proc_root, pid_t pid, const struct mapped_file *m, bool recheck,
		     struct stat *st);

/* The maps line of PID's mapping [start, end) into m: 0, -ENOENT or -errno. */
int mapped_file_find(const char *proc_root, pid_t pid, uint64_t start, uint64_t end,
		     struct mapped_file *m);

/*
 * openat2(dirfd, path, O_PATH, resolve), no side effect whatever it names;
 * a regular file with m's device and inode (overlayfs before 6.8 aside),
 * then that inode opened read-only through PROC_ROOT/self/fd. The fd, or
 * -errno (-ESTALE: not m's file).
 */
int mapped_file_open_checked(const char *proc_root, int dirfd, const char *path, uint64_t resolve,
			     const struct mapped_file *m, struct stat *st);

#endif /* LOWPROF_LOADER_MAPPED_FILE_H */
