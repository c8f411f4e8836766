/* Unwind tables against binutils: for every FDE row that
 * `readelf --debug-dump=frames-interp` prints, the row lowprof builds for
 * that pc must give the same CFA rule, RBP rule and return-address rule,
 * and lowprof must not add change points readelf does not have.
 * Programs: tests/programs/unwind/, built by unwind/CMakeLists.txt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unwind/unwind_table.h"

#define LIBC_PATH "/lib/x86_64-linux-gnu/libc.so.6"

struct re_row {
	uint64_t pc;
	char cfa[32], rbp[32], ra[32];
};

struct re_cie {
	int section;
	uint64_t offset;
	bool signal;
	bool has_row;
	struct re_row row;
};

struct re_fde {
	int section;
	uint64_t cie, begin, end;
	size_t first, n; /* rows in re_dump.rows */
};

struct re_dump {
	struct re_row *rows;
	size_t nrows, rcap;
	struct re_cie *cies;
	size_t ncies, ccap;
	struct re_fde *fdes;
	size_t nfdes, fcap;
};

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need > *cap) {
		*cap = *cap ? *cap * 2 : 64;
		if (*cap < need)
			*cap = need;
		p = realloc(p, *cap * elem);
		assert_non_null(p);
	}
	return p;
}

/* Split a readelf table line into cells; "r3 (rbx)" is one cell. */
static int split_cells(char *line, char **cells, int max)
{
	int n = 0;

	for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
		if (tok[0] == '(' && n > 0)
			continue; /* the register name after "rN" */
		if (n == max)
			break;
		cells[n++] = tok;
	}
	return n;
}

static void re_parse(const char *path, struct re_dump *d)
{
	char cmd[512], line[1024];
	int section = 0, rbp_col = -1, ra_col = -1;
	bool in_cie = false;
	FILE *f;

	memset(d, 0, sizeof(*d));
	/* no-follow-links: libc's .gnu_debuglink would pull in the debug
	 * file's NOBITS .eh_frame, and readelf would then fail. */
	snprintf(cmd, sizeof(cmd),
		 "readelf --debug-dump=no-follow-links --debug-dump=frames-interp '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, len, id, cie, b, e;
		char *cells[40];
		int n;

		if (strncmp(line, "Contents of the ", 16) == 0) {
			section++;
			continue;
		}
		if (sscanf(line, "%llx %llx %llx", &off, &len, &id) == 3 && strstr(line, " CIE")) {
			struct re_cie *c;
			const char *q = strchr(line, '"');

			d->cies = grow(d->cies, &d->ccap, d->ncies + 1, sizeof(*d->cies));
			c = &d->cies[d->ncies++];
			memset(c, 0, sizeof(*c));
			c->section = section;
			c->offset = off;
			/* The augmentation is the quoted string: 'S' marks a signal frame. */
			c->signal = q && strchr(q + 1, 'S') && strchr(q + 1, 'S') < strchr(q + 1, '"');
			in_cie = true;
			rbp_col = ra_col = -1;
			continue;
		}
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &cie,
			   &b, &e) == 6) {
			struct re_fde *fd;

			d->fdes = grow(d->fdes, &d->fcap, d->nfdes + 1, sizeof(*d->fdes));
			fd = &d->fdes[d->nfdes++];
			fd->section = section;
			fd->cie = cie;
			fd->begin = b;
			fd->end = e;
			fd->first = d->nrows;
			fd->n = 0;
			in_cie = false;
			rbp_col = ra_col = -1;
			continue;
		}
		n = split_cells(line, cells, 40);
		if (n >= 2 && strcmp(cells[0], "LOC") == 0) {
			for (int i = 1; i < n; i++) {
				if (strcmp(cells[i], "rbp") == 0)
					rbp_col = i;
				if (strcmp(cells[i], "ra") == 0)
					ra_col = i;
			}
			continue;
		}
		if (n >= 2 && strlen(cells[0]) == 16 && strspn(cells[0], "0123456789abcdef") == 16) {
			struct re_row r;

			memset(&r, 0, sizeof(r));
			r.pc = strtoull(cells[0], NULL, 16);
			snprintf(r.cfa, sizeof(r.cfa), "%s", cells[1]);
			snprintf(r.rbp, sizeof(r.rbp), "%s", rbp_col > 0 && rbp_col < n ? cells[rbp_col] : "");
			snprintf(r.ra, sizeof(r.ra), "%s", ra_col > 0 && ra_col < n ? cells[ra_col] : "");
			if (in_cie && d->ncies > 0) {
				struct re_cie *c = &d->cies[d->ncies - 1];

				if (!c->has_row) {
					c->row = r;
					c->has_row = true;
				}
			} else if (d->nfdes > 0) {
				d->rows = grow(d->rows, &d->rcap, d->nrows + 1, sizeof(*d->rows));
				d->rows[d->nrows++] = r;
				d->fdes[d->nfdes - 1].n++;
			}
		}
	}
	assert_int_equal(pclose(f), 0);
	assert_true(d->nfdes > 0);
}

