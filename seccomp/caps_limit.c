#include "seccomp/caps_limit.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

static void caps_limit_append_name(cap_value_t cap, char *buf, size_t len)
{
	char *name = cap_to_name(cap);
	size_t used = strlen(buf);
	size_t i;

	if (name == NULL || used + 2 >= len) {
		cap_free(name);
		return;
	}
	snprintf(buf + used, len - used, "%s", used ? " " : "");
	used = strlen(buf);
	/* libcap says "cap_bpf"; the docs and man pages say CAP_BPF. */
	for (i = 0; name[i] != '\0' && used + 1 < len; i++)
		buf[used++] = (char)toupper((unsigned char)name[i]);
	buf[used] = '\0';
	cap_free(name);
}

void caps_limit_describe(const cap_value_t *caps, size_t n, char *buf, size_t len)
{
	size_t i;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		caps_limit_append_name(caps[i], buf, len);
}

int caps_limit_missing(const cap_value_t *need, size_t n, char *missing, size_t len)
{
	cap_t cur = cap_get_proc();
	cap_flag_value_t v;
	int count = 0;
	size_t i;

	if (len > 0)
		missing[0] = '\0';
	for (i = 0; i < n; i++) {
		v = CAP_CLEAR;
		if (cur == NULL || cap_get_flag(cur, need[i], CAP_EFFECTIVE, &v) != 0 || v != CAP_SET) {
			caps_limit_append_name(need[i], missing, len);
			count++;
		}
	}
	cap_free(cur);
	return count;
}

static bool caps_limit_in(cap_value_t cap, const cap_value_t *keep, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (keep[i] == cap)
			return true;
	}
	return false;
}

int caps_limit_to(const cap_value_t *keep, size_t n, int *bounding_kept, char *err, size_t errlen)
{
	char kept[512];
	cap_t want = NULL;
	cap_value_t cap;
	int rc = -1;

	*bounding_kept = 0;
	kept[0] = '\0';
	/* The bounding set first: dropping from it needs CAP_SETPCAP, which goes next. */
	for (cap = 0; cap <= CAP_LAST_CAP; cap++) {
		if (!CAP_IS_SUPPORTED(cap) || caps_limit_in(cap, keep, n))
			continue;
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
			if (errno != EPERM) {
				snprintf(err, errlen, "dropping capability %d from the bounding set: %s", cap,
					 strerror(errno));
				goto out;
			}
			caps_limit_append_name(cap, kept, sizeof(kept));
			(*bounding_kept)++;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		snprintf(err, errlen, "clearing the ambient set: %s", strerror(errno));
		goto out;
	}
	want = cap_init(); /* all three sets empty */
	if (want == NULL) {
		snprintf(err, errlen, "cap_init: %s", strerror(errno));
		goto out;
	}
	if (n > 0 && (cap_set_flag(want, CAP_EFFECTIVE, (int)n, keep, CAP_SET) != 0 ||
		      cap_set_flag(want, CAP_PERMITTED, (int)n, keep, CAP_SET) != 0)) {
		snprintf(err, errlen, "cap_set_flag: %s", strerror(errno));
		goto out;
	}
	if (cap_set_proc(want) != 0) {
		snprintf(err, errlen, "cap_set_proc: %s", strerror(errno));
		goto out;
	}
	if (*bounding_kept > 0)
		snprintf(err, errlen, "no CAP_SETPCAP: left in the bounding set: %s", kept);
	rc = 0;
out:
	cap_free(want);
	return rc;
}
