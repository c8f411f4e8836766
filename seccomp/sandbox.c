#include "seccomp/sandbox.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include "common/log.h"
#include "ipc/lowprof_fds.h"
#include "seccomp/caps_limit.h"
#include "seccomp/landlock_dir.h"
#include "seccomp/seccomp_install.h"

void sandbox_not_dumpable(const char *component)
{
	/* exec made us dumpable again (the supervisor switched the uid before it):
	 * any process of the same uid could ptrace us or take our sockets with
	 * pidfd_getfd. Not dumpable, /proc/PID/fd and the like belong to root. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		fatal(LOWPROF_EXIT_CONFIG, "lowprof-%s: PR_SET_DUMPABLE: %s", component,
		      strerror(errno));
}

bool sandbox_take_seccomp_log(int *argc, char **argv)
{
	int i;

	if (*argc < 2 || strcmp(argv[1], SANDBOX_SECCOMP_LOG_ARG) != 0)
		return false;
	for (i = 1; i < *argc; i++)
		argv[i] = argv[i + 1]; /* argv[argc] is NULL and moves down too */
	(*argc)--;
	return true;
}

void sandbox_limit_caps(const char *component, const cap_value_t *keep, size_t n)
{
	char missing[256], have[256], err[640];
	int kept;

	if (caps_limit_missing(keep, n, missing, sizeof(missing)) > 0)
		fatal(LOWPROF_EXIT_CONFIG,
		      "missing capabilities: %s (run as root, or give lowprof-%s these capabilities)",
		      missing, component);
	if (caps_limit_to(keep, n, &kept, err, sizeof(err)) != 0)
		fatal(LOWPROF_EXIT_CONFIG, "limiting capabilities: %s", err);
	if (kept > 0)
		log_warn("%s", err);
	caps_limit_describe(keep, n, have, sizeof(have));
	log_debug("capabilities limited to: %s", n > 0 ? have : "(none)");
}

/*
 * In a sanitizer build LeakSanitizer's end-of-process check needs ptrace,
 * prctl and /proc, which no component's filter (or Landlock) allows: run the
 * check now, before the filter (it reports what is already unreachable, and turns the exit-time
 * check off). Nothing of this is in a normal build.
 */
#ifdef LOWPROF_SANITIZE
#include <sanitizer/lsan_interface.h>
#define SANDBOX_LEAK_CHECK() __lsan_do_leak_check()
#endif
#ifndef SANDBOX_LEAK_CHECK
#define SANDBOX_LEAK_CHECK() ((void)0)
#endif

void sandbox_enter(const char *component, bool log_only)
{
	char err[256];

	SANDBOX_LEAK_CHECK();
	if (seccomp_install(component, log_only, err, sizeof(err)) != 0)
		fatal(LOWPROF_EXIT_CONFIG, "seccomp: %s", err);
	if (log_only)
		log_warn("seccomp filter in log mode (--seccomp-log): forbidden calls are only logged");
}

void sandbox_confine_to_dir(const char *component, int dirfd)
{
	char err[256];
	int rc;

	/* LeakSanitizer reads /proc at exit, which Landlock closes too. */
	SANDBOX_LEAK_CHECK();
	rc = landlock_dir_confine(dirfd, err, sizeof(err));

	if (rc == -EOPNOTSUPP)
		log_warn("%s: only the seccomp filter confines lowprof-%s's paths", err, component);
	else if (rc < 0)
		fatal(LOWPROF_EXIT_CONFIG, "lowprof-%s: %s", component, err);
	else
		log_debug("Landlock ABI %d: paths confined to the output directory", rc);
}
