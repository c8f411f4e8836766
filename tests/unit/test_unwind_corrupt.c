/* Hostile and broken unwind information: hand-built .eh_frame sections
 * (truncations, bogus lengths, CIE pointers out of the section or at
 * themselves, 64-bit lengths, absurd counts, unknown opcodes) and real
 * binaries with corrupted bytes.  Everything must be refused cleanly or give
 * a table that validates: never a crash, never a hang. */
#include <errno.h>
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
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/eh_frame.h"
#include "unwind/unwind_table.h"

/* ---- a tiny .eh_frame assembler ----------------------------------------- */

struct sec {
	uint8_t b[4096];
	size_t n;
	bool dwarf64; /* write entries with 64-bit initial lengths */
};

static void put(struct sec *s, const void *p, size_t n)
{
	assert_true(s->n + n <= sizeof(s->b));
	if (n > 0)
		memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put8(struct sec *s, uint8_t v)
{
	put(s, &v, 1);
}

static void put32(struct sec *s, uint32_t v)
{
	put(s, &v, 4);
}

/* Starts an entry; returns where its body begins (for end_entry). */
static size_t begin_entry(struct sec *s)
{
	if (s->dwarf64) {
		uint64_t zero = 0;

		put32(s, 0xffffffffu);
		put(s, &zero, 8);
	} else {
		put32(s, 0);
	}
	return s->n;
}

static void end_entry(struct sec *s, size_t body)
{
	uint64_t len = s->n - body;

	if (s->dwarf64)
		memcpy(s->b + body - 8, &len, 8);
	else
		memcpy(s->b + body - 4, &(uint32_t){ (uint32_t)len }, 4);
}

#define SEC_VADDR 0x2000

/* CIE "zR", pcrel|sdata4 FDE pointers, CFA = rsp+8, RA at cfa-8. */
static size_t add_cie(struct sec *s, const uint8_t *extra, size_t nextra)
{
	size_t start = s->n;
	size_t body = begin_entry(s);
	static const uint8_t hdr[] = { 1, 'z', 'R', 0, 1, 0x78 /* -8 */, 16, 1, 0x1b,
				       0x0c, 7, 8, /* def_cfa rsp+8 */
				       0x90, 1 /* offset r16 at cfa-8 */ };

	put32(s, 0);
	put(s, hdr, sizeof(hdr));
	put(s, extra, nextra);
	end_entry(s, body);
	return start;
}

static size_t add_fde(struct sec *s, size_t cie, uint64_t pc, uint32_t range,
		      const uint8_t *insns, size_t ninsns)
{
	size_t start = s->n;
	size_t body = begin_entry(s);
	int32_t rel;

	put32(s, (uint32_t)(s->n - cie)); /* CIE pointer: back from this field */
	rel = (int32_t)(pc - (SEC_VADDR + s->n));
	put32(s, (uint32_t)rel);
	put32(s, range);
	put8(s, 0); /* augmentation data length */
	put(s, insns, ninsns);
	end_entry(s, body);
	return start;
}

struct got {
	struct unwind_row rows[64];
	size_t nrows;
	int nfde;
	int bad;
};

static int collect(void *arg, const struct eh_frame_fde *fde, const struct unwind_row *rows,
		   size_t nrows, char *err, size_t errlen)
{
	struct got *g = arg;

	g->nfde++;
	g->bad += fde->bad_cfi;
	for (size_t i = 0; i < nrows && g->nrows < 64; i++) {
		assert_true(rows[i].pc >= fde->pc_begin && rows[i].pc < fde->pc_end);
		assert_true(i == 0 || rows[i].pc > rows[i - 1].pc);
		g->rows[g->nrows++] = rows[i];
	}
	return 0;
}

static int parse(const struct sec *s, bool debug, struct got *g, char *err, size_t errlen)
{
	struct eh_frame_section es = { .data = s->b, .size = s->n, .vaddr = SEC_VADDR,
				       .is_debug_frame = debug };

	memset(g, 0, sizeof(*g));
	err[0] = '\0';
	return eh_frame_parse(&es, collect, g, NULL, err, errlen);
}

static const uint8_t fde_prog[] = { 0x41, 0x0e, 16, /* advance 1; cfa rsp+16 */
				    0x86, 2,         /* rbp at cfa-16 */
				    0x44, 0x0e, 8 }; /* advance 4; cfa rsp+8 */

static void build_valid(struct sec *s, bool dwarf64)
{
	size_t cie;

	memset(s, 0, sizeof(*s));
	s->dwarf64 = dwarf64;
	cie = add_cie(s, NULL, 0);
	add_fde(s, cie, 0x1000, 0x20, fde_prog, sizeof(fde_prog));
	put32(s, 0); /* terminator */
}

static void check_valid_rows(const struct got *g)
{
	assert_int_equal(g->nfde, 1);
	assert_int_equal(g->bad, 0);
	assert_int_equal(g->nrows, 3);
	assert_int_equal(g->rows[0].pc, 0x1000);
	assert_int_equal(g->rows[0].cfa_kind, UNWIND_CFA_RSP);
	assert_int_equal(g->rows[0].cfa_off, 8);
	assert_int_equal(g->rows[1].pc, 0x1001);
	assert_int_equal(g->rows[1].cfa_off, 16);
	assert_int_equal(g->rows[1].rbp_kind, UNWIND_RBP_AT_CFA);
	assert_int_equal(g->rows[1].rbp_off, -16);
	assert_int_equal(g->rows[2].pc, 0x1005);
	assert_int_equal(g->rows[2].cfa_off, 8);
}

static void test_valid_and_dwarf64(void **state)
{
	struct sec s;
	struct got g;
	char err[256];

	build_valid(&s, false);
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), 0);
	check_valid_rows(&g);
	/* 64-bit initial lengths are legal DWARF: same rows. */
	build_valid(&s, true);
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), 0);
	check_valid_rows(&g);
}

