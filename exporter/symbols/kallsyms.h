/*
 * Kernel text symbols from /proc/kallsyms-format text
 * ("ffffffff81000000 T _stext", optionally followed by "\t[module]").
 *
 * Only text symbols (t, T, w, W) are kept, sorted by address, so a sampled
 * kernel instruction pointer can be named by binary search. A table whose
 * every address is zero is the kptr_restrict case (the reader lacks
 * CAP_SYSLOG): it parses, but kallsyms_restricted() says so and every lookup
 * misses, so the caller can explain why kernel frames are unnamed.
 */
#ifndef LOWPROF_EXPORTER_KALLSYMS_H
#define LOWPROF_EXPORTER_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kallsyms;

struct kallsyms_result {
	const char *name;     /* symbol name; valid until kallsyms_free() */
	const char *module;   /* module name without brackets ("ext4"), NULL for the core kernel */
	uint64_t offset;      /* addr - symbol address */
	uint64_t module_base; /* lowest text address of the module (or of the core kernel) */
};

/*
 * Parse len bytes of kallsyms text (need not be NUL-terminated).
 * Returns 0 and *out, or a negative errno with a reason in err: -ENOMEM, or
 * -EINVAL when the input holds no well-formed line at all.
 */
int kallsyms_parse(const char *buf, size_t len, struct kallsyms **out, char *err, size_t errlen);

/* Same, reading the text from path (normally "/proc/kallsyms"). */
int kallsyms_load(const char *path, struct kallsyms **out, char *err, size_t errlen);
/* The same from an fd (the loader opens /proc/kallsyms for the exporter; not closed). */
int kallsyms_load_fd(int fd, const char *name, struct kallsyms **out, char *err, size_t errlen);

/*
 * Name addr: the nearest text symbol at or below it, provided addr lies
 * before the next symbol of any type. Returns 0 and fills *res, or -ENOENT.
 */
int kallsyms_lookup(const struct kallsyms *k, uint64_t addr, struct kallsyms_result *res);

/* True when every address read was zero (kptr_restrict hides them). */
bool kallsyms_restricted(const struct kallsyms *k);

/* Text symbols kept, and lines skipped because they were malformed. */
size_t kallsyms_count(const struct kallsyms *k);
size_t kallsyms_malformed(const struct kallsyms *k);

/* Heap bytes the table holds (16 bytes a symbol and its name; a name that
 * ends the previous symbol's, as NAME after __pfx_NAME, is not stored again). */
size_t kallsyms_memory(const struct kallsyms *k);

/* Lowest core-kernel text address (normally _stext), 0 when unknown. */
uint64_t kallsyms_core_base(const struct kallsyms *k);

void kallsyms_free(struct kallsyms *k);

#endif
