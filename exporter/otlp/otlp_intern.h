/* A deduplicating table of byte strings for the OTLP encoder's dictionary. */
#ifndef LOWPROF_EXPORTER_OTLP_INTERN_H
#define LOWPROF_EXPORTER_OTLP_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* A deduplicating table of byte strings: index by content, keep copies. */
struct otlp_intern {
	uint32_t *slots;        /* entry index + 1; 0 = empty */
	size_t nslots;          /* power of two */
	char **keys;            /* NUL-terminated copies */
	size_t *lens;
	size_t n, cap;
};

/* *idx = index of key (len bytes) in t, adding a NUL-terminated, malloc'd
 * copy when it is new. Returns 0 or -ENOMEM. A zeroed struct is an empty table. */
int otlp_intern_add(struct otlp_intern *t, const void *key, size_t len, uint32_t *idx);
void otlp_intern_free(struct otlp_intern *t);

#endif