/* Every prefix of a valid section: refused, or (at an entry boundary) fine. */
static void test_every_truncation(void **state)
{
	struct sec s, t;
	struct got g;
	char err[256];
	int refused = 0;

	build_valid(&s, false);
	for (size_t len = 0; len < s.n; len++) {
		t = s;
		t.n = len;
		if (parse(&t, false, &g, err, sizeof(err)) != 0) {
			assert_true(err[0] != '\0');
			refused++;
		}
	}
	print_message("  %d of %zu truncations refused\n", refused, s.n);
	assert_true(refused >= (int)s.n - 3);
}

static void test_bogus_lengths(void **state)
{
	struct sec s;
	struct got g;
	char err[256];

	build_valid(&s, false);
	memcpy(s.b, &(uint32_t){ 0x7fffffff }, 4); /* CIE runs past the end */
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "past the section end"));

	build_valid(&s, false);
	memcpy(s.b, &(uint32_t){ 0xfffffff5 }, 4); /* reserved */
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "reserved"));

	build_valid(&s, true);
	memcpy(s.b + 4, &(uint64_t){ UINT64_MAX - 3 }, 8); /* 64-bit length overflow */
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), -1);
}

static void test_cie_pointers(void **state)
{
	struct sec s;
	struct got g;
	char err[256];
	size_t cie, fde1, fde2;

	/* An FDE whose CIE pointer designates itself. */
	memset(&s, 0, sizeof(s));
	cie = add_cie(&s, NULL, 0);
	fde1 = add_fde(&s, cie, 0x1000, 0x10, NULL, 0);
	memcpy(s.b + fde1 + 4, &(uint32_t){ 4 }, 4);
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "itself"));
	print_message("  self: %s\n", err);

	/* A pointer before the start of the section. */
	memcpy(s.b + fde1 + 4, &(uint32_t){ 0x100000 }, 4);
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), -1);
	print_message("  before: %s\n", err);

	/* An FDE pointing at another FDE instead of a CIE ('.eh_frame' pointers
	 * only go backwards, so this is the only loop shape): refused. */
	memset(&s, 0, sizeof(s));
	cie = add_cie(&s, NULL, 0);
	fde1 = add_fde(&s, cie, 0x1000, 0x10, NULL, 0);
	fde2 = add_fde(&s, cie, 0x1010, 0x10, NULL, 0);
	memcpy(s.b + fde2 + 4, &(uint32_t){ (uint32_t)(fde2 + 4 - fde1) }, 4);
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not one"));

	/* .debug_frame: an absolute CIE offset past the end. */
	memset(&s, 0, sizeof(s));
	{
		size_t body = begin_entry(&s);
		static const uint8_t c[] = { 0xff, 0xff, 0xff, 0xff, 4, 0, 8, 0, 1, 0x78, 16,
					     0x0c, 7, 8, 0x90, 1 };

		put(&s, c, sizeof(c));
		end_entry(&s, body);
		body = begin_entry(&s);
		put32(&s, 0);                                  /* CIE at 0 */
		put(&s, &(uint64_t){ 0x401000 }, 8);           /* absolute pc */
		put(&s, &(uint64_t){ 0x10 }, 8);
		put8(&s, 0x41);
		put8(&s, 0x0e);
		put8(&s, 16);
		end_entry(&s, body);
	}
	assert_int_equal(parse(&s, true, &g, err, sizeof(err)), 0);
	assert_int_equal(g.nrows, 2);
	assert_int_equal(g.rows[0].pc, 0x401000);
	assert_int_equal(g.rows[1].cfa_off, 16);
	memcpy(s.b + 24, &(uint32_t){ 0x9999 }, 4);
	assert_int_equal(parse(&s, true, &g, err, sizeof(err)), -1);
}

