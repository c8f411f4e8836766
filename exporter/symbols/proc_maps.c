#include "exporter/symbols/proc_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "exporter/symbols/symtab_common.h"

/* A process with a million mappings has a ~100 MiB maps file; cap there. */
#define PROC_MAPS_MAX_FILE (128u << 20)

#define PM_DELETED_SUFFIX " (deleted)"

/* Hex number of 1..maxdigits digits at *p; advances *p. */
static bool pm_hex(const char **p, const char *end, unsigned maxdigits, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned n = 0;

	while (s < end && n <= maxdigits) {
		char c = *s;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		v = v << 4 | d;
		n++;
		s++;
	}
	if (n == 0 || n > maxdigits)
		return false;
	*p = s;
	*val = v;
	return true;
}

static bool pm_dec(const char **p, const char *end, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
	}
	if (s == *p)
		return false;
	*p = s;
	*val = v;
	return true;
}

static bool pm_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

/*
 * Parse one line in place (line[len] is writable and becomes the path's NUL).
 * Returns false when malformed.
 */
static bool pm_parse_line(char *line, size_t len, struct proc_maps_entry *e)
{
	const char *p = line, *end = line + len;
	uint64_t major, minor;
	char *path;
	size_t plen, slen = strlen(PM_DELETED_SUFFIX);
	int i;

	memset(e, 0, sizeof(*e));
	if (!pm_hex(&p, end, 16, &e->start) || !pm_char(&p, end, '-') ||
	    !pm_hex(&p, end, 16, &e->end) || !pm_char(&p, end, ' '))
		return false;
	if (end - p < 5)
		return false;
	for (i = 0; i < 4; i++) {
		static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };

		if (!memchr(allowed[i], p[i], 2))
			return false;
		e->perms[i] = p[i];
	}
	p += 4;
	if (!pm_char(&p, end, ' ') || !pm_hex(&p, end, 16, &e->offset) || !pm_char(&p, end, ' ') ||
	    !pm_hex(&p, end, 8, &major) || !pm_char(&p, end, ':') ||
	    !pm_hex(&p, end, 8, &minor) || !pm_char(&p, end, ' ') || !pm_dec(&p, end, &e->inode))
		return false;
	if (e->start >= e->end)
		return false;
	e->dev_major = (uint32_t)major;
	e->dev_minor = (uint32_t)minor;
	if (p < end && *p != ' ')
		return false;
	while (p < end && *p == ' ')
		p++;
	path = line + (p - line);
	plen = (size_t)(end - p);
	path[plen] = '\0';
	e->path = path;
	e->deleted = plen > slen && strcmp(path + plen - slen, PM_DELETED_SUFFIX) == 0;
	return true;
}

