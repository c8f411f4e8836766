#include "supervisor/output_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "ipc/output_files.h"

/* Could uid/gid create files in a directory with this stat? (No ACLs: lowprof sets none.) */
static int output_dir_writable_by(const struct stat *st, const struct privdrop_user *u)
{
	if (st->st_uid == u->uid)
		return (st->st_mode & S_IWUSR) && (st->st_mode & S_IXUSR);
	if (st->st_gid == u->gid)
		return (st->st_mode & S_IWGRP) && (st->st_mode & S_IXGRP);
	return (st->st_mode & S_IWOTH) && (st->st_mode & S_IXOTH);
}

/* NAME left by an earlier run as someone else: give it to u, if it is a plain file. */
static void output_dir_give(int dirfd, const char *name, const struct privdrop_user *u)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	/* A symlink or a hard link could point at anything: never chown through one. */
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid == u->uid)
		return;
	if (fchownat(dirfd, name, u->uid, u->gid, AT_SYMLINK_NOFOLLOW) != 0)
		log_warn("output: %s is not %s's and could not be given to it: %s", name, u->name,
			 strerror(errno));
}

int output_dir_hand_over(int dirfd, const char *path, const struct privdrop_user *u, char *err,
			 size_t errlen)
{
	static const char *const files[] = OUTPUT_FILES_ALL;
	char tmp[128];
	struct stat st;
	mode_t mode;
	size_t i;

	if (fstat(dirfd, &st) != 0) {
		snprintf(err, errlen, "output directory %s: %s", path, strerror(errno));
		return -1;
	}
	if (!output_dir_writable_by(&st, u)) {
		mode = (st.st_mode & 07777) | S_ISVTX | S_IRGRP | S_IWGRP | S_IXGRP;
		if (fchown(dirfd, (uid_t)-1, u->gid) != 0 || fchmod(dirfd, mode) != 0) {
			snprintf(err, errlen,
				 "output directory %s: cannot make it writable by %s (group %u, mode %04o): %s",
				 path, u->name, (unsigned)u->gid, (unsigned)mode, strerror(errno));
			return -1;
		}
		log_info("output directory %s: group %u, mode %04o, so that the exporter (user %s) can write it",
			 path, (unsigned)u->gid, (unsigned)mode, u->name);
	}
	for (i = 0; files[i] != NULL; i++) {
		output_dir_give(dirfd, files[i], u);
		snprintf(tmp, sizeof(tmp), "%s%s", files[i], OUTPUT_FILE_TMP_SUFFIX);
		output_dir_give(dirfd, tmp, u);
	}
	return 0;
}