/* A CFI program that cannot be run costs only its own FDE. */
static void expect_bad_cfi(const uint8_t *insns, size_t n)
{
	struct sec s;
	struct got g;
	char err[256];
	size_t cie;

	memset(&s, 0, sizeof(s));
	cie = add_cie(&s, NULL, 0);
	add_fde(&s, cie, 0x1000, 0x10, insns, n);
	add_fde(&s, cie, 0x1010, 0x10, fde_prog, sizeof(fde_prog));
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), 0);
	assert_int_equal(g.nfde, 2);
	assert_int_equal(g.bad, 1);
	assert_int_equal(g.rows[0].cfa_kind, UNWIND_CFA_UNSUPPORTED);
	assert_int_equal(g.rows[1].pc, 0x1010);
	assert_int_equal(g.rows[1].cfa_kind, UNWIND_CFA_RSP);
}

static void test_bad_programs(void **state)
{
	uint8_t deep[20];
	static const uint8_t unknown_op[] = { 0x41, 0x20 };
	static const uint8_t underflow[] = { 0x41, 0x0b };
	static const uint8_t overlong_leb[] = { 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
						0x80, 0x80, 0x80, 0x80, 0x01 };
	static const uint8_t truncated_op[] = { 0x41, 0x0c, 7 };
	static const uint8_t absurd_expr[] = { 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20 };

	memset(deep, 0x0a, sizeof(deep)); /* 20 nested remember_state */
	expect_bad_cfi(deep, sizeof(deep));
	expect_bad_cfi(unknown_op, sizeof(unknown_op));
	expect_bad_cfi(underflow, sizeof(underflow));
	expect_bad_cfi(overlong_leb, sizeof(overlong_leb));
	expect_bad_cfi(truncated_op, sizeof(truncated_op));
	expect_bad_cfi(absurd_expr, sizeof(absurd_expr));
}

