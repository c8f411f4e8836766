/* Reading a whole file, /proc files included (their size reads as 0). */
#ifndef LOWPROF_COMMON_FILE_READ_H
#define LOWPROF_COMMON_FILE_READ_H

#include <stddef.h>

/*
 * Read path into a malloc'd buffer, NUL-terminated (not counted in *len), of
 * at most max bytes: a longer file is refused (-EFBIG) rather than cut, since
 * every caller parses the whole text. 0, or -errno with "PATH: reason" in err.
 */
int file_read_all(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen);

/* The same from an open fd (read from its current position; not closed).
 * name is only for messages. */
int file_read_fd(int fd, const char *name, size_t max, char **out, size_t *len, char *err,
		 size_t errlen);

#endif
