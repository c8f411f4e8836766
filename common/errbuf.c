#include "common/errbuf.h"

#include <stdarg.h>
#include <stdio.h>

static void errbuf_vset(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (err == NULL || errlen == 0)
		return;
	vsnprintf(err, errlen, fmt, ap);
}

void errbuf_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(err, errlen, fmt, ap);
	va_end(ap);
}

int errbuf_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}
