/* proc_stat: a field of /proc/PID/stat (see the header). */
#include "common/proc_stat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file_read.h"

int proc_stat_field(pid_t pid, int field, unsigned long long *out)
{
	char path[64], *text = NULL, *p, *end;
	size_t len;
	int rc, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	rc = file_read_all(path, 4096, &text, &len, NULL, 0);
	if (rc != 0)
		return rc;
	/* comm may hold spaces and parentheses: the last ')' ends it; the state is field 3. */
	p = strrchr(text, ')');
	rc = -EINVAL;
	if (p != NULL && field >= 4) {
		p++;
		for (i = 3; i <= field && p != NULL; i++) {
			p += strspn(p, " ");
			if (i == field) {
				errno = 0;
				*out = strtoull(p, &end, 10);
				if (errno == 0 && end != p)
					rc = 0;
				break;
			}
			p = strchr(p, ' ');
		}
	}
	free(text);
	return rc;
}

#define PROC_EXE_DELETED " (deleted)"
#define PROC_EXE_DELETED_LEN (sizeof(PROC_EXE_DELETED) - 1)

bool proc_exe_is(pid_t pid, const char *name, char *exe, size_t len)
{
	char path[64];
	const char *base;
	size_t blen;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, len - 1);
	if (n < 0) {
		snprintf(exe, len, "(unknown: %s)", strerror(errno));
		return false;
	}
	exe[n] = '\0';
	base = strrchr(exe, '/');
	base = base != NULL ? base + 1 : exe;
	/* A program replaced on disk while it runs (a package upgrade) is
	 * "NAME (deleted)": still the program that was started. */
	blen = strlen(base);
	if (blen > PROC_EXE_DELETED_LEN &&
	    strcmp(base + blen - PROC_EXE_DELETED_LEN, PROC_EXE_DELETED) == 0)
		return strlen(name) == blen - PROC_EXE_DELETED_LEN &&
		       strncmp(base, name, blen - PROC_EXE_DELETED_LEN) == 0;
	return strcmp(base, name) == 0;
}

int proc_stat_starttime_unit(unsigned long long *ns_per_tick, long long *boot_offset_ns)
{
	char line[128];
	long hz = sysconf(_SC_CLK_TCK);
	long long sec, nsec;
	FILE *f;

	if (hz <= 0 || hz > 1000000000L)
		return -EINVAL;
	*ns_per_tick = 1000000000ULL / (unsigned long long)hz;
	*boot_offset_ns = 0;
	/* "boottime <secs> <nsecs>" (a kernel without time namespaces has no file) */
	f = fopen("/proc/self/timens_offsets", "re");
	if (f == NULL)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "boottime %lld %lld", &sec, &nsec) == 2)
			*boot_offset_ns = sec * 1000000000LL + nsec;
	}
	fclose(f);
	return 0;
}
