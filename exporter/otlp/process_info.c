/*
 * Per-pid metadata cache: a fixed array of entries used as a FIFO ring (the
 * oldest is evicted first: cheap, and the exporter looks a pid up when it first
 * sees it, so age of first sight is the right order), indexed by a chained hash
 * on pid.
 */
#include "exporter/otlp/process_info.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mono_clock.h"

#define PROCESS_INFO_NONE UINT32_MAX

struct process_info_entry {
	struct process_info info;
	char *exe_path;         /* owned; NULL when unknown */
	uint32_t next;          /* hash chain */
	bool used;
	bool image_known;       /* image_id set: a sample's (process_info_observe) */
	uint16_t image_id;
	uint64_t used_ns;       /* last looked up (mono_ns) */
};

struct process_info_cache {
	struct proc_source *src; /* not owned */
	struct process_info_entry *entries;
	size_t max_entries;
	size_t count;
	size_t next_slot;       /* ring position of the next insert (the oldest when full) */
	uint32_t *buckets;
	size_t nbuckets;        /* power of two */
};

static size_t process_info_bucket(const struct process_info_cache *c, uint32_t pid)
{
	/* Fibonacci hashing: pids are dense, spread them over the buckets. */
	return (size_t)((pid * 2654435769u) & (uint32_t)(c->nbuckets - 1));
}

struct process_info_cache *process_info_new(struct proc_source *src, size_t max_entries)
{
	struct process_info_cache *c = calloc(1, sizeof(*c));
	size_t i;

	if (c == NULL)
		return NULL;
	if (max_entries == 0)
		max_entries = PROCESS_INFO_DEFAULT_MAX_ENTRIES;
	c->max_entries = max_entries;
	c->nbuckets = 16;
	while (c->nbuckets < max_entries && c->nbuckets < (1u << 30))
		c->nbuckets <<= 1;
	c->src = src;
	c->entries = calloc(max_entries, sizeof(*c->entries));
	c->buckets = malloc(c->nbuckets * sizeof(*c->buckets));
	if (c->entries == NULL || c->buckets == NULL) {
		process_info_free(c);
		return NULL;
	}
	for (i = 0; i < c->nbuckets; i++)
		c->buckets[i] = PROCESS_INFO_NONE;
	return c;
}

void process_info_free(struct process_info_cache *c)
{
	size_t i;

	if (c == NULL)
		return;
	if (c->entries != NULL) {
		for (i = 0; i < c->max_entries; i++)
			free(c->entries[i].exe_path);
	}
	free(c->entries);
	free(c->buckets);
	free(c);
}

size_t process_info_count(const struct process_info_cache *c)
{
	return c->count;
}

static uint32_t process_info_find(const struct process_info_cache *c, uint32_t pid)
{
	uint32_t i = c->buckets[process_info_bucket(c, pid)];

	while (i != PROCESS_INFO_NONE) {
		if (c->entries[i].info.pid == pid)
			return i;
		i = c->entries[i].next;
	}
	return PROCESS_INFO_NONE;
}

bool process_info_peek(const struct process_info_cache *c, uint32_t pid,
		       const struct process_info **out)
{
	uint32_t i = process_info_find(c, pid);

	if (i == PROCESS_INFO_NONE)
		return false;
	*out = &c->entries[i].info;
	return true;
}

static void process_info_unlink(struct process_info_cache *c, uint32_t slot)
{
	uint32_t *link = &c->buckets[process_info_bucket(c, c->entries[slot].info.pid)];

	while (*link != PROCESS_INFO_NONE) {
		if (*link == slot) {
			*link = c->entries[slot].next;
			return;
		}
		link = &c->entries[*link].next;
	}
}

static bool process_info_is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')))
			return false;
	}
	return true;
}

static bool process_info_has_prefix(const char *s, size_t n, const char *prefix)
{
	size_t pl = strlen(prefix);

	return n >= pl && memcmp(s, prefix, pl) == 0;
}

/* One path component: "ID", "docker-ID.scope", "cri-containerd-ID.scope",
 * "crio-ID.scope", "libpod-ID.scope" (and the like, "PREFIX-ID[.scope]"). */
static bool process_info_component_id(const char *s, size_t n, char *out)
{
	size_t i;

	if (n >= 6 && memcmp(s + n - 6, ".scope", 6) == 0)
		n -= 6;
	if (n < PROCESS_INFO_CONTAINER_ID_LEN)
		return false;
	/* conmon is podman/cri-o's monitor process, not the container. */
	if (process_info_has_prefix(s, n, "crio-conmon-") || process_info_has_prefix(s, n, "libpod-conmon-"))
		return false;
	if (n > PROCESS_INFO_CONTAINER_ID_LEN) {
		char sep = s[n - PROCESS_INFO_CONTAINER_ID_LEN - 1];

		if (sep != '-' && sep != ':')
			return false;
	}
	s += n - PROCESS_INFO_CONTAINER_ID_LEN;
	if (!process_info_is_hex(s, PROCESS_INFO_CONTAINER_ID_LEN))
		return false;
	for (i = 0; i < PROCESS_INFO_CONTAINER_ID_LEN; i++) {
		char ch = s[i];

		out[i] = (ch >= 'A' && ch <= 'F') ? (char)(ch - 'A' + 'a') : ch;
	}
	out[PROCESS_INFO_CONTAINER_ID_LEN] = '\0';
	return true;
}

