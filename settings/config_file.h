/*
 * lowprof's configuration file: one `key = value` per line, the keys being
 * the long names of the command-line options (settings/option_table.h), so
 * the file and the command line share every conversion, range and message.
 *
 *   # a comment (a '#' starts a comment only at the start of a line)
 *   cpu-budget = 2.5
 *   otlp-endpoint = "http://collector:4318"
 *   no-throttle = true
 *
 * Blank lines are allowed; spaces around the key and the value are dropped;
 * a value in double quotes keeps its inner spaces (there are no escapes). A
 * repeatable option (pid) is given once per line. A bad line stops the
 * reading with "FILE:LINE: KEY: message" (or "FILE:LINE: message" when the
 * line has no key).
 */
#ifndef LOWPROF_SETTINGS_CONFIG_FILE_H
#define LOWPROF_SETTINGS_CONFIG_FILE_H

#include <stddef.h>

#include "settings/option_table.h"

/* The default file, read when it exists and --config names no other. */
#define CONFIG_FILE_DEFAULT "/etc/lowprof/lowprof.conf"
/* A configuration file is small: anything bigger is a mistake. */
#define CONFIG_FILE_MAX_BYTES (1u << 20)

/*
 * Applies every line of text (len bytes and a NUL after them; changed in
 * place: the values the table keeps as strings point into it, so it must
 * outlive them) to specs.
 * label names the file in messages. Returns 0, or -EINVAL (or the table's
 * errno) with one line in err.
 */
int config_file_apply(char *text, size_t len, const char *label, const struct option_spec *specs,
		      char *err, size_t errlen);

/*
 * Reads path whole (a regular file of at most CONFIG_FILE_MAX_BYTES, no NUL
 * byte) into a malloc'd, NUL-terminated buffer in *textp, its length in
 * *lenp. Returns 0, or a negative errno with "PATH: reason" in err.
 */
int config_file_read(const char *path, char **textp, size_t *lenp, char *err, size_t errlen);

#endif /* LOWPROF_SETTINGS_CONFIG_FILE_H */
