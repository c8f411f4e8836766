#include "supervisor/bpffs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/proc_stat.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static int bpffs_mounted(void)
{
	struct statfs st;

	return statfs(BPFFS_ROOT, &st) == 0 && (unsigned long)st.f_type == BPF_FS_MAGIC;
}

int bpffs_prepare(char *out, size_t outlen, char *err, size_t errlen)
{
	unsigned long long start;
	int rc;

	if (!bpffs_mounted()) {
		if (mount("bpf", BPFFS_ROOT, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") != 0) {
			rc = -errno;
			snprintf(err, errlen, "bpffs is not mounted on %s and mounting it failed: %s",
				 BPFFS_ROOT, strerror(errno));
			return rc;
		}
	}
	if (mkdir(BPFFS_LOWPROF_DIR, 0700) != 0 && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "creating %s: %s", BPFFS_LOWPROF_DIR, strerror(errno));
		return rc;
	}
	/* Named after the supervisor, by its pid and start time (together they name
	 * one process for the whole boot): the next lowprof knows a dead run's pins
	 * by them, even once the pid is reused. */
	rc = proc_stat_field(getpid(), PROC_STAT_STARTTIME, &start);
	if (rc != 0) {
		snprintf(err, errlen, "reading our own start time: %s", strerror(-rc));
		return rc;
	}
	snprintf(out, outlen, "%s/%d-%llu", BPFFS_LOWPROF_DIR, (int)getpid(), start);
	return 0;
}
