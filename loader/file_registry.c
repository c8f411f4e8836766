/* file_registry: the open files behind sampled frames, by kernel identity (see the header). */
#include "loader/file_registry.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/hash.h"

/* Intrusive LRU list: most recently used at head.next. */
struct file_registry_lru {
	struct file_registry_lru *prev, *next;
};

struct file_registry_entry {
	struct file_registry_lru lru; /* first member: an lru pointer is an entry pointer */
	struct file_registry_entry *hnext;
	struct lowprof_file_id id;
	int fd;
	char *path;
};

struct file_registry {
	struct file_registry_entry **buckets;
	size_t nbuckets; /* a power of two, at least max / 2: chains stay short */
	size_t n, max;
	struct file_registry_lru lru;
};

static bool file_registry_same(const struct lowprof_file_id *a, const struct lowprof_file_id *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->gen == b->gen;
}

static struct file_registry_entry **file_registry_slot(struct file_registry *r,
							const struct lowprof_file_id *id)
{
	uint64_t h = hash_mix64(id->ino ^ hash_mix64(((uint64_t)id->dev << 32) | id->gen));
	struct file_registry_entry **pp = &r->buckets[h & (r->nbuckets - 1)];

	while (*pp != NULL && !file_registry_same(&(*pp)->id, id))
		pp = &(*pp)->hnext;
	return pp;
}

static void file_registry_lru_unlink(struct file_registry_lru *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
}

static void file_registry_lru_front(struct file_registry *r, struct file_registry_lru *n)
{
	n->next = r->lru.next;
	n->prev = &r->lru;
	r->lru.next->prev = n;
	r->lru.next = n;
}

static void file_registry_remove(struct file_registry *r, struct file_registry_entry *e)
{
	struct file_registry_entry **pp = file_registry_slot(r, &e->id);

	*pp = e->hnext;
	file_registry_lru_unlink(&e->lru);
	close(e->fd);
	free(e->path);
	free(e);
	r->n--;
}

struct file_registry *file_registry_new(size_t max)
{
	struct file_registry *r = calloc(1, sizeof(*r));
	size_t nb = 16;

	if (r == NULL)
		return NULL;
	r->max = max > 0 ? max : 1;
	while (nb < r->max / 2)
		nb <<= 1;
	r->buckets = calloc(nb, sizeof(*r->buckets));
	if (r->buckets == NULL) {
		free(r);
		return NULL;
	}
	r->nbuckets = nb;
	r->lru.prev = r->lru.next = &r->lru;
	return r;
}

void file_registry_free(struct file_registry *r)
{
	if (r == NULL)
		return;
	while (r->n > 0)
		file_registry_remove(r, (struct file_registry_entry *)r->lru.next);
	free(r->buckets);
	free(r);
}

int file_registry_add(struct file_registry *r, const struct lowprof_file_id *id, int fd,
		      const char *path, struct lowprof_file_id *evicted)
{
	struct file_registry_entry **pp = file_registry_slot(r, id), *e = *pp, *old;

	if (e != NULL) {
		/* The first fd stays: the exporter may be reading through a dup of it. */
		close(fd);
		file_registry_lru_unlink(&e->lru);
		file_registry_lru_front(r, &e->lru);
		return 0;
	}
	e = calloc(1, sizeof(*e));
	if (e != NULL)
		e->path = strdup(path != NULL ? path : "");
	if (e == NULL || e->path == NULL) {
		free(e);
		close(fd);
		return -ENOMEM;
	}
	e->id = *id;
	e->fd = fd;
	*pp = e;
	file_registry_lru_front(r, &e->lru);
	r->n++;
	if (r->n <= r->max)
		return 0;
	old = (struct file_registry_entry *)r->lru.prev;
	if (evicted != NULL)
		*evicted = old->id;
	file_registry_remove(r, old);
	return 1;
}

void file_registry_forget(struct file_registry *r, const struct lowprof_file_id *id)
{
	struct file_registry_entry *e = *file_registry_slot(r, id);

	if (e != NULL)
		file_registry_remove(r, e);
}

uint32_t file_registry_kdev(dev_t dev)
{
	/* The kernel's new_encode_dev() of the VMA's superblock, as BPF reads it. */
	return ((uint32_t)major(dev) << 20) | ((uint32_t)minor(dev) & 0xfffffu);
}

dev_t file_registry_udev(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffffu);
}

int file_registry_open(struct file_registry *r, const struct lowprof_file_id *id, char *path,
		       size_t pathlen)
{
	struct file_registry_entry *e = *file_registry_slot(r, id);
	int fd;

	if (pathlen > 0)
		path[0] = '\0';
	if (e == NULL)
		return -ENOENT;
	/* A file still asked for is in use: it is the last to go. */
	file_registry_lru_unlink(&e->lru);
	file_registry_lru_front(r, &e->lru);
	fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (pathlen > 0)
		snprintf(path, pathlen, "%s", e->path);
	return fd;
}
