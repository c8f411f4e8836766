/* /proc/PID/maps parsing on arbitrary text: the exporter's parser
 * (exporter/symbols/proc_maps) on the whole input, and the loader's line
 * parser (loader/mapped_file) on each line. The maps text comes from the
 * kernel, but through the loader, and a process controls its mapping names.
 *
 * Invariants: accepted entries are sorted, non-overlapping and non-empty,
 * each is found by its own first and last address; and on any line the
 * exporter's stricter parser accepts, the loader's parser must agree on every
 * field (the two read the same kernel format for different programs). */
#include "exporter/symbols/proc_maps.h"
#include "loader/mapped_file.h"

#include "fuzz/fuzz_check.h"
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One line (no newline, no NUL) through both parsers. */
static void fuzz_line(const char *line, size_t len)
{
	static struct mapped_file mf;
	struct proc_maps *pm = NULL;
	const struct proc_maps_entry *e;
	char err[256], *z;
	bool ok;

	z = malloc(len + 1);
	if (z == NULL)
		return;
	memcpy(z, line, len);
	z[len] = '\0';
	ok = mapped_file_parse_line(z, &mf);
	if (ok) {
		FUZZ_CHECK(mf.start < mf.end);
		FUZZ_CHECK(strlen(mf.perms) == 4);
		FUZZ_CHECK(strlen(mf.path) < sizeof(mf.path));
		(void)mapped_file_executable(&mf);
	}
	if (proc_maps_parse(z, len, &pm, err, sizeof(err)) == 0 && pm->count == 1) {
		e = &pm->entries[0];
		FUZZ_CHECK(ok);
		FUZZ_CHECK(mf.start == e->start && mf.end == e->end);
		FUZZ_CHECK(mf.pgoff == e->offset && mf.ino == e->inode);
		FUZZ_CHECK(mf.major == e->dev_major && mf.minor == e->dev_minor);
		FUZZ_CHECK(strcmp(mf.perms, e->perms) == 0);
		/* sscanf's " " also skips tabs and other white space before the
		 * path; and the loader keeps at most PATH_MAX bytes of it. */
		if (!isspace((unsigned char)e->path[0]) && strlen(e->path) < sizeof(mf.path)) {
			FUZZ_CHECK(strcmp(mf.path, e->path) == 0);
			FUZZ_CHECK(mf.deleted == e->deleted);
		}
	}
	proc_maps_free(pm);
	free(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *p, *end = buf + size;
	struct proc_maps *m = NULL;
	char err[256];
	size_t i;

	if (proc_maps_parse(buf, size, &m, err, sizeof(err)) == 0) {
		FUZZ_CHECK(m != NULL);
		for (i = 0; i < m->count; i++) {
			const struct proc_maps_entry *e = &m->entries[i];

			FUZZ_CHECK(e->start < e->end);
			FUZZ_CHECK(i == 0 || m->entries[i - 1].end <= e->start);
			FUZZ_CHECK(strlen(e->perms) == 4);
			FUZZ_CHECK(e->path != NULL);
			FUZZ_CHECK(proc_maps_find(m, e->start) == e);
			FUZZ_CHECK(proc_maps_find(m, e->end - 1) == e);
			(void)proc_maps_entry_exec(e);
		}
		for (i = 0; i + sizeof(uint64_t) <= size && i < 64; i += sizeof(uint64_t)) {
			const struct proc_maps_entry *e;
			uint64_t a;

			memcpy(&a, data + i, sizeof(a));
			e = proc_maps_find(m, a);
			FUZZ_CHECK(e == NULL || (e->start <= a && a < e->end));
		}
		proc_maps_free(m);
	} else {
		FUZZ_CHECK(m == NULL);
	}
	/* Line by line, as the loader's tracker reads the file (getline). A
	 * line with a NUL byte in it cannot reach the loader's parser whole. */
	for (p = buf; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl != NULL ? nl : end;

		if (memchr(p, '\0', (size_t)(line_end - p)) == NULL)
			fuzz_line(p, (size_t)(line_end - p));
		p = line_end + 1;
	}
	return 0;
}
