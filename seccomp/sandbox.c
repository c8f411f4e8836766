#include "seccomp/sandbox.h"

#include <string.h>

#include "common/log.h"
#include "ipc/lowprof_fds.h"
#include "seccomp/caps_limit.h"
#include "seccomp/seccomp_install.h"

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
 * In a sanitizer build LeakSanitizer's end-of-process check needs ptrace and
 * prctl, which no component's filter allows: run the check now, before the
 * filter (it reports what is already unreachable, and turns the exit-time
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