static void test_advance_past_end(void **state)
{
	static const uint8_t far[] = { 0x04, 0xff, 0xff, 0xff, 0x7f, 0x0e, 16, 0x41, 0x0e, 24 };
	struct sec s;
	struct got g;
	char err[256];
	size_t cie;

	memset(&s, 0, sizeof(s));
	cie = add_cie(&s, NULL, 0);
	add_fde(&s, cie, 0x1000, 0x10, far, sizeof(far));
	assert_int_equal(parse(&s, false, &g, err, sizeof(err)), 0);
	assert_int_equal(g.nrows, 1); /* the rows beyond the FDE are dropped */
}

static void test_bad_augmentation(void **state)
{
	static const uint8_t huge_aug[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 0xff, 0xff, 0x03, 0x1b };
	static const uint8_t old_eh[] = { 1, 'e', 'h', 0, 1, 0x78, 16 };
	static const uint8_t bad_enc[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x0f };
	static const uint8_t zero_align[] = { 1, 'z', 'R', 0, 0, 0x78, 16, 1, 0x1b };
	static const uint8_t bad_version[] = { 7, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b };
	static const uint8_t unterminated[] = { 1, 'z', 'R', 'S', 'S', 'S', 'S', 'S', 'S', 'S',
						'S', 'S', 'S', 'S', 'S', 'S', 'S', 'S', 'S' };
	const struct {
		const uint8_t *b;
		size_t n;
	} cases[] = {
		{ huge_aug, sizeof(huge_aug) },   { old_eh, sizeof(old_eh) },
		{ bad_enc, sizeof(bad_enc) },     { zero_align, sizeof(zero_align) },
		{ bad_version, sizeof(bad_version) }, { unterminated, sizeof(unterminated) },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sec s;
		struct got g;
		char err[256];
		size_t body, cie;

		memset(&s, 0, sizeof(s));
		cie = s.n;
		body = begin_entry(&s);
		put32(&s, 0);
		put(&s, cases[i].b, cases[i].n);
		end_entry(&s, body);
		add_fde(&s, cie, 0x1000, 0x10, NULL, 0);
		assert_int_equal(parse(&s, false, &g, err, sizeof(err)), -1);
		print_message("  CIE case %zu: %s\n", i, err);
	}
}

/* ---- whole files -------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* File offset and size of a section, found with libelf. */
static void find_section(const uint8_t *img, size_t len, const char *want, size_t *off,
			 size_t *size)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*off = *size = 0;
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_memory((char *)img, len);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), want) == 0) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
		}
	}
	elf_end(elf);
	assert_true(*size > 0);
}

static void expect_refused_mem(const uint8_t *img, size_t len, const char *what)
{
	struct unwind_table t;
	char err[256] = "";

	assert_int_equal(unwind_table_build_mem(img, len, &t, err, sizeof(err)), -EINVAL);
	assert_true(err[0] != '\0');
	assert_null(t.rows);
	print_message("  %s: %s\n", what, err);
}

static void test_corrupt_binary(void **state)
{
	char path[512];
	size_t len, off, size;
	uint8_t *img, *copy;
	uint32_t first_len;

	snprintf(path, sizeof(path), "%s/chain_gcc_omit", UNWTEST_OUT);
	img = slurp(path, &len);
	find_section(img, len, ".eh_frame", &off, &size);
	copy = malloc(len);
	assert_non_null(copy);

	/* The first entry's length runs past the section. */
	memcpy(copy, img, len);
	memcpy(copy + off, &(uint32_t){ (uint32_t)size }, 4);
	expect_refused_mem(copy, len, "length past the section");

	/* The first FDE (after the first CIE) points at itself. */
	memcpy(&first_len, img + off, 4);
	memcpy(copy, img, len);
	memcpy(copy + off + 4 + first_len + 4, &(uint32_t){ 4 }, 4);
	expect_refused_mem(copy, len, "FDE's CIE pointer at itself");

	/* The file cut short in the middle of .eh_frame. */
	expect_refused_mem(img, off + size / 2, "file cut in .eh_frame");
	expect_refused_mem(img, 64, "ELF header only");
	free(copy);
	free(img);
}