static void re_free(struct re_dump *d)
{
	free(d->rows);
	free(d->cies);
	free(d->fdes);
}

static const struct re_cie *re_find_cie(const struct re_dump *d, int section, uint64_t off)
{
	for (size_t i = 0; i < d->ncies; i++)
		if (d->cies[i].section == section && d->cies[i].offset == off)
			return &d->cies[i];
	return NULL;
}

struct cmp_result {
	size_t rows_checked, fdes_checked, plt_rows, signal_rows, end_rows, unsupported_rows;
};

/* Does our row say what readelf's cells say? */
static void check_row(const char *path, const struct re_row *re, bool signal,
		      const struct unwind_row *r, struct cmp_result *res)
{
	char ours[96];
	long n;

	assert_non_null(r);
	unwind_row_format(r, ours, sizeof(ours));
	if (signal) {
		assert_int_equal(r->cfa_kind, UNWIND_CFA_SIGNAL);
		res->signal_rows++;
		return;
	}
	if (strcmp(re->ra, "u") == 0) {
		assert_int_equal(r->cfa_kind, UNWIND_CFA_END);
		res->end_rows++;
		return;
	}
	if (strcmp(re->ra, "c-8") != 0) {
		assert_int_equal(r->cfa_kind, UNWIND_CFA_UNSUPPORTED);
		res->unsupported_rows++;
		return;
	}
	if (strcmp(re->cfa, "exp") == 0) {
		if (r->cfa_kind == UNWIND_CFA_PLT)
			res->plt_rows++;
		else
			assert_int_equal(r->cfa_kind, UNWIND_CFA_UNSUPPORTED);
		return;
	}
	if ((strncmp(re->cfa, "rsp+", 4) != 0 && strncmp(re->cfa, "rbp+", 4) != 0) ||
	    strtol(re->cfa + 4, NULL, 10) > UNWIND_CFA_OFF_MAX) {
		assert_int_equal(r->cfa_kind, UNWIND_CFA_UNSUPPORTED);
		res->unsupported_rows++;
		return;
	}
	n = strtol(re->cfa + 4, NULL, 10);
	if (r->cfa_kind != (re->cfa[1] == 's' ? UNWIND_CFA_RSP : UNWIND_CFA_RBP) || r->cfa_off != n)
		fail_msg("%s: pc %#llx readelf cfa=%s, ours %s", path, (unsigned long long)re->pc,
			 re->cfa, ours);
	if (re->rbp[0] == 'c') {
		n = strtol(re->rbp + 1, NULL, 10);
		if (r->rbp_kind != UNWIND_RBP_AT_CFA || r->rbp_off != n)
			fail_msg("%s: pc %#llx readelf rbp=%s, ours %s", path,
				 (unsigned long long)re->pc, re->rbp, ours);
	} else if (re->rbp[0] == '\0' || strcmp(re->rbp, "s") == 0) {
		assert_int_equal(r->rbp_kind, UNWIND_RBP_SAME);
	} else if (strcmp(re->rbp, "u") == 0) {
		/* readelf prints "u" both for no rule (same value) and undefined. */
		assert_true(r->rbp_kind == UNWIND_RBP_SAME || r->rbp_kind == UNWIND_RBP_UNDEFINED);
	} else {
		assert_int_equal(r->rbp_kind, UNWIND_RBP_UNDEFINED);
	}
}

static bool fde_overlaps_earlier(const struct re_dump *d, size_t k)
{
	const struct re_fde *f = &d->fdes[k];

	for (size_t i = 0; i < d->nfdes; i++) {
		const struct re_fde *g = &d->fdes[i];

		if (i == k || g->begin == g->end)
			continue;
		/* Earlier in sort order: lower start, or same start from an earlier section. */
		if ((g->begin < f->begin || (g->begin == f->begin && i < k)) && g->end > f->begin)
			return true;
	}
	return false;
}

static bool fde_starts_at(const struct re_dump *d, uint64_t pc)
{
	for (size_t i = 0; i < d->nfdes; i++)
		if (d->fdes[i].begin == pc && d->fdes[i].end > pc)
			return true;
	return false;
}

