#define _GNU_SOURCE /* CLONE_THREAD */
#include "seccomp/seccomp_install.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ipc/lowprof_fds.h"

#define SECCOMP_MAX_NAMES 512

enum seccomp_entry_action {
	SECCOMP_ENTRY_ALLOW,
	SECCOMP_ENTRY_EACCES,
	SECCOMP_ENTRY_EPERM,
	SECCOMP_ENTRY_ENOSYS,
};

struct seccomp_entry {
	const char *name;
	enum seccomp_entry_action action;
};

/* A policy flattened: each name once, the most permissive action kept. */
struct seccomp_set {
	struct seccomp_entry e[SECCOMP_MAX_NAMES];
	size_t n;
	unsigned flags;
};

static const struct seccomp_policy *const seccomp_policies[] = {
	&seccomp_policy_loader, &seccomp_policy_exporter, &seccomp_policy_controller,
	&seccomp_policy_unwinder, &seccomp_policy_supervisor,
};

#define SECCOMP_NPOLICIES (sizeof(seccomp_policies) / sizeof(seccomp_policies[0]))

const struct seccomp_policy *seccomp_policy_find(const char *component)
{
	size_t i;

	for (i = 0; i < SECCOMP_NPOLICIES; i++) {
		if (strcmp(seccomp_policies[i]->component, component) == 0)
			return seccomp_policies[i];
	}
	return NULL;
}

static int seccomp_set_add(struct seccomp_set *s, const char *name, enum seccomp_entry_action a)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (strcmp(s->e[i].name, name) != 0)
			continue;
		/* Allow beats any errno: a name one policy allows stays allowed in a union. */
		if (a < s->e[i].action)
			s->e[i].action = a;
		return 0;
	}
	if (s->n == SECCOMP_MAX_NAMES)
		return -E2BIG;
	s->e[s->n].name = name;
	s->e[s->n].action = a;
	s->n++;
	return 0;
}

static int seccomp_set_add_list(struct seccomp_set *s, const char *const *names,
				enum seccomp_entry_action a)
{
	int rc;

	for (; names != NULL && *names != NULL; names++) {
		rc = seccomp_set_add(s, *names, a);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int seccomp_set_add_policy(struct seccomp_set *s, const struct seccomp_policy *p)
{
	int rc;

	rc = seccomp_set_add_list(s, p->allow, SECCOMP_ENTRY_ALLOW);
	if (rc == 0)
		rc = seccomp_set_add_list(s, p->eacces, SECCOMP_ENTRY_EACCES);
	if (rc == 0)
		rc = seccomp_set_add_list(s, p->eperm, SECCOMP_ENTRY_EPERM);
	if (rc == 0 && (p->flags & SECCOMP_POLICY_THREADS_ONLY))
		rc = seccomp_set_add(s, "clone3", SECCOMP_ENTRY_ENOSYS);
	return rc;
}

static int seccomp_entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct seccomp_entry *)a)->name, ((const struct seccomp_entry *)b)->name);
}

/* The flattened policy of component; the supervisor's and "union" are the union of all. */
static int seccomp_set_build(const char *component, struct seccomp_set *s)
{
	const struct seccomp_policy *p = seccomp_policy_find(component);
	bool all = strcmp(component, SECCOMP_UNION_NAME) == 0 || strcmp(component, "supervisor") == 0;
	size_t i;
	int rc;

	memset(s, 0, sizeof(*s));
	if (p == NULL && !all)
		return -ENOENT;
	rc = seccomp_set_add_list(s, seccomp_base_allow, SECCOMP_ENTRY_ALLOW);
	if (rc != 0)
		return rc;
	if (!all) {
		s->flags = p->flags;
		rc = seccomp_set_add_policy(s, p);
	} else {
		/* No argument checks in the union: the supervisor forks and signals. */
		for (i = 0; i < SECCOMP_NPOLICIES && rc == 0; i++)
			rc = seccomp_set_add_policy(s, seccomp_policies[i]);
		for (i = 0; i < s->n; i++) {
			if (strcmp(s->e[i].name, "clone3") == 0)
				s->e[i].action = SECCOMP_ENTRY_ALLOW;
		}
	}
	if (rc == 0)
		qsort(s->e, s->n, sizeof(s->e[0]), seccomp_entry_cmp);
	return rc;
}