static int pm_cmp(const void *a, const void *b)
{
	const struct proc_maps_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/*
 * Keep each path once, not the whole text, and the entries exactly sized:
 * a process's maps stay cached while its samples come (hundreds of
 * processes on a busy host), and a library's 4-5 adjacent mappings name it
 * alike. Left as it is when the memory cannot be had.
 */
static void pm_compact(struct proc_maps *m)
{
	size_t i, len = 0, l;
	struct proc_maps_entry *e;
	char *blob;

	for (i = 0; i < m->count; i++) {
		if (i == 0 || strcmp(m->entries[i - 1].path, m->entries[i].path) != 0)
			len += strlen(m->entries[i].path) + 1;
	}
	blob = malloc(len ? len : 1);
	if (!blob)
		return;
	for (i = 0, len = 0; i < m->count; i++) {
		if (i > 0 && strcmp(m->entries[i - 1].path, m->entries[i].path) == 0) {
			m->entries[i].path = m->entries[i - 1].path;
			continue;
		}
		l = strlen(m->entries[i].path) + 1;
		memcpy(blob + len, m->entries[i].path, l);
		m->entries[i].path = blob + len;
		len += l;
	}
	free(m->text);
	m->text = blob;
	e = realloc(m->entries, (m->count ? m->count : 1) * sizeof(*m->entries));
	if (e)
		m->entries = e;
}

size_t proc_maps_memory(const struct proc_maps *m)
{
	size_t i, bytes;

	if (!m)
		return 0;
	bytes = sizeof(*m) + m->count * sizeof(*m->entries);
	for (i = 0; i < m->count; i++) {
		if (i == 0 || m->entries[i].path != m->entries[i - 1].path)
			bytes += strlen(m->entries[i].path) + 1;
	}
	return bytes;
}

int proc_maps_parse(const char *buf, size_t len, struct proc_maps **out, char *err, size_t errlen)
{
	struct proc_maps *m = calloc(1, sizeof(*m));
	size_t lines = 0, cap = 0, i, n;
	char *p, *end;
	int ret = -ENOMEM;

	*out = NULL;
	if (!m)
		goto cleanup;
	m->text = malloc(len + 1);
	if (!m->text)
		goto cleanup;
	memcpy(m->text, buf, len);
	m->text[len] = '\0';
	for (i = 0; i < len; i++)
		cap += buf[i] == '\n';
	cap++;
	m->entries = calloc(cap, sizeof(*m->entries));
	if (!m->entries)
		goto cleanup;
	p = m->text;
	end = m->text + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *line_end = nl ? nl : end;

		if (line_end > p) {
			lines++;
			if (pm_parse_line(p, (size_t)(line_end - p), &m->entries[m->count]))
				m->count++;
			else
				m->malformed++;
		}
		p = line_end + 1;
	}
	if (lines > 0 && m->count == 0) {
		errbuf_set(err, errlen, "maps: none of %zu lines is well-formed", lines);
		ret = -EINVAL;
		goto cleanup;
	}
	/* The kernel writes them sorted; sorting again costs nothing and makes find() safe. */
	qsort(m->entries, m->count, sizeof(*m->entries), pm_cmp);
	for (i = 0, n = 0; i < m->count; i++) {
		if (n > 0 && m->entries[i].start < m->entries[n - 1].end) {
			m->malformed++;
			continue;
		}
		m->entries[n++] = m->entries[i];
	}
	m->count = n;
	pm_compact(m);
	*out = m;
	m = NULL;
	ret = 0;
cleanup:
	if (ret == -ENOMEM)
		errbuf_set(err, errlen, "out of memory parsing maps");
	proc_maps_free(m);
	return ret;
}

static int proc_maps_parse_text(const char *buf, size_t len, void *out, char *err, size_t errlen)
{
	return proc_maps_parse(buf, len, out, err, errlen);
}

int proc_maps_read_path(const char *path, struct proc_maps **out, char *err, size_t errlen)
{
	*out = NULL;
	return symtab_load_text(-1, path, PROC_MAPS_MAX_FILE, proc_maps_parse_text, out, err, errlen);
}

int proc_maps_read_fd(int fd, const char *name, struct proc_maps **out, char *err, size_t errlen)
{
	*out = NULL;
	return symtab_load_text(fd, name, PROC_MAPS_MAX_FILE, proc_maps_parse_text, out, err, errlen);
}

int proc_maps_read_pid(pid_t pid, struct proc_maps **out, char *err, size_t errlen)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	return proc_maps_read_path(path, out, err, errlen);
}

const struct proc_maps_entry *proc_maps_find(const struct proc_maps *m, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	hi = m->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct proc_maps_entry *e = &m->entries[mid];

		if (addr < e->start)
			hi = mid;
		else if (addr >= e->end)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

bool proc_maps_entry_exec(const struct proc_maps_entry *e)
{
	return e->perms[2] == 'x';
}

void proc_maps_free(struct proc_maps *m)
{
	if (!m)
		return;
	free(m->entries);
	free(m->text);
	free(m);
}
