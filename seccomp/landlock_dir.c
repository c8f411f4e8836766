/* landlock_dir: file system access confined to one directory (see the header). */
#define _GNU_SOURCE
#include "seccomp/landlock_dir.h"

#include <errno.h>
#include <string.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/errbuf.h"

/* Rights of later ABIs than older uapi headers know (values of the uapi). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

/* What each ABI version adds to the file system rights it can name. */
static uint64_t landlock_dir_handled(int abi)
{
	uint64_t fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
		      LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
		      LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
		      LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
		      LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
		      LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		      LANDLOCK_ACCESS_FS_MAKE_SYM;

	if (abi >= 2)
		fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return fs;
}

int landlock_dir_confine(int dirfd, char *err, size_t errlen)
{
	struct landlock_ruleset_attr attr = {0};
	struct landlock_path_beneath_attr beneath = {0};
	int abi, rs, rc;

	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		rc = errno == ENOSYS || errno == EOPNOTSUPP ? -EOPNOTSUPP : -errno;
		return errbuf_fail(rc, err, errlen, "Landlock: not available on this kernel");
	}
	attr.handled_access_fs = landlock_dir_handled(abi);
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		return errbuf_fail(-errno, err, errlen, "landlock_create_ruleset (ABI %d): %s", abi,
				   strerror(errno));
	beneath.parent_fd = dirfd;
	beneath.allowed_access = attr.handled_access_fs &
				 (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				  LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
				  LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE);
	if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) != 0) {
		rc = -errno;
		close(rs);
		return errbuf_fail(rc, err, errlen, "landlock_add_rule on fd %d: %s", dirfd,
				   strerror(-rc));
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_landlock_restrict_self, rs, 0) != 0) {
		rc = -errno;
		close(rs);
		return errbuf_fail(rc, err, errlen, "landlock_restrict_self: %s", strerror(-rc));
	}
	close(rs);
	return abi;
}
