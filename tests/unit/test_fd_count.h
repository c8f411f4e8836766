/* Open file descriptors of the test process: proves a refused message's fd was closed. */
#ifndef LOWPROF_TESTS_TEST_FD_COUNT_H
#define LOWPROF_TESTS_TEST_FD_COUNT_H

#include <dirent.h>

/* Entries of /proc/self/fd, the directory's own fd not counted; -1 if unreadable. */
static inline int test_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

#endif
