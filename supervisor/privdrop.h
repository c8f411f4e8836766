/*
 * Dropping a child to an unprivileged user before exec: empty capability
 * sets including the bounding set, supplementary groups cleared, and
 * PR_SET_NO_NEW_PRIVS so nothing it execs can regain privilege.
 */
#ifndef LOWPROF_SUPERVISOR_PRIVDROP_H
#define LOWPROF_SUPERVISOR_PRIVDROP_H

#include <stddef.h>
#include <sys/types.h>

struct privdrop_user {
	uid_t uid;
	gid_t gid;
	char name[64];
};

/* Look NAME up in the user database; 0, or -1 with a message. Refuses uid 0. */
int privdrop_lookup(const char *name, struct privdrop_user *out, char *err, size_t errlen);
/*
 * In a child, before exec. When running as root: bounding set emptied, groups
 * cleared, gid and uid changed; always: no_new_privs, and every capability
 * set checked empty afterwards. 0, or -1 with a message.
 */
int privdrop_apply(const struct privdrop_user *u, char *err, size_t errlen);

#endif
