/*
 * proc_source_direct: open the paths ourselves, under a /proc root and a
 * debug root of the caller's choosing. Only where opening paths is allowed:
 * the unit tests (fixture directories); the sandboxed exporter uses the broker.
 */
#include "exporter/symbols/proc_source_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ipc/sym_wire.h"

struct proc_source_direct_file {
	struct lowprof_file_id id;
	char path[256];
};

struct proc_source_direct {
	struct proc_source base; /* first */
	char proc_root[256];
	char debug_root[256];  /* "" for none */
	char kallsyms[256];    /* "" for none */
	struct proc_source_direct_file files[PROC_SOURCE_DIRECT_MAX_FILES];
	size_t nfiles;
};

/* The kernel's encoding of a device (major << 20 | minor), as BPF reports it. */
static uint32_t psd_kdev(dev_t dev)
{
	return ((uint32_t)major(dev) << 20) | ((uint32_t)minor(dev) & 0xfffffu);
}

static struct proc_source_direct *psd(struct proc_source *src)
{
	return (struct proc_source_direct *)src;
}

static int psd_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	return fd >= 0 ? fd : -errno;
}

static int psd_open_maps(struct proc_source *src, uint32_t pid)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/maps", psd(src)->proc_root, pid);
	return psd_open(path);
}

/*
 * map_files is the mapped file itself (even deleted) but needs privilege;
 * ROOT/PID/root/PATH reaches into a container's mount namespace; PATH alone
 * serves processes that have exited. Overlayfs reports its own st_dev but the
 * real st_ino, so the namespace paths check the inode only.
 */
static int psd_open_mapped_file(struct proc_source *src, uint32_t pid, const struct proc_maps_entry *e)
{
	const char *root = psd(src)->proc_root;
	uint64_t dev = makedev(e->dev_major, e->dev_minor);
	char path[4096 + 320];
	struct stat st;
	int fd, i;

	for (i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, root,
				 pid, e->start, e->end);
		else if (e->deleted || e->path[0] != '/')
			break;
		else if (i == 1)
			snprintf(path, sizeof(path), "%s/%" PRIu32 "/root%s", root, pid, e->path);
		else
			snprintf(path, sizeof(path), "%s", e->path);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_ino == e->inode &&
		    (i < 2 || (uint64_t)st.st_dev == dev))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* Only a file added by identity, and only while the path is still that file. */
static int psd_open_file(struct proc_source *src, const struct lowprof_file_id *id, char *path,
			 size_t pathlen)
{
	struct proc_source_direct *d = psd(src);
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < d->nfiles; i++) {
		const struct lowprof_file_id *k = &d->files[i].id;

		if (k->ino == id->ino && k->dev == id->dev && k->gen == id->gen)
			break;
	}
	if (i == d->nfiles)
		return -ENOENT;
	fd = psd_open(d->files[i].path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != id->ino || psd_kdev(st.st_dev) != id->dev) {
		close(fd);
		return -ENOENT;
	}
	if (pathlen > 0)
		snprintf(path, pathlen, "%s", d->files[i].path);
	return fd;
}

int proc_source_direct_add_file(struct proc_source *src, const char *path,
				struct lowprof_file_id *id)
{
	struct proc_source_direct *d = psd(src);
	struct stat st;

	if (src->ops->open_file != psd_open_file)
		return -EINVAL;
	if (d->nfiles == PROC_SOURCE_DIRECT_MAX_FILES)
		return -ENOSPC;
	if (strlen(path) >= sizeof(d->files[0].path))
		return -ENAMETOOLONG;
	if (stat(path, &st) != 0)
		return -errno;
	memset(id, 0, sizeof(*id));
	id->ino = st.st_ino;
	id->dev = psd_kdev(st.st_dev);
	d->files[d->nfiles].id = *id;
	snprintf(d->files[d->nfiles].path, sizeof(d->files[0].path), "%s", path);
	d->nfiles++;
	return 0;
}

static int psd_open_debug_file(struct proc_source *src, const char *build_id)
{
	const char *root = psd(src)->debug_root;
	char path[512];

	if (root[0] == '\0')
		return -ENOENT;
	if (!sym_wire_build_id_valid(build_id))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root, build_id,
			     build_id + 2) >= sizeof(path))
		return -ENAMETOOLONG;
	return psd_open(path);
}

static int psd_open_kallsyms(struct proc_source *src)
{
	if (psd(src)->kallsyms[0] == '\0')
		return -ENOENT;
	return psd_open(psd(src)->kallsyms);
}

/* Up to SYM_WIRE_MAX_CGROUP bytes; a longer file is cut after its last whole line. */
static int psd_read_cgroup(const char *path, char **out, size_t *outlen)
{
	char *buf = malloc(SYM_WIRE_MAX_CGROUP);
	size_t len = 0;
	ssize_t n;
	int fd, rc = 0;

	if (buf == NULL)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	while (len < SYM_WIRE_MAX_CGROUP) {
		n = read(fd, buf + len, SYM_WIRE_MAX_CGROUP - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len == SYM_WIRE_MAX_CGROUP) {
		while (len > 0 && buf[len - 1] != '\n')
			len--;
	}
	if (rc != 0 && len == 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

static int psd_process(struct proc_source *src, uint32_t pid, char *exe, size_t exelen,
		       char **cgroup, size_t *cgroup_len)
{
	char path[320];
	ssize_t n;
	int rc_exe = 0, rc_cg;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/exe", psd(src)->proc_root, pid);
	n = exelen > 1 ? readlink(path, exe, exelen - 1) : -1;
	if (n > 0)
		exe[n] = '\0';
	else
		rc_exe = -errno;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/cgroup", psd(src)->proc_root, pid);
	rc_cg = psd_read_cgroup(path, cgroup, cgroup_len);
	return n > 0 || rc_cg == 0 ? 0 : (rc_exe != 0 ? rc_exe : rc_cg);
}

static const struct proc_source_ops psd_ops = {
	.open_maps = psd_open_maps,
	.open_mapped_file = psd_open_mapped_file,
	.open_file = psd_open_file,
	.open_debug_file = psd_open_debug_file,
	.open_kallsyms = psd_open_kallsyms,
	.process = psd_process,
};

struct proc_source *proc_source_direct_new(const char *proc_root, const char *debug_root,
					   const char *kallsyms_path)
{
	struct proc_source_direct *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->base.ops = &psd_ops;
	snprintf(d->proc_root, sizeof(d->proc_root), "%s", proc_root ? proc_root : "/proc");
	snprintf(d->debug_root, sizeof(d->debug_root), "%s", debug_root ? debug_root : "");
	snprintf(d->kallsyms, sizeof(d->kallsyms), "%s", kallsyms_path ? kallsyms_path : "");
	return &d->base;
}