static void test_not_elf(void **state)
{
	char path[] = "/tmp/lowprof-unwind-test-XXXXXX";
	char src[512], err[256];
	struct unwind_table t;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	/* An empty file. */
	assert_int_equal(unwind_table_build_fd(fd, &t, err, sizeof(err)), -EINVAL);
	print_message("  empty file: %s\n", err);
	assert_int_equal(write(fd, "#!/bin/sh\necho hello\n", 21), 21);
	assert_int_equal(unwind_table_build_fd(fd, &t, err, sizeof(err)), -EINVAL);
	print_message("  shell script: %s\n", err);
	close(fd);
	snprintf(src, sizeof(src), "%s/tests/programs/unwind/chain.c", LOWPROF_SOURCE_DIR);
	fd = open(src, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(unwind_table_build_fd(fd, &t, err, sizeof(err)), -EINVAL);
	close(fd);
	expect_refused_mem((const uint8_t *)"\x7f" "ELF", 4, "four bytes");
}

/* xorshift64*: a fixed seed makes a failure reproducible. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static void fuzz_file(const char *path, int iterations, uint64_t seed)
{
	size_t len, off, size, hoff, hsize;
	uint8_t *img, *copy;
	int built = 0, refused = 0;

	img = slurp(path, &len);
	find_section(img, len, ".eh_frame", &off, &size);
	find_section(img, len, ".eh_frame_hdr", &hoff, &hsize);
	copy = malloc(len);
	assert_non_null(copy);
	for (int i = 0; i < iterations; i++) {
		struct unwind_table t;
		char err[256];
		int flips = 1 + (int)(rng_next(&seed) % 8);

		memcpy(copy, img, len);
		for (int k = 0; k < flips; k++) {
			uint64_t r = rng_next(&seed);
			size_t at;

			/* Mostly the unwind sections, sometimes the headers. */
			if (r % 10 < 8)
				at = off + (size_t)(r >> 8) % size;
			else if (r % 10 == 8)
				at = hoff + (size_t)(r >> 8) % hsize;
			else
				at = (size_t)(r >> 8) % len;
			copy[at] ^= (uint8_t)(1u << ((r >> 4) % 8));
			if ((r >> 40) % 4 == 0)
				copy[at] = (uint8_t)(r >> 48); /* sometimes a whole byte */
		}
		if (unwind_table_build_mem(copy, len, &t, err, sizeof(err)) == 0) {
			assert_int_equal(unwind_table_validate(&t, err, sizeof(err)), 0);
			built++;
			unwind_table_free(&t);
		} else {
			refused++;
		}
	}
	print_message("  fuzz %s: %d iterations, %d built (validated), %d refused\n",
		      strrchr(path, '/') + 1, iterations, built, refused);
	free(copy);
	free(img);
}

static uint64_t fuzz_seed(void)
{
	const char *env = getenv("LOWPROF_FUZZ_SEED");

	return env ? strtoull(env, NULL, 0) : 0x10f7f0a5eedull;
}

static void test_fuzz_chain(void **state)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/chain_gcc_omit", UNWTEST_OUT);
	fuzz_file(path, 4000, fuzz_seed());
}

static void test_fuzz_ls(void **state)
{
	fuzz_file("/bin/ls", 1000, fuzz_seed() + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_and_dwarf64),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_bogus_lengths),
		cmocka_unit_test(test_cie_pointers),
		cmocka_unit_test(test_bad_programs),
		cmocka_unit_test(test_advance_past_end),
		cmocka_unit_test(test_bad_augmentation),
		cmocka_unit_test(test_corrupt_binary),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_fuzz_chain),
		cmocka_unit_test(test_fuzz_ls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
