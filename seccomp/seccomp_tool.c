/*
 * lowprof-seccomp-tool: the filters from outside the components.
 *   pfc COMPONENT [--log]     the filter's PFC text (seccomp/golden/COMPONENT.pfc)
 *   names COMPONENT           "name action" per line (docs, SystemCallFilter=)
 *   exec COMPONENT CMD...     run CMD under COMPONENT's filter ("union": the
 *                             outer filter a systemd unit would apply)
 *   oci COMPONENT             the filter as an OCI seccomp profile (JSON), for
 *                             Kubernetes' Localhost profiles ("union": every
 *                             component's, as deploy/kubernetes uses)
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

/* The architecture the filters are built for: this build's. */
#if defined(__x86_64__)
#define TOOL_OCI_ARCH "SCMP_ARCH_X86_64"
#elif defined(__aarch64__)
#define TOOL_OCI_ARCH "SCMP_ARCH_AARCH64"
#else
#error "no OCI architecture name for this target"
#endif

/* The names, grouped by action, for the OCI profile. */
struct tool_oci {
	struct {
		char action[32];
		char names[4096];
		size_t n;
	} group[8];
	size_t ngroups;
};

static void tool_oci_add(const char *name, const char *action, void *arg)
{
	struct tool_oci *o = arg;
	size_t i, used;

	for (i = 0; i < o->ngroups && strcmp(o->group[i].action, action) != 0; i++)
		;
	if (i == o->ngroups) {
		if (o->ngroups == sizeof(o->group) / sizeof(o->group[0]))
			return;
		snprintf(o->group[i].action, sizeof(o->group[i].action), "%s", action);
		o->ngroups++;
	}
	used = strlen(o->group[i].names);
	snprintf(o->group[i].names + used, sizeof(o->group[i].names) - used, "%s\"%s\"",
		 o->group[i].n++ % 6 == 0 ? (used ? ",\n        " : "") : ", ", name);
}

/* "errno:EPERM" -> 1: the errno whose name it is, 0 if none. */
static int tool_errno_of(const char *action)
{
	const char *name;
	int e;

	if (strncmp(action, "errno:", 6) != 0)
		return 0;
	for (e = 1; e < 4096; e++) {
		name = strerrorname_np(e);
		if (name != NULL && strcmp(name, action + 6) == 0)
			return e;
	}
	return 0;
}

/*
 * An OCI runtime seccomp profile (the format of Kubernetes' Localhost
 * profiles, Docker's and runc's): the same names and answers as the
 * component's filter, anything else kills the process like the filter does.
 * Names only: argument checks stay in the components' own filters.
 */
static int tool_oci(const char *component)
{
	static struct tool_oci o;
	size_t i;
	int e;

	if (seccomp_list_names(component, tool_oci_add, &o) < 0) {
		fprintf(stderr, "lowprof-seccomp-tool: unknown component '%s'\n", component);
		return 1;
	}
	printf("{\n  \"defaultAction\": \"SCMP_ACT_KILL_PROCESS\",\n"
	       "  \"architectures\": [\"" TOOL_OCI_ARCH "\"],\n  \"syscalls\": [");
	for (i = 0; i < o.ngroups; i++) {
		printf("%s\n    {\n      \"names\": [\n        %s\n      ],\n", i ? "," : "",
		       o.group[i].names);
		e = tool_errno_of(o.group[i].action);
		if (strcmp(o.group[i].action, "allow") == 0)
			printf("      \"action\": \"SCMP_ACT_ALLOW\"\n    }");
		else if (e > 0)
			printf("      \"action\": \"SCMP_ACT_ERRNO\",\n      \"errnoRet\": %d\n    }", e);
		else {
			fprintf(stderr, "lowprof-seccomp-tool: no OCI action for '%s'\n", o.group[i].action);
			return 1;
		}
	}
	printf("\n  ]\n}\n");
	return 0;
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
		fprintf(stderr, "usage: lowprof-seccomp-tool pfc|names|oci|exec|trigger COMPONENT [...]\n");
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
	if (strcmp(argv[1], "oci") == 0)
		return tool_oci(argv[2]);
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