static uint32_t seccomp_entry_scmp_action(enum seccomp_entry_action a)
{
	switch (a) {
	case SECCOMP_ENTRY_EACCES:
		return SCMP_ACT_ERRNO(EACCES);
	case SECCOMP_ENTRY_EPERM:
		return SCMP_ACT_ERRNO(EPERM);
	case SECCOMP_ENTRY_ENOSYS:
		return SCMP_ACT_ERRNO(ENOSYS);
	case SECCOMP_ENTRY_ALLOW:
	default:
		return SCMP_ACT_ALLOW;
	}
}

/* The calls that take a directory fd and a path (SECCOMP_POLICY_PATHS_IN_OUTDIR). */
static bool seccomp_is_path_call(const char *name)
{
	return strcmp(name, "openat") == 0 || strcmp(name, "unlinkat") == 0 ||
	       strcmp(name, "renameat") == 0 || strcmp(name, "renameat2") == 0;
}

/*
 * Allowed when every directory fd is the output directory's, EACCES otherwise.
 * Whole 64-bit comparisons: glibc passes an int fd sign-extended, so AT_FDCWD
 * (-100) never equals it, and the two rules never both match.
 */
static int seccomp_add_outdir_rules(scmp_filter_ctx ctx, int nr, const char *name)
{
	const scmp_datum_t dir = LOWPROF_FD_OUTDIR;
	bool two_dirs = strncmp(name, "renameat", 8) == 0; /* old and new directory fds */
	int rc;

	if (two_dirs) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2, SCMP_A0(SCMP_CMP_EQ, dir),
				      SCMP_A2(SCMP_CMP_EQ, dir));
		if (rc == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), nr, 1, SCMP_A0(SCMP_CMP_NE, dir));
		if (rc == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), nr, 2, SCMP_A0(SCMP_CMP_EQ, dir),
					      SCMP_A2(SCMP_CMP_NE, dir));
		return rc;
	}
	rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, dir));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), nr, 1, SCMP_A0(SCMP_CMP_NE, dir));
	return rc;
}

/*
 * socket(AF_INET or AF_INET6, ...) only; every other family EACCES (an
 * allowlist entry, not a kill: a library probing for a local daemon's Unix
 * socket is told no). The domain is an int passed sign-extended, so whole
 * 64-bit comparisons cover the families below AF_INET, between the two, and
 * above AF_INET6 (negative values included, as huge unsigned ones).
 */
static int seccomp_add_inet_rules(scmp_filter_ctx ctx, int nr)
{
	const uint32_t deny = SCMP_ACT_ERRNO(EACCES);
	scmp_datum_t family;
	int rc;

	rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, AF_INET));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, AF_INET6));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, deny, nr, 1, SCMP_A0(SCMP_CMP_LT, AF_INET));
	for (family = AF_INET + 1; rc == 0 && family < AF_INET6; family++)
		rc = seccomp_rule_add(ctx, deny, nr, 1, SCMP_A0(SCMP_CMP_EQ, family));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, deny, nr, 1, SCMP_A0(SCMP_CMP_GT, AF_INET6));
	return rc;
}

