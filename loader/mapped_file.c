/* mapped_file: /proc/PID/maps lines and the files behind them (see the header). */
#define _GNU_SOURCE
#include "loader/mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
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

/* overlayfs' f_type (linux/magic.h). */
#define MAPPED_FILE_OVERLAYFS_MAGIC 0x794c7630

/*
 * Is the file behind pfd (fstat in *st) the one of m? Its inode, and its
 * device: the kernel's own report in the maps line. One case is explicit:
 * before Linux 6.8, maps showed the real (lower or upper) file system's
 * device of a file mapped through overlayfs, while the overlay path reports
 * the overlay's st_dev with the real inode number. A file on an overlay with
 * m's inode is accepted then: only its mounter's files are reachable through
 * an overlay (it checks the mounter's credentials on the real file), and an
 * unprivileged mounter can read nothing the loader must guard.
 */
static bool mapped_file_same(int pfd, const struct stat *st, const struct mapped_file *m)
{
	struct statfs sfs;

	if (!S_ISREG(st->st_mode) || st->st_ino != m->ino)
		return false;
	if (st->st_dev == makedev(m->major, m->minor))
		return true;
	return fstatfs(pfd, &sfs) == 0 && sfs.f_type == MAPPED_FILE_OVERLAYFS_MAGIC;
}

/*
 * openat2(dirfd, path, O_PATH, resolve): no side effect whatever it names (a
 * device, a FIFO), no symlink and no magic link followed; check it is m's
 * file, and only then open that same inode for reading through
 * PROC_ROOT/self/fd. Returns the fd, or -errno (-ESTALE: not the file,
 * -ELOOP: a symlink on the way).
 */
int mapped_file_open_checked(const char *proc_root, int dirfd, const char *path, uint64_t resolve,
			     const struct mapped_file *m, struct stat *st)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = resolve};
	char self[128];
	int pfd, fd, err;

	pfd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st) != 0) {
		err = -errno;
		close(pfd);
		return err;
	}
	if (!mapped_file_same(pfd, st, m)) {
		close(pfd);
		return -ESTALE;
	}
	snprintf(self, sizeof(self), "%s/self/fd/%d", proc_root, pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	return fd >= 0 ? fd : err;
}

int mapped_file_find(const char *proc_root, pid_t pid, uint64_t start, uint64_t end,
		     struct mapped_file *m)
{
	char path[128], *line = NULL;
	size_t cap = 0;
	int rc = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (mapped_file_parse_line(line, m) && m->start == start && m->end == end) {
			rc = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

/* Does PID still map m's file at m's range? 0, -ESTALE (not any more) or -errno. */
static int mapped_file_recheck(const char *proc_root, pid_t pid, const struct mapped_file *m)
{
	struct mapped_file *now = malloc(sizeof(*now));
	int rc;

	if (now == NULL)
		return -ENOMEM;
	rc = mapped_file_find(proc_root, pid, m->start, m->end, now);
	if (rc == -ENOENT)
		rc = -ESTALE;
	else if (rc == 0 && (now->ino != m->ino || now->major != m->major || now->minor != m->minor))
		rc = -ESTALE;
	free(now);
	return rc;
}

/* The first way that reaches m's file: fd, or the most telling -errno. */
static int mapped_file_try(const char *proc_root, pid_t pid, const struct mapped_file *m,
			   struct stat *st)
{
	const uint64_t strict = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	char path[MAPPED_FILE_PATH_MAX + 256];
	int root, fd, first = -ENOENT;

	/* " (deleted)" is not part of any name: the file is gone from its path. */
	if (!m->deleted) {
		/* Within the process's root (a container: maps shows its paths), which
		 * no "..", absolute symlink or magic link leaves. */
		snprintf(path, sizeof(path), "%s/%d/root", proc_root, (int)pid);
		root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root < 0)
			return -errno;
		fd = mapped_file_open_checked(proc_root, root, m->path, strict | RESOLVE_IN_ROOT, m, st);
		close(root);
		if (fd >= 0)
			return fd;
		first = fd;
		/* A chroot in the loader's mount namespace: maps shows the path from
		 * the reader's root, the loader's. The device and inode decide. */
		fd = mapped_file_open_checked(proc_root, AT_FDCWD, m->path, strict, m, st);
		if (fd >= 0)
			return fd;
	}
	/* Deleted or replaced since it was mapped: map_files still reaches the
	 * mapped file itself (with CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN). */
	snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, proc_root, (int)pid,
		 m->start, m->end);
	fd = mapped_file_open_checked(proc_root, AT_FDCWD, path, 0, m, st);
	if (fd >= 0)
		return fd;
	/* The path's error says more than map_files' usual EPERM. */
	return m->deleted ? fd : first;
}

int mapped_file_open(const char *proc_root, pid_t pid, const struct mapped_file *m, bool recheck,
		     struct stat *st)
{
	int fd = mapped_file_try(proc_root, pid, m, st), rc;

	if (fd < 0 || !recheck)
		return fd;
	/* The process may have gone (its pid reused) or unmapped the file while
	 * it was looked for: hand out only what it still maps. */
	rc = mapped_file_recheck(proc_root, pid, m);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}