static void compare_with_readelf(const char *path, const struct unwind_table *t,
				 struct cmp_result *res)
{
	struct re_dump d;

	memset(res, 0, sizeof(*res));
	re_parse(path, &d);
	for (size_t k = 0; k < d.nfdes; k++) {
		const struct re_fde *f = &d.fdes[k];
		const struct re_cie *cie = re_find_cie(&d, f->section, f->cie);
		const struct unwind_row *end_row;
		bool signal;

		if (f->begin == f->end || f->begin == 0 || fde_overlaps_earlier(&d, k))
			continue;
		assert_non_null(cie);
		signal = cie->signal;
		if (f->n == 0) {
			/* No rows printed: the CIE's initial rules hold throughout. */
			struct re_row r = cie->row;

			assert_true(cie->has_row);
			r.pc = f->begin;
			check_row(path, &r, signal, unwind_table_lookup(t, f->begin), res);
			res->rows_checked++;
		}
		for (size_t i = 0; i < f->n; i++) {
			const struct re_row *r = &d.rows[f->first + i];

			if (r->pc >= f->end)
				break; /* readelf also prints rules past the FDE's range */
			check_row(path, r, signal, unwind_table_lookup(t, r->pc), res);
			res->rows_checked++;
		}
		/* Every change point of ours inside the FDE is one readelf has. */
		for (const struct unwind_row *r = unwind_table_lookup(t, f->begin);
		     r < t->rows + t->nrows && r->pc < f->end; r++) {
			bool known = r->pc <= f->begin;

			for (size_t i = 0; i < f->n && !known; i++)
				known = d.rows[f->first + i].pc == r->pc;
			if (!known)
				fail_msg("%s: our row at %#llx is not a readelf row", path,
					 (unsigned long long)r->pc);
		}
		/* Past the FDE, unless another one starts there: no information. */
		if (!fde_starts_at(&d, f->end)) {
			end_row = unwind_table_lookup(t, f->end);
			assert_non_null(end_row);
			assert_int_equal(end_row->cfa_kind, UNWIND_CFA_NONE);
		}
		res->fdes_checked++;
	}
	re_free(&d);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void build(const char *path, struct unwind_table *t)
{
	char err[256] = "";
	double t0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail_msg("open %s", path);
	t0 = now_ms();
	if (unwind_table_build_fd(fd, t, err, sizeof(err)) != 0)
		fail_msg("%s: %s", path, err);
	close(fd);
	assert_int_equal(unwind_table_validate(t, err, sizeof(err)), 0);
	print_message("  %-22s %6zu rows, %5u FDEs (+%u .debug_frame), %.2f ms\n",
		      strrchr(path, '/') + 1, t->nrows, t->stats.n_fde, t->stats.n_debug_fde,
		      now_ms() - t0);
}

static void check_program(const char *path, bool executable, struct cmp_result *res)
{
	struct unwind_table t;

	build(path, &t);
	compare_with_readelf(path, &t, res);
	print_message("  %-22s %zu FDEs, %zu readelf rows agree (plt %zu, signal %zu, end %zu, "
		      "unsupported %zu)\n", strrchr(path, '/') + 1, res->fdes_checked,
		      res->rows_checked, res->plt_rows, res->signal_rows, res->end_rows,
		      res->unsupported_rows);
	assert_true(res->rows_checked > 0);
	assert_int_equal(t.stats.n_fde_bad_cfi, 0);
	/* Every program has an outermost frame: _start. */
	if (executable)
		assert_true(res->end_rows > 0);
	unwind_table_free(&t);
}

static void test_chain_programs(void **state)
{
	static const char *const progs[] = { "chain_gcc_omit", "chain_gcc_fp", "chain_clang_omit",
					     "chain_clang_fp" };
	struct cmp_result res;
	char path[512];

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", UNWTEST_OUT, progs[i]);
		check_program(path, true, &res);
	}
}

static void test_debug_frame(void **state)
{
	static const char *const progs[] = { "chain_debug_frame", "chain_debug_frame_gz" };
	struct cmp_result res;
	struct unwind_table t;
	char path[512];

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", UNWTEST_OUT, progs[i]);
		build(path, &t);
		/* The program's own functions are described only there. */
		assert_true(t.stats.n_debug_fde >= 6);
		unwind_table_free(&t);
		check_program(path, true, &res);
	}
}

static void test_plt(void **state)
{
	struct cmp_result res;
	char path[512];

	snprintf(path, sizeof(path), "%s/plt_calls", UNWTEST_OUT);
	check_program(path, true, &res);
	assert_true(res.plt_rows >= 1);
	snprintf(path, sizeof(path), "%s/libunwtest_plt.so", UNWTEST_OUT);
	check_program(path, false, &res);
}