static int seccomp_add_entry(scmp_filter_ctx ctx, const struct seccomp_set *s,
			     const struct seccomp_entry *e, char *err, size_t errlen)
{
	uint32_t action = seccomp_entry_scmp_action(e->action);
	int nr = seccomp_syscall_resolve_name(e->name);
	int rc;

	/* A name this architecture does not have (open on arm64): nothing to allow. */
	if (nr == __NR_SCMP_ERROR)
		return 0;
	if (e->action == SECCOMP_ENTRY_ALLOW && strcmp(e->name, "clone") == 0 &&
	    (s->flags & SECCOMP_POLICY_THREADS_ONLY))
		rc = seccomp_rule_add(ctx, action, nr, 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	else if (e->action == SECCOMP_ENTRY_ALLOW && strcmp(e->name, "kill") == 0 &&
		 (s->flags & SECCOMP_POLICY_KILL_PROBE_ONLY))
		/* int argument: compare the low 32 bits only (the upper half is not defined). */
		rc = seccomp_rule_add(ctx, action, nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0));
	else if (e->action == SECCOMP_ENTRY_ALLOW && (s->flags & SECCOMP_POLICY_PATHS_IN_OUTDIR) &&
		 seccomp_is_path_call(e->name))
		rc = seccomp_add_outdir_rules(ctx, nr, e->name);
	else if (e->action == SECCOMP_ENTRY_ALLOW && strcmp(e->name, "socket") == 0 &&
		 (s->flags & SECCOMP_POLICY_INET_SOCKETS_ONLY))
		rc = seccomp_add_inet_rules(ctx, nr);
	else
		rc = seccomp_rule_add(ctx, action, nr, 0);
	if (rc != 0)
		snprintf(err, errlen, "seccomp rule for %s: %s", e->name, strerror(-rc));
	return rc;
}

static scmp_filter_ctx seccomp_build(const char *component, bool log_only, char *err, size_t errlen)
{
	static struct seccomp_set set; /* large; filters are built once per process */
	scmp_filter_ctx ctx;
	size_t i;
	int rc;

	rc = seccomp_set_build(component, &set);
	if (rc != 0) {
		snprintf(err, errlen, "seccomp policy '%s': %s", component,
			 rc == -ENOENT ? "no such component" : strerror(-rc));
		return NULL;
	}
	ctx = seccomp_init(log_only ? SCMP_ACT_LOG : SCMP_ACT_KILL_PROCESS);
	if (ctx == NULL) {
		snprintf(err, errlen, "seccomp_init failed");
		return NULL;
	}
	/* Every thread, including any a library started before us. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (rc != 0) {
		snprintf(err, errlen, "seccomp TSYNC: %s", strerror(-rc));
		goto fail;
	}
	for (i = 0; i < set.n; i++) {
		rc = seccomp_add_entry(ctx, &set, &set.e[i], err, errlen);
		if (rc != 0)
			goto fail;
	}
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}

int seccomp_install(const char *component, bool log_only, char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_build(component, log_only, err, errlen);
	int rc;

	if (ctx == NULL)
		return -EINVAL;
	rc = seccomp_load(ctx);
	if (rc != 0)
		snprintf(err, errlen, "loading the %s seccomp filter: %s", component, strerror(-rc));
	seccomp_release(ctx);
	return rc;
}

int seccomp_export(const char *component, bool log_only, int fd, char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_build(component, log_only, err, errlen);
	int rc;

	if (ctx == NULL)
		return -EINVAL;
	rc = seccomp_export_pfc(ctx, fd);
	if (rc != 0)
		snprintf(err, errlen, "seccomp_export_pfc: %s", strerror(-rc));
	seccomp_release(ctx);
	return rc;
}

int seccomp_list_names(const char *component, void (*fn)(const char *name, const char *action, void *arg),
		       void *arg)
{
	static const char *const actions[] = {"allow", "errno:EACCES", "errno:EPERM", "errno:ENOSYS"};
	static struct seccomp_set set;
	size_t i;
	int rc;

	rc = seccomp_set_build(component, &set);
	if (rc != 0)
		return rc;
	for (i = 0; i < set.n; i++)
		fn(set.e[i].name, actions[set.e[i].action], arg);
	return (int)set.n;
}