/* The deepest component of a cgroup path that names a container. */
static bool process_info_path_id(const char *path, size_t n, char *out)
{
	size_t start = 0, i;
	bool found = false;

	for (i = 0; i <= n; i++) {
		if (i < n && path[i] != '/')
			continue;
		if (i > start && process_info_component_id(path + start, i - start, out))
			found = true;
		start = i + 1;
	}
	return found;
}

bool process_info_parse_container_id(const char *text, size_t len,
				     char out[PROCESS_INFO_CONTAINER_ID_LEN + 1])
{
	char v1[PROCESS_INFO_CONTAINER_ID_LEN + 1], cand[PROCESS_INFO_CONTAINER_ID_LEN + 1];
	size_t pos = 0;
	bool have_v1 = false;

	if (text == NULL)
		return false;
	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t linelen = nl != NULL ? (size_t)(nl - line) : len - pos;
		const char *c1, *c2;
		bool v2;

		pos += linelen + 1;
		/* "hierarchy-ID:controllers:path"; a line without both colons is skipped. */
		c1 = memchr(line, ':', linelen);
		if (c1 == NULL)
			continue;
		c2 = memchr(c1 + 1, ':', linelen - (size_t)(c1 + 1 - line));
		if (c2 == NULL)
			continue;
		v2 = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
		if (!process_info_path_id(c2 + 1, linelen - (size_t)(c2 + 1 - line), cand))
			continue;
		if (v2) {
			memcpy(out, cand, sizeof(cand));
			return true;
		}
		if (!have_v1) {
			memcpy(v1, cand, sizeof(cand));
			have_v1 = true;
		}
	}
	if (have_v1)
		memcpy(out, v1, sizeof(v1));
	return have_v1;
}

/* The executable path, " (deleted)" removed; the container id from the cgroup text. */
static char *process_info_read(struct process_info_cache *c, uint32_t pid, struct process_info *info)
{
	static const char deleted[] = " (deleted)";
	char target[PATH_MAX], *cgroup = NULL;
	size_t len, cglen = 0;

	if (proc_source_process(c->src, pid, target, sizeof(target), &cgroup, &cglen) != 0)
		return NULL;
	if (cgroup == NULL || !process_info_parse_container_id(cgroup, cglen, info->container_id))
		info->container_id[0] = '\0';
	free(cgroup);
	len = strlen(target);
	if (len == 0)
		return NULL;
	if (len > sizeof(deleted) - 1 && strcmp(target + len - (sizeof(deleted) - 1), deleted) == 0)
		target[len - (sizeof(deleted) - 1)] = '\0';
	return strdup(target);
}

/* Forget the entry in slot; the ring takes the slot again when it comes round. */
static void process_info_drop(struct process_info_cache *c, uint32_t slot)
{
	struct process_info_entry *e = &c->entries[slot];

	process_info_unlink(c, slot);
	free(e->exe_path);
	memset(e, 0, sizeof(*e));
	c->count--;
}

/* A new entry for pid (not cached), read now; the oldest goes when full. */
static struct process_info_entry *process_info_insert(struct process_info_cache *c, uint32_t pid)
{
	uint32_t slot = (uint32_t)c->next_slot;
	struct process_info_entry *e = &c->entries[slot];
	const char *slash;
	size_t b;

	if (e->used)
		process_info_drop(c, slot);
	e->info.pid = pid;
	e->exe_path = process_info_read(c, pid, &e->info);
	e->info.exe_path = e->exe_path != NULL ? e->exe_path : "";
	slash = strrchr(e->info.exe_path, '/');
	e->info.exe_name = slash != NULL ? slash + 1 : e->info.exe_path;
	e->used = true;
	b = process_info_bucket(c, pid);
	e->next = c->buckets[b];
	c->buckets[b] = slot;
	c->count++;
	c->next_slot = (c->next_slot + 1) % c->max_entries;
	return e;
}

const struct process_info *process_info_lookup(struct process_info_cache *c, uint32_t pid)
{
	uint32_t slot = process_info_find(c, pid);
	struct process_info_entry *e =
		slot != PROCESS_INFO_NONE ? &c->entries[slot] : process_info_insert(c, pid);

	e->used_ns = mono_ns();
	return &e->info;
}

const struct process_info *process_info_observe(struct process_info_cache *c, uint32_t pid,
						uint16_t image_id)
{
	uint32_t slot = process_info_find(c, pid);
	struct process_info_entry *e = slot != PROCESS_INFO_NONE ? &c->entries[slot] : NULL;

	if (e != NULL && e->image_known && e->image_id != image_id) {
		process_info_drop(c, slot);
		e = NULL;
	}
	if (e == NULL)
		e = process_info_insert(c, pid);
	/* A new entry, or one process_info_lookup read for no sample's image_id. */
	if (!e->image_known) {
		e->image_known = true;
		e->image_id = image_id;
	}
	e->used_ns = mono_ns();
	return &e->info;
}

size_t process_info_expire(struct process_info_cache *c, uint64_t before_ns)
{
	size_t i, dropped = 0;

	/* A slot freed here is taken again when the ring comes round to it. */
	for (i = 0; i < c->max_entries; i++) {
		struct process_info_entry *e = &c->entries[i];

		if (!e->used || e->used_ns >= before_ns)
			continue;
		process_info_drop(c, (uint32_t)i);
		dropped++;
	}
	return dropped;
}
