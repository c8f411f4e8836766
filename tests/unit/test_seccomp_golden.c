/*
 * Each component's seccomp filter, exported as PFC text, must equal its golden
 * file in seccomp/golden/: a changed allowlist is a reviewed change. After
 * changing a policy, regenerate with `cmake --build BUILD --target seccomp-golden`
 * and review the diff. The golden files are x86_64 output of libseccomp 2.5;
 * elsewhere the test only checks that each filter builds.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "seccomp/seccomp_install.h"

static char *export_to_string(const char *component, bool log_only)
{
	char err[256], *buf;
	off_t len;
	int fd = memfd_create("pfc", MFD_CLOEXEC);

	assert_true(fd >= 0);
	if (seccomp_export(component, log_only, fd, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	len = lseek(fd, 0, SEEK_END);
	assert_true(len > 0);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
	close(fd);
	return buf;
}

static char *read_golden(const char *component)
{
	char path[512], *buf;
	FILE *f;
	long len;

	snprintf(path, sizeof(path), "%s/seccomp/golden/%s.pfc", LOWPROF_SOURCE_DIR, component);
	f = fopen(path, "re");
	if (f == NULL)
		fail_msg("missing golden file %s (cmake --build BUILD --target seccomp-golden)", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return buf;
}

static void check_component(const char *component)
{
	char *got = export_to_string(component, false);
	char *want;

	if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
		free(got);
		skip();
	}
	want = read_golden(component);
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "%s filter differs from seccomp/golden/%s.pfc; got:\n%s\n", component,
			component, got);
		fail_msg("%s: regenerate with `cmake --build BUILD --target seccomp-golden` and review",
			 component);
	}
	free(got);
	free(want);
}

static void test_loader(void **state) { (void)state; check_component("loader"); }
static void test_exporter(void **state) { (void)state; check_component("exporter"); }
static void test_controller(void **state) { (void)state; check_component("controller"); }
static void test_unwinder(void **state) { (void)state; check_component("unwinder"); }
static void test_supervisor(void **state) { (void)state; check_component("supervisor"); }

/* The LOG flavour differs only in its default action. */
static void test_log_flavour(void **state)
{
	char *kill = export_to_string("controller", false);
	char *log = export_to_string("controller", true);

	(void)state;
	assert_non_null(strstr(kill, "action KILL_PROCESS;"));
	assert_null(strstr(kill, "action LOG;"));
	assert_non_null(strstr(log, "action LOG;"));
	free(kill);
	free(log);
}

/* What the issue forbids: no exec nor ptrace in the exporter, no bpf outside the loader. */
static void check_absent(const char *component, const char *name)
{
	char needle[64];
	char *pfc = export_to_string(component, false);
	int nr = seccomp_syscall_resolve_name(name);

	snprintf(needle, sizeof(needle), "if ($syscall == %d)", nr);
	if (strstr(pfc, needle) != NULL)
		fail_msg("%s filter mentions %s", component, name);
	free(pfc);
}

static void test_forbidden(void **state)
{
	(void)state;
	check_absent("exporter", "execve");
	check_absent("exporter", "ptrace");
	check_absent("exporter", "bpf");
	check_absent("controller", "bpf");
	check_absent("controller", "execve");
	check_absent("unwinder", "socket");
	check_absent("unwinder", "bpf");
	check_absent("loader", "ptrace");
}

static void test_unknown(void **state)
{
	char err[128];

	(void)state;
	assert_int_not_equal(seccomp_export("nonesuch", false, 1, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "no such component"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loader),     cmocka_unit_test(test_exporter),
		cmocka_unit_test(test_controller), cmocka_unit_test(test_unwinder),
		cmocka_unit_test(test_supervisor), cmocka_unit_test(test_log_flavour),
		cmocka_unit_test(test_forbidden),  cmocka_unit_test(test_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
