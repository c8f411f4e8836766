/* mapped_file: /proc/PID/maps lines and the files behind them (see the header). */
#define _GNU_SOURCE
#include "loader/mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAPPED_FILE_DELETED " (deleted)"

bool mapped_file_parse_line(const char *line, struct mapped_file *m)
{
	size_t plen, slen = strlen(MAPPED_FILE_DELETED);
	int path_at = 0;

	memset(m->perms, 0, sizeof(m->perms));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &m->start,
		   &m->end, m->perms, &m->pgoff, &m->major, &m->minor, &m->ino, &path_at) < 7)
		return false;
	if (strlen(m->perms) != 4)
		return false;
	/* No %n when the line ends right after the inode: an anonymous mapping. */
	snprintf(m->path, sizeof(m->path), "%s", path_at > 0 ? line + path_at : "");
	m->path[strcspn(m->path, "\n")] = '\0';
	plen = strlen(m->path);
	m->deleted = plen > slen && strcmp(m->path + plen - slen, MAPPED_FILE_DELETED) == 0;
	return m->start < m->end;
}

bool mapped_file_executable(const struct mapped_file *m)
{
	return m->perms[2] == 'x' && m->ino != 0 && m->path[0] == '/';
}

/*
 * Open path with O_PATH (no side effect: a device or FIFO is not opened for
 * real), check it with fstat, and only then open that same inode for reading
 * through PROC_ROOT/self/fd. Returns the fd, or -errno (-ESTALE: not the file).
 */
static int mapped_file_open_checked(const char *proc_root, const char *path,
				    const struct mapped_file *m, struct stat *st)
{
	char self[128];
	int pfd, fd, err;

	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st) != 0) {
		err = -errno;
		close(pfd);
		return err;
	}
	if (!S_ISREG(st->st_mode) || st->st_ino != m->ino) {
		close(pfd);
		return -ESTALE;
	}
	snprintf(self, sizeof(self), "%s/self/fd/%d", proc_root, pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	return fd >= 0 ? fd : err;
}

int mapped_file_open(const char *proc_root, pid_t pid, const struct mapped_file *m, struct stat *st)
{
	char path[MAPPED_FILE_PATH_MAX + 256];
	int fd, first = -ENOENT;

	/* " (deleted)" is not part of any name: the file is gone from its path.
	 * Through the process's root the inode is checked, not the device: overlayfs
	 * (containers) reports its own st_dev there, while maps shows the lower
	 * file system's device and the real inode. */
	if (!m->deleted) {
		snprintf(path, sizeof(path), "%s/%d/root%s", proc_root, (int)pid, m->path);
		fd = mapped_file_open_checked(proc_root, path, m, st);
		if (fd >= 0)
			return fd;
		first = fd;
	}
	/* Deleted or replaced since it was mapped: map_files still reaches the
	 * mapped file itself (with CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN). */
	snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, proc_root, (int)pid,
		 m->start, m->end);
	fd = mapped_file_open_checked(proc_root, path, m, st);
	if (fd >= 0)
		return fd;
	/* The path's error says more than map_files' usual EPERM. */
	return m->deleted ? fd : first;
}
