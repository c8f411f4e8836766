#define _GNU_SOURCE /* setresuid, setgroups */
#include "supervisor/privdrop.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

int privdrop_lookup(const char *name, struct privdrop_user *out, char *err, size_t errlen)
{
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(name);
	if (pw == NULL) {
		snprintf(err, errlen, "unknown user '%s'%s%s", name, errno ? ": " : "",
			 errno ? strerror(errno) : "");
		return -1;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, errlen, "user '%s' is root: the unprivileged components need a non-root user",
			 name);
		return -1;
	}
	out->uid = pw->pw_uid;
	out->gid = pw->pw_gid;
	snprintf(out->name, sizeof(out->name), "%s", name);
	return 0;
}

static int privdrop_caps_empty(void)
{
	cap_t caps = cap_get_proc();
	cap_t none = cap_init();
	int same;

	if (caps == NULL || none == NULL) {
		cap_free(caps);
		cap_free(none);
		return 0;
	}
	same = cap_compare(caps, none) == 0;
	cap_free(caps);
	cap_free(none);
	return same;
}

int privdrop_apply(const struct privdrop_user *u, char *err, size_t errlen)
{
	cap_value_t cap;

	if (geteuid() == 0) {
		/* The bounding set first: dropping it needs CAP_SETPCAP, gone after setuid. */
		for (cap = 0; cap <= CAP_LAST_CAP; cap++) {
			if (CAP_IS_SUPPORTED(cap) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
				snprintf(err, errlen, "dropping capability %d from the bounding set: %s", cap,
					 strerror(errno));
				return -1;
			}
		}
		if (setgroups(0, NULL) != 0 || setresgid(u->gid, u->gid, u->gid) != 0 ||
		    setresuid(u->uid, u->uid, u->uid) != 0) {
			snprintf(err, errlen, "switching to user %s: %s", u->name, strerror(errno));
			return -1;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		snprintf(err, errlen, "clearing ambient capabilities: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		snprintf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -1;
	}
	if (geteuid() == 0 || !privdrop_caps_empty()) {
		snprintf(err, errlen, "capabilities remain after dropping privileges");
		return -1;
	}
	return 0;
}
