/*
 * TEMPORARY stand-in for loader/file_registry.c so that this branch links:
 * the minimal behaviour of loader/file_registry.h (an array, least recently
 * added dropped first). The real implementation replaces this file.
 */
#define _GNU_SOURCE
#include "loader/file_registry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct fr_entry {
	struct lowprof_file_id id;
	int fd;
	char path[256];
	uint64_t used;
};

struct file_registry {
	struct fr_entry *e;
	size_t n, max;
	uint64_t tick;
};

struct file_registry *file_registry_new(size_t max)
{
	struct file_registry *r = calloc(1, sizeof(*r));

	if (r == NULL || max == 0)
		return free(r), NULL;
	r->e = calloc(max, sizeof(*r->e));
	if (r->e == NULL)
		return free(r), NULL;
	r->max = max;
	return r;
}

void file_registry_free(struct file_registry *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++)
		close(r->e[i].fd);
	free(r->e);
	free(r);
}

static size_t fr_find(const struct file_registry *r, const struct lowprof_file_id *id)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		if (r->e[i].id.ino == id->ino && r->e[i].id.dev == id->dev && r->e[i].id.gen == id->gen)
			return i;
	}
	return SIZE_MAX;
}

int file_registry_add(struct file_registry *r, const struct lowprof_file_id *id, int fd,
		      const char *path, struct lowprof_file_id *evicted)
{
	size_t i = fr_find(r, id), v;
	int rc = 0;

	if (i != SIZE_MAX) {
		close(fd);
		r->e[i].used = ++r->tick;
		return 0;
	}
	if (r->n == r->max) {
		for (v = 0, i = 1; i < r->n; i++)
			if (r->e[i].used < r->e[v].used)
				v = i;
		if (evicted != NULL)
			*evicted = r->e[v].id;
		close(r->e[v].fd);
		r->e[v] = r->e[--r->n];
		rc = 1;
	}
	r->e[r->n].id = *id;
	r->e[r->n].fd = fd;
	snprintf(r->e[r->n].path, sizeof(r->e[r->n].path), "%s", path ? path : "");
	r->e[r->n].used = ++r->tick;
	r->n++;
	return rc;
}

void file_registry_forget(struct file_registry *r, const struct lowprof_file_id *id)
{
	size_t i = fr_find(r, id);

	if (i == SIZE_MAX)
		return;
	close(r->e[i].fd);
	r->e[i] = r->e[--r->n];
}

uint32_t file_registry_kdev(dev_t dev)
{
	return (uint32_t)major(dev) << 20 | (minor(dev) & 0xfffff);
}

dev_t file_registry_udev(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

int file_registry_open(struct file_registry *r, const struct lowprof_file_id *id, char *path,
		       size_t pathlen)
{
	size_t i = fr_find(r, id);
	int fd;

	if (i == SIZE_MAX)
		return -ENOENT;
	fd = fcntl(r->e[i].fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	snprintf(path, pathlen, "%s", r->e[i].path);
	return fd;
}
