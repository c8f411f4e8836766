#include "loader/cpu_list.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cpu_list_number(const char **p, unsigned *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	v = strtoul(*p, &end, 10);
	if (errno != 0 || v >= CPU_LIST_MAX)
		return -1;
	*out = (unsigned)v;
	*p = end;
	return 0;
}

int cpu_list_parse(const char *text, bool online[CPU_LIST_MAX])
{
	const char *p = text;
	unsigned lo, hi, cpu;
	int count = 0;

	memset(online, 0, CPU_LIST_MAX * sizeof(bool));
	for (;;) {
		if (cpu_list_number(&p, &lo) != 0)
			return -1;
		hi = lo;
		if (*p == '-') {
			p++;
			if (cpu_list_number(&p, &hi) != 0 || hi < lo)
				return -1;
		}
		for (cpu = lo; cpu <= hi; cpu++) {
			if (!online[cpu])
				count++;
			online[cpu] = true;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		return *p == '\0' ? count : -1;
	}
}

int cpu_list_read_online(const char *path, bool online[CPU_LIST_MAX])
{
	char buf[8192];
	size_t n;
	FILE *f;

	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return cpu_list_parse(buf, online);
}
