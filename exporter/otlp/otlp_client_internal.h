/* Shared between otlp_client.c and otlp_client_settings.c; not a public API. */
#ifndef LOWPROF_EXPORTER_OTLP_CLIENT_INTERNAL_H
#define LOWPROF_EXPORTER_OTLP_CLIENT_INTERNAL_H

#include <stddef.h>

#define OTLP_MAX_TLS_FILE (4u << 20)
#define OTLP_URL_MAX 2048

void otlp_client_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reads a whole regular file of at most OTLP_MAX_TLS_FILE bytes (malloc'd);
 * NULL with a message naming the option otherwise. */
void *otlp_client_read_file(const char *path, const char *opt, size_t *lenp,
			    char *err, size_t errlen);

#endif
