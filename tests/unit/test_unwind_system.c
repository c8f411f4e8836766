/* Unwind tables of Debian's own binaries (built without frame pointers):
 * they build, validate, and at a function's first instruction the CFA is
 * RSP + 8 (only the return address is on the stack). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unwind/unwind_table.h"

#define LIBC_PATH "/lib/x86_64-linux-gnu/libc.so.6"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void build(const char *path, struct unwind_table *t)
{
	char err[256] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	if (unwind_table_build_fd(fd, t, err, sizeof(err)) != 0)
		fail_msg("%s: %s", path, err);
	close(fd);
	assert_int_equal(unwind_table_validate(t, err, sizeof(err)), 0);
}

static uint64_t elf_entry(const char *path)
{
	GElf_Ehdr eh;
	uint64_t entry;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_non_null(gelf_getehdr(elf, &eh));
	entry = eh.e_entry;
	elf_end(elf);
	close(fd);
	return entry;
}

static void expect_entry(const struct unwind_table *t, uint64_t pc, const char *name)
{
	const struct unwind_row *r = unwind_table_lookup(t, pc);
	char s[96] = "(no row)";

	if (r)
		unwind_row_format(r, s, sizeof(s));
	if (!r || r->cfa_kind != UNWIND_CFA_RSP || r->cfa_off != 8 ||
	    r->rbp_kind != UNWIND_RBP_SAME)
		fail_msg("%s at %#llx: %s, want cfa=rsp+8 rbp=same", name,
			 (unsigned long long)pc, s);
}

/* Defined function symbols of a shared library's dynamic symbol table. */
static uint64_t dynsym(const char *path, const char *want)
{
	char cmd[512], line[512], name[256];
	unsigned long long addr;
	uint64_t found = 0;
	char type;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *at;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		at = strchr(name, '@');
		if (at)
			*at = '\0';
		if ((type == 'T' || type == 'W') && strcmp(name, want) == 0)
			found = addr;
	}
	pclose(f);
	if (!found)
		fail_msg("%s: no function %s", path, want);
	return found;
}

static void test_bin_ls(void **state)
{
	struct unwind_table t;
	const struct unwind_row *r;
	uint64_t entry = elf_entry("/bin/ls");

	build("/bin/ls", &t);
	print_message("  /bin/ls: %zu rows (%zu bytes), %u FDEs, %u gaps\n", t.nrows,
		      t.nrows * sizeof(struct unwind_row), t.stats.n_fde, t.stats.n_gap);
	assert_true(t.nrows > 1000);
	assert_int_equal(t.stats.n_fde_bad_cfi, 0);
	assert_int_equal((int64_t)t.stats.n_fde, t.stats.hdr_fde_count);
	/* _start: the outermost frame. */
	r = unwind_table_lookup(&t, entry);
	assert_non_null(r);
	assert_int_equal(r->cfa_kind, UNWIND_CFA_END);
	/* Below the first FDE (the ELF header) nothing is known. */
	assert_null(unwind_table_lookup(&t, 0x40));
	/* Above the last FDE: the closing NONE row. */
	r = unwind_table_lookup(&t, UINT64_MAX);
	assert_int_equal(r->cfa_kind, UNWIND_CFA_NONE);
	unwind_table_free(&t);
}

static void test_libc(void **state)
{
	static const char *const funcs[] = { "malloc", "free", "printf", "qsort", "fopen",
					     "strtol", "getenv", "pthread_create", "fork",
					     "abort" };
	struct unwind_table t;
	double t0, best = 1e9;

	for (int i = 0; i < 10; i++) {
		t0 = now_ms();
		build(LIBC_PATH, &t);
		if (now_ms() - t0 < best)
			best = now_ms() - t0;
		if (i < 9)
			unwind_table_free(&t);
	}
	print_message("  libc.so.6: %zu rows (%zu bytes), %u FDEs (.eh_frame_hdr: %lld), "
		      "%u gaps, marks plt %u signal %u end %u unsupported %u; "
		      "built in %.2f ms (best of 10)\n",
		      t.nrows, t.nrows * sizeof(struct unwind_row), t.stats.n_fde,
		      (long long)t.stats.hdr_fde_count, t.stats.n_gap, t.stats.n_plt,
		      t.stats.n_signal, t.stats.n_end, t.stats.n_unsupported, best);
	assert_true(t.nrows > 10000);
	assert_int_equal((int64_t)t.stats.n_fde, t.stats.hdr_fde_count);
	assert_int_equal(t.stats.n_fde_bad_cfi, 0);
	assert_true(t.stats.n_signal >= 1);
	assert_true(t.stats.n_plt >= 1);
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		expect_entry(&t, dynsym(LIBC_PATH, funcs[i]), funcs[i]);
	unwind_table_free(&t);
}

/* Every exported function, not only a chosen few: nearly all start with
 * CFA = RSP + 8 (the rest are aliases into the middle of hand-written code). */
static void test_libc_all_entries(void **state)
{
	char line[512], name[256];
	unsigned long long addr;
	size_t total = 0, good = 0;
	struct unwind_table t;
	char type;
	FILE *f;

	build(LIBC_PATH, &t);
	f = popen("nm -D --defined-only " LIBC_PATH, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		const struct unwind_row *r;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    (type != 'T' && type != 'W'))
			continue;
		total++;
		r = unwind_table_lookup(&t, addr);
		if (r && r->cfa_kind == UNWIND_CFA_RSP && r->cfa_off == 8)
			good++;
	}
	pclose(f);
	print_message("  libc.so.6: %zu of %zu exported functions start with cfa=rsp+8\n", good,
		      total);
	assert_true(total > 1000);
	assert_true(good * 100 >= total * 98);
	unwind_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bin_ls),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_libc_all_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
