#include "common/number_parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

int number_parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts leading spaces and a '-' (wrapping around): refuse both. */
	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int number_parse_seconds(const char *s, double max, double *out)
{
	double v;
	char *end;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}
