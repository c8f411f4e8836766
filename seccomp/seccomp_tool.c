/*
 * lowprof-seccomp-tool: the filters from outside the components.
 *   pfc COMPONENT [--log]     the filter's PFC text (seccomp/golden/COMPONENT.pfc)
 *   names COMPONENT           "name action" per line (docs, SystemCallFilter=)
 *   exec COMPONENT CMD...     run CMD under COMPONENT's filter ("union": the
 *                             outer filter a systemd unit would apply)
 *   trigger COMPONENT         install the filter, then make a forbidden call
 *                             (ptrace): the process must die by SIGSYS
 * Started under the name lowprof-COMPONENT it acts as `trigger COMPONENT`:
 * a stand-in component for the supervisor's SIGSYS test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "seccomp/seccomp_install.h"

static void tool_print_name(const char *name, const char *action, void *arg)
{
	(void)arg;
	printf("%s %s\n", name, action);
}

static int tool_trigger(const char *component)
{
	char err[256];

	if (seccomp_install(component, false, err, sizeof(err)) != 0) {
		fprintf(stderr, "lowprof-seccomp-tool: %s\n", err);
		return 1;
	}
	fprintf(stderr, "lowprof-seccomp-tool: %s filter installed; calling ptrace\n", component);
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	fprintf(stderr, "lowprof-seccomp-tool: ptrace returned (%s): the filter did not kill\n",
		strerror(errno));
	return 3;
}

int main(int argc, char **argv)
{
	char err[256];
	char *self = basename(argv[0]);
	bool log_only;

	if (strncmp(self, "lowprof-", 8) == 0 && strcmp(self, "lowprof-seccomp-tool") != 0)
		return tool_trigger(self + 8);
	if (argc < 3) {
		fprintf(stderr, "usage: lowprof-seccomp-tool pfc|names|exec|trigger COMPONENT [...]\n");
		return 2;
	}
	if (strcmp(argv[1], "pfc") == 0) {
		log_only = argc > 3 && strcmp(argv[3], "--log") == 0;
		fflush(stdout);
		if (seccomp_export(argv[2], log_only, STDOUT_FILENO, err, sizeof(err)) != 0) {
			fprintf(stderr, "lowprof-seccomp-tool: %s\n", err);
			return 1;
		}
		return 0;
	}
	if (strcmp(argv[1], "names") == 0)
		return seccomp_list_names(argv[2], tool_print_name, NULL) < 0;
	if (strcmp(argv[1], "trigger") == 0)
		return tool_trigger(argv[2]);
	if (strcmp(argv[1], "exec") == 0 && argc > 3) {
		if (seccomp_install(argv[2], getenv("LOWPROF_SECCOMP_TOOL_LOG") != NULL, err, sizeof(err)) != 0) {
			fprintf(stderr, "lowprof-seccomp-tool: %s\n", err);
			return 1;
		}
		execv(argv[3], argv + 3);
		fprintf(stderr, "lowprof-seccomp-tool: exec %s: %s\n", argv[3], strerror(errno));
		return 127;
	}
	fprintf(stderr, "lowprof-seccomp-tool: unknown command '%s'\n", argv[1]);
	return 2;
}
