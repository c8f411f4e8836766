/*
 * The error convention of the whole tree: a function that can fail returns 0
 * or a negative errno (or NULL), and, when its caller passes one, writes one
 * human-readable line into a caller-owned buffer (err, errlen). errbuf_set is
 * the one formatter of that line; err may be NULL or errlen 0 (no message).
 */
#ifndef LOWPROF_COMMON_ERRBUF_H
#define LOWPROF_COMMON_ERRBUF_H

#include <stddef.h>

void errbuf_set(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* errbuf_set, then return rc: `return errbuf_fail(-EINVAL, err, errlen, "...")`. */
int errbuf_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
