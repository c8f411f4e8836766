/*
 * `lowprof audit PATH`: the loader's audit log (JSON lines, loader/audit_log.h)
 * as a readable table. The parser is strict and bounded: a line longer than
 * AUDIT_READ_MAX_LINE, deeper than AUDIT_READ_MAX_DEPTH, with more than
 * AUDIT_READ_MAX_FIELDS fields, or not exactly one JSON object is reported
 * as malformed (with its line number) and skipped; it never stops the table.
 */
#ifndef LOWPROF_SUPERVISOR_AUDIT_READ_H
#define LOWPROF_SUPERVISOR_AUDIT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define AUDIT_READ_MAX_LINE 8192
#define AUDIT_READ_MAX_FIELDS 40
#define AUDIT_READ_MAX_DEPTH 4
#define AUDIT_READ_KEY_MAX 48
#define AUDIT_READ_VALUE_MAX 1024

struct audit_field {
	char key[AUDIT_READ_KEY_MAX];
	char value[AUDIT_READ_VALUE_MAX]; /* a string decoded; anything else as its JSON text */
	bool is_string;
};

struct audit_entry {
	struct audit_field f[AUDIT_READ_MAX_FIELDS];
	size_t n;
};

/* Parse one line (without its newline). 0, or -1 with the reason in err. */
int audit_read_parse_line(const char *line, size_t len, struct audit_entry *out, char *err,
			  size_t errlen);

/* The value of key, or NULL. */
const char *audit_entry_get(const struct audit_entry *e, const char *key);

/*
 * Print every record of in as a table on out; malformed lines are reported on
 * errout ("line 7: malformed: ..."). Returns the number of malformed lines,
 * or -1 if in could not be read.
 */
int audit_read_print(FILE *in, FILE *out, FILE *errout);

#endif
