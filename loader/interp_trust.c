/* Which files may stand for every process's dynamic loader (interp_trust.h). */
#include "loader/interp_trust.h"

#include <sys/statfs.h>

bool interp_trust_status(const struct stat *st, unsigned long fs_type)
{
	if (!S_ISREG(st->st_mode) || st->st_uid != 0)
		return false;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return false;
	return fs_type != INTERP_TRUST_FUSE_MAGIC;
}

bool interp_trust_fd(int fd)
{
	struct statfs fs;
	struct stat st;

	if (fstat(fd, &st) != 0 || fstatfs(fd, &fs) != 0)
		return false;
	return interp_trust_status(&st, (unsigned long)fs.f_type);
}