static void test_signal_program(void **state)
{
	struct cmp_result res;
	char path[512];

	snprintf(path, sizeof(path), "%s/sighandler", UNWTEST_OUT);
	check_program(path, true, &res);
}

/* The libc build carries the signal trampoline (__restore_rt, 'S'), the PLT
 * and clone's thread start (RA undefined). */
static void test_libc(void **state)
{
	struct cmp_result res;

	check_program(LIBC_PATH, false, &res);
	assert_true(res.signal_rows >= 1);
	assert_true(res.end_rows >= 2);
	assert_true(res.rows_checked > 20000);
}

static void test_bin_ls(void **state)
{
	struct cmp_result res;

	check_program("/bin/ls", true, &res);
	assert_true(res.rows_checked > 1000);
}

static uint64_t symbol(const char *path, const char *name)
{
	char cmd[512], line[512], sym[256];
	unsigned long long addr;
	uint64_t found = 0;
	char type;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && strcmp(sym, name) == 0)
			found = addr;
	}
	pclose(f);
	if (!found)
		fail_msg("%s: no symbol %s", path, name);
	return found;
}

static void expect_at(const struct unwind_table *t, uint64_t pc, unsigned kind, int32_t off,
		      unsigned rbp_kind, int16_t rbp_off)
{
	const struct unwind_row *r = unwind_table_lookup(t, pc);
	char s[96];

	assert_non_null(r);
	unwind_row_format(r, s, sizeof(s));
	if (r->cfa_kind != kind || r->cfa_off != off || r->rbp_kind != rbp_kind ||
	    r->rbp_off != rbp_off)
		fail_msg("pc %#llx: got %s, want kind %u off %d rbp %u/%d",
			 (unsigned long long)pc, s, kind, off, rbp_kind, rbp_off);
}

static void test_marks(void **state)
{
	struct cmp_result res;
	struct unwind_table t;
	char path[512];
	uint64_t a;

	snprintf(path, sizeof(path), "%s/cfi_marks", UNWTEST_OUT);
	check_program(path, true, &res);
	build(path, &t);
	expect_at(&t, symbol(path, "unwtest_sigtramp"), UNWIND_CFA_SIGNAL, 0, 0, 0);
	expect_at(&t, symbol(path, "unwtest_thread_start") + 2, UNWIND_CFA_END, 0, 0, 0);
	a = symbol(path, "unwtest_weird_expr");
	expect_at(&t, a, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0);
	expect_at(&t, a + 1, UNWIND_CFA_UNSUPPORTED, 0, 0, 0);
	/* Code no FDE covers, between two that do. */
	a = symbol(path, "unwtest_nocfi");
	expect_at(&t, a, UNWIND_CFA_NONE, 0, 0, 0);
	expect_at(&t, a + 2, UNWIND_CFA_NONE, 0, 0, 0);
	/* push rbp (1) ; mov rsp,rbp (3) ; test ; je ; pop rbp ; ret ; nop ... */
	a = symbol(path, "unwtest_fp_remember");
	expect_at(&t, a + 1, UNWIND_CFA_RSP, 16, UNWIND_RBP_AT_CFA, -16);
	expect_at(&t, a + 4, UNWIND_CFA_RBP, 16, UNWIND_RBP_AT_CFA, -16);
	expect_at(&t, a + 9, UNWIND_CFA_RSP, 8, UNWIND_RBP_SAME, 0);   /* after pop: ret */
	expect_at(&t, a + 10, UNWIND_CFA_RBP, 16, UNWIND_RBP_AT_CFA, -16); /* restored state */
	a = symbol(path, "unwtest_rbp_in_reg");
	expect_at(&t, a + 3, UNWIND_CFA_RSP, 8, UNWIND_RBP_UNDEFINED, 0);
	a = symbol(path, "unwtest_ra_elsewhere");
	expect_at(&t, a + 1, UNWIND_CFA_UNSUPPORTED, 0, 0, 0);
	a = symbol(path, "unwtest_big_frames");
	expect_at(&t, a + 7, UNWIND_CFA_RSP, 0x100008, UNWIND_RBP_SAME, 0);
	expect_at(&t, a + 14, UNWIND_CFA_UNSUPPORTED, 0, 0, 0);
	unwind_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_programs),
		cmocka_unit_test(test_debug_frame),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_signal_program),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_bin_ls),
		cmocka_unit_test(test_libc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
