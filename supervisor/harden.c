#include "supervisor/harden.h"

#include <stdio.h>
#include <sys/capability.h>
#include <unistd.h>

#include "common/log.h"
#include "seccomp/caps_limit.h"
#include "seccomp/seccomp_install.h"

/*
 * What restarting the components takes (docs/SECURITY.md):
 *  - CAP_SETUID, CAP_SETGID: the controller and unwinder switch to --user;
 *  - CAP_SETPCAP: they (and the loader) empty their bounding sets;
 *  - CAP_KILL: signalling children that run as another user;
 *  - the loader's set (CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH,
 *    CAP_SYSLOG, CAP_CHECKPOINT_RESTORE): a root child's capabilities after exec are at most the
 *    supervisor's permitted set (NO_NEW_PRIVS), so these stay permitted here,
 *    though never used here. Every other component runs as --user with none.
 */
static const cap_value_t supervise_caps[] = {
	CAP_SETUID, CAP_SETGID, CAP_SETPCAP, CAP_KILL,
	CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_SYSLOG,
	CAP_CHECKPOINT_RESTORE,
};

int supervise_harden(bool seccomp_log, char *err, size_t errlen)
{
	size_t n = sizeof(supervise_caps) / sizeof(supervise_caps[0]);
	char missing[256];
	int kept;

	/* Not root: the components get no more than we have; the loader's own
	 * start-up check then names what it lacks. */
	if (geteuid() == 0) {
		if (caps_limit_missing(supervise_caps, n, missing, sizeof(missing)) > 0) {
			snprintf(err, errlen, "missing capabilities: %s", missing);
			return -1;
		}
		if (caps_limit_to(supervise_caps, n, &kept, err, errlen) != 0)
			return -1;
	}
	if (seccomp_install("supervisor", seccomp_log, err, errlen) != 0)
		return -1;
	if (seccomp_log)
		log_warn("seccomp filters in log mode (--seccomp-log): forbidden calls are only logged");
	return 0;
}
