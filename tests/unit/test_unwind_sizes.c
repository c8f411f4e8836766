/*
 * docs/SECURITY.md, "Sizes before reads": a section header claiming more than
 * 256 MiB (UNWIND_MAX_SECTION_SIZE) is refused before libelf reads a byte of
 * it, and so is a compressed one whose header (raw size) or compression
 * header (inflated size) claims more.
 *
 * As an attacker on the host would: a small ELF file made sparse up to the
 * size one section header claims, so the claim lies within the file (libelf's
 * own "past the end of the file" check cannot refuse it) but costs nothing on
 * disk. Each parse runs through unwind_table_build_fd(), the unwinder's path,
 * in a child process whose peak RSS and CPU time the parent reads (wait4):
 * a refusal costs a few MiB and milliseconds, reading the claim costs at
 * least the 256 MiB claimed.
 *
 * And "Section headers before libelf": libelf allocates ~200 bytes for each
 * section header a file declares before returning from elf_begin(), and
 * extended numbering (e_shnum 0, the count in section 0's sh_size) lets a
 * sparse file declare millions. A file of more than 65536
 * (UNWIND_MAX_SECTIONS), or whose table does not lie within it, is refused
 * from its header, read with pread; one of exactly 65536 still parses.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_elf_header.h"
#include <zlib.h>

#include "unwind/unwind_table.h"

/* UNWIND_MAX_SECTION_SIZE (unwind/unwind_build.c), as the doc states it. */
#define CAP (256ull << 20)
#define CLAIM (CAP + 1)
/* Far below the claim: reading it would show as at least 256 MiB. */
#define MAX_RSS_KB (128 * 1024L)
#define MAX_CPU_MS 200
/* UNWIND_MAX_SECTIONS (unwind/unwind_build.c). */
#define MAX_SECTIONS 65536u

#if defined(LOWPROF_SANITIZE) || defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1 /* no RLIMIT_AS: ASan reserves terabytes */
#else
#define UNDER_ASAN 0
#endif

enum big { BIG_EH_FRAME = 1, BIG_EH_FRAME_HDR, BIG_DEBUG_FRAME, BIG_SHSTRTAB };

static const char shstr[] = "\0.eh_frame\0.eh_frame_hdr\0.debug_frame\0.shstrtab";
#define NAME_EH_FRAME 1
#define NAME_EH_FRAME_HDR 11
#define NAME_DEBUG_FRAME 25
#define NAME_SHSTRTAB 38

#define SHOFF 0x2000
#define BIG_OFF 0x3000

struct crafted {
	enum big big;          /* the section whose header makes the claim */
	uint64_t sh_size;      /* its header's size */
	bool compressed;       /* SHF_COMPRESSED, with an Elf64_Chdr at its start */
	uint64_t ch_size;      /* the compression header's (inflated) size */
	const uint8_t *stream; /* zlib stream after the Chdr (NULL: none) */
	size_t stream_len;
};

static void pwrite_all(int fd, const void *p, size_t n, off_t off)
{
	assert_int_equal(pwrite(fd, p, n, off), (ssize_t)n);
}

/*
 * An x86_64 ELF file: one executable PT_LOAD, the sections .eh_frame,
 * .eh_frame_hdr, .debug_frame and .shstrtab, each small and valid but for
 * c->big, which lies at BIG_OFF and whose header claims c->sh_size bytes; the
 * file is extended (sparsely) to hold the claim. Returns an fd to it.
 */
static int crafted_file(const struct crafted *c)
{
	static const uint8_t eh_frame_hdr[12] = {1, 0x1b, 3, 0x3b}; /* version 1, 0 FDEs */
	static const uint8_t terminator[4] = {0};
	char path[] = "/tmp/lowprof-unwind-sizes-XXXXXX";
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr sh[5];
	uint64_t small_off = 0x200;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	test_elf_header(&eh, SHOFF, 5, 4);
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_vaddr = ph.p_paddr = 0x400000;
	ph.p_filesz = ph.p_memsz = 0x1000;
	ph.p_align = 0x1000;
	pwrite_all(fd, &eh, sizeof(eh), 0);
	pwrite_all(fd, &ph, sizeof(ph), sizeof(eh));

	memset(sh, 0, sizeof(sh));
	sh[1].sh_name = NAME_EH_FRAME;
	sh[2].sh_name = NAME_EH_FRAME_HDR;
	sh[3].sh_name = NAME_DEBUG_FRAME;
	sh[4].sh_name = NAME_SHSTRTAB;
	for (int i = 1; i <= 4; i++) {
		sh[i].sh_type = i == 4 ? SHT_STRTAB : SHT_PROGBITS;
		sh[i].sh_addralign = 1;
		if (i == 1 || i == 2) {
			sh[i].sh_flags = SHF_ALLOC;
			sh[i].sh_addr = 0x400000 + small_off;
		}
		if (i == (int)c->big)
			continue;
		sh[i].sh_offset = small_off;
		if (i == 2) {
			sh[i].sh_size = sizeof(eh_frame_hdr);
			pwrite_all(fd, eh_frame_hdr, sizeof(eh_frame_hdr), (off_t)small_off);
		} else if (i == 4) {
			sh[i].sh_size = sizeof(shstr);
			pwrite_all(fd, shstr, sizeof(shstr), (off_t)small_off);
		} else {
			sh[i].sh_size = sizeof(terminator);
			pwrite_all(fd, terminator, sizeof(terminator), (off_t)small_off);
		}
		small_off += 0x100;
	}
	sh[c->big].sh_offset = BIG_OFF;
	sh[c->big].sh_size = c->sh_size;
	if (c->big == BIG_SHSTRTAB)
		pwrite_all(fd, shstr, sizeof(shstr), BIG_OFF);
	if (c->compressed) {
		Elf64_Chdr ch = {.ch_type = ELFCOMPRESS_ZLIB, .ch_size = c->ch_size,
				 .ch_addralign = 1};

		/* libelf inflates only sections that are not SHF_ALLOC. */
		sh[c->big].sh_flags = SHF_COMPRESSED;
		sh[c->big].sh_addralign = 8;
		pwrite_all(fd, &ch, sizeof(ch), BIG_OFF);
		if (c->stream)
			pwrite_all(fd, c->stream, c->stream_len, BIG_OFF + sizeof(ch));
	}
	pwrite_all(fd, sh, sizeof(sh), SHOFF);
	assert_int_equal(ftruncate(fd, (off_t)(BIG_OFF + c->sh_size)), 0);
	return fd;
}

struct outcome {
	int rc;
	char err[256];
	long maxrss_kb;
	long cpu_ms;
};

/* unwind_table_build_fd(fd) in a child process: its result, peak RSS and CPU
 * time. as_limit: the child's RLIMIT_AS (0: none; none under ASan either). */
static void build_in_child(int fd, struct outcome *o, uint64_t as_limit)
{
	struct rusage ru;
	int pipefd[2], status;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct unwind_table t;
		struct outcome r;

		memset(&r, 0, sizeof(r));
		if (as_limit && !UNDER_ASAN) {
			struct rlimit rl = {.rlim_cur = as_limit, .rlim_max = as_limit};

			if (setrlimit(RLIMIT_AS, &rl) != 0)
				_exit(2);
		}
		r.rc = unwind_table_build_fd(fd, &t, r.err, sizeof(r.err));
		if (r.rc == 0)
			unwind_table_free(&t);
		_exit(write(pipefd[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], o, sizeof(*o)), (ssize_t)sizeof(*o));
	close(pipefd[0]);
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	o->maxrss_kb = ru.ru_maxrss;
	o->cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000L;
}

/* The file fd is refused, saying `want`, at the cost of a refusal: a few MiB
 * and milliseconds. */
static void expect_fd_refused_cheaply(const char *what, int fd, uint64_t as_limit,
				      const char *want)
{
	struct outcome o;

	build_in_child(fd, &o, as_limit);
	print_message("  %s: rc %d \"%s\", peak RSS %ld KiB, CPU %ld ms\n", what, o.rc, o.err,
		      o.maxrss_kb, o.cpu_ms);
	if (o.rc != -EINVAL)
		fail_msg("%s: not refused (rc %d, \"%s\")", what, o.rc, o.err);
	if (o.maxrss_kb > MAX_RSS_KB)
		fail_msg("%s: the parse peaked at %ld KiB of RSS (at most %ld expected): the claimed "
			 "size was read before it was checked", what, o.maxrss_kb, MAX_RSS_KB);
	if (o.cpu_ms > MAX_CPU_MS)
		fail_msg("%s: the refusal took %ld ms of CPU (at most %d expected): the claimed "
			 "size was read before it was checked", what, o.cpu_ms, MAX_CPU_MS);
	if (strstr(o.err, want) == NULL)
		fail_msg("%s: refused for another reason: \"%s\" (expected \"%s\")", what, o.err, want);
}

/* The file of c is refused, saying `want`, before anything near the claim is read. */
static void expect_refused_cheaply(const char *what, const struct crafted *c, const char *want)
{
	int fd = crafted_file(c);

	expect_fd_refused_cheaply(what, fd, 0, want);
	close(fd);
}

static void test_sections_over_the_cap(void **state)
{
	struct crafted c = {.sh_size = CLAIM};

	(void)state;
	c.big = BIG_EH_FRAME;
	expect_refused_cheaply(".eh_frame claims 256 MiB + 1", &c, ".eh_frame: 268435457 bytes");
	c.big = BIG_EH_FRAME_HDR;
	expect_refused_cheaply(".eh_frame_hdr claims 256 MiB + 1", &c,
			       ".eh_frame_hdr: 268435457 bytes");
	c.big = BIG_DEBUG_FRAME;
	expect_refused_cheaply(".debug_frame claims 256 MiB + 1", &c,
			       ".debug_frame: 268435457 bytes");
}

/* libelf reads the section name table whole at the first name looked up. */
static void test_name_table_over_the_cap(void **state)
{
	struct crafted c = {.big = BIG_SHSTRTAB, .sh_size = CLAIM};

	(void)state;
	expect_refused_cheaply(".shstrtab claims 256 MiB + 1", &c,
			       "section name table: 268435457 bytes");
}

/* A compressed section is read raw (sh_size bytes) for its compression header. */
static void test_compressed_raw_over_the_cap(void **state)
{
	struct crafted c = {.big = BIG_DEBUG_FRAME, .sh_size = CLAIM, .compressed = true,
			    .ch_size = 64};

	(void)state;
	expect_refused_cheaply("compressed .debug_frame, header claims 256 MiB + 1", &c,
			       ".debug_frame: 268435457 bytes");
}

/* zlib stream of n zero bytes, built from one full-flushed 1 MiB block
 * repeated (full flushes make pieces independent and byte-aligned). */
static uint8_t *zeros_stream(uint64_t n, size_t *len)
{
	const size_t chunk = 1u << 20;
	uint8_t *zero = calloc(1, chunk), *block = malloc(chunk), *tail = malloc(256), *out;
	size_t block_len, tail_len, pos = 0;
	uint64_t reps = n / chunk, rest = n % chunk;
	uLong adler = adler32(0, NULL, 0);
	z_stream z;

	assert_non_null(zero);
	assert_non_null(block);
	assert_non_null(tail);
	assert_true(rest < 256);
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = zero;
	z.avail_in = (uInt)chunk;
	z.next_out = block;
	z.avail_out = (uInt)chunk;
	assert_int_equal(deflate(&z, Z_FULL_FLUSH), Z_OK);
	assert_int_equal(z.avail_in, 0);
	block_len = chunk - z.avail_out;
	deflateEnd(&z);
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = zero;
	z.avail_in = (uInt)rest;
	z.next_out = tail;
	z.avail_out = 256;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	tail_len = 256 - z.avail_out;
	deflateEnd(&z);

	out = malloc(2 + reps * block_len + tail_len + 4);
	assert_non_null(out);
	out[pos++] = 0x78;
	out[pos++] = 0xda;
	for (uint64_t i = 0; i < reps; i++) {
		memcpy(out + pos, block, block_len);
		pos += block_len;
		adler = adler32(adler, zero, (uInt)chunk);
	}
	memcpy(out + pos, tail, tail_len);
	pos += tail_len;
	adler = adler32(adler, zero, (uInt)rest);
	for (int i = 3; i >= 0; i--)
		out[pos++] = (uint8_t)(adler >> (8 * i));
	free(zero);
	free(block);
	free(tail);
	*len = pos;
	return out;
}

/* A compression header claiming more than the cap, over a real stream that
 * inflates to that much: refused before libelf inflates it. */
static void test_compressed_inflated_over_the_cap(void **state)
{
	struct crafted c = {.big = BIG_DEBUG_FRAME, .compressed = true, .ch_size = CLAIM};
	uint8_t *check;
	uLongf check_len = 4096;

	(void)state;
	c.stream = zeros_stream(CLAIM, &c.stream_len);
	/* The stream is what it claims: its start inflates to zeros. */
	check = malloc(check_len);
	assert_non_null(check);
	assert_int_equal(uncompress(check, &check_len, c.stream, c.stream_len), Z_BUF_ERROR);
	assert_int_equal(check_len, 4096);
	assert_int_equal(check[0] | check[4095], 0);
	free(check);
	c.sh_size = sizeof(Elf64_Chdr) + c.stream_len;
	print_message("  (a zlib stream of %zu bytes that inflates to 256 MiB + 1)\n", c.stream_len);
	expect_refused_cheaply("compressed .debug_frame, compression header claims 256 MiB + 1",
			       &c, ".debug_frame: bad compression header");
	free((void *)c.stream);
}

/*
 * An x86_64 ELF file declaring `declared` section headers by extended
 * numbering: e_shnum 0 (the count in section 0's sh_size) and e_shstrndx
 * SHN_XINDEX (the name table's index in section 0's sh_link). Of its headers
 * `held` lie within the file: section 1 is .eh_frame (a terminator), section
 * held - 1 the name table, the others zeros (SHT_NULL), holes of a sparse
 * file. Returns an fd to it.
 */
static int many_sections_file(uint64_t declared, uint64_t held)
{
	static const uint8_t terminator[4] = {0};
	static const char names[] = "\0.eh_frame\0.shstrtab";
	char path[] = "/tmp/lowprof-unwind-sizes-XXXXXX";
	const uint64_t shoff = 0x1000, names_off = 0x200, eh_off = 0x300;
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_true(held >= 3);
	unlink(path);
	test_elf_header(&eh, shoff, 0, SHN_XINDEX);
	pwrite_all(fd, &eh, sizeof(eh), 0);
	pwrite_all(fd, names, sizeof(names), (off_t)names_off);
	pwrite_all(fd, terminator, sizeof(terminator), (off_t)eh_off);

	memset(&sh, 0, sizeof(sh));
	sh.sh_size = declared;
	sh.sh_link = (uint32_t)(held - 1);
	pwrite_all(fd, &sh, sizeof(sh), (off_t)shoff);
	memset(&sh, 0, sizeof(sh));
	sh.sh_name = 1;
	sh.sh_type = SHT_PROGBITS;
	sh.sh_flags = SHF_ALLOC;
	sh.sh_addr = 0x400000 + eh_off;
	sh.sh_offset = eh_off;
	sh.sh_size = sizeof(terminator);
	sh.sh_addralign = 4;
	pwrite_all(fd, &sh, sizeof(sh), (off_t)(shoff + sizeof(sh)));
	memset(&sh, 0, sizeof(sh));
	sh.sh_name = 11;
	sh.sh_type = SHT_STRTAB;
	sh.sh_offset = names_off;
	sh.sh_size = sizeof(names);
	sh.sh_addralign = 1;
	pwrite_all(fd, &sh, sizeof(sh), (off_t)(shoff + (held - 1) * sizeof(sh)));
	assert_int_equal(ftruncate(fd, (off_t)(shoff + held * sizeof(sh))), 0);
	return fd;
}

/*
 * 16M section headers (the review's file: libelf spent 3.4 GB on it), a
 * 1 GiB sparse file: refused from the header, in a child whose address
 * space is capped at 1 GiB (not under ASan) and whose peak RSS is read.
 */
static void test_millions_of_section_headers(void **state)
{
	const uint64_t n = 16u << 20;
	int fd = many_sections_file(n, n);

	(void)state;
	expect_fd_refused_cheaply("16M section headers (extended numbering)", fd, 1ull << 30,
				  "16777216 section headers, more than 65536");
	close(fd);
}

/* The cap is exact: 65536 headers (name table at 65535, past SHN_LORESERVE)
 * parse, 65537 are refused. */
static void test_section_headers_at_the_cap(void **state)
{
	struct outcome o;
	int fd = many_sections_file(MAX_SECTIONS, MAX_SECTIONS);

	(void)state;
	build_in_child(fd, &o, 1ull << 30);
	close(fd);
	print_message("  65536 section headers: rc %d \"%s\", peak RSS %ld KiB, CPU %ld ms\n", o.rc,
		      o.err, o.maxrss_kb, o.cpu_ms);
	if (o.rc != 0)
		fail_msg("a file of 65536 section headers was refused: \"%s\"", o.err);
	if (o.maxrss_kb > MAX_RSS_KB)
		fail_msg("65536 section headers cost %ld KiB of RSS", o.maxrss_kb);

	fd = many_sections_file(MAX_SECTIONS + 1, MAX_SECTIONS + 1);
	expect_fd_refused_cheaply("65537 section headers", fd, 1ull << 30,
				  "65537 section headers, more than 65536");
	close(fd);
}

/* A table that does not lie whole within the file (but within the cap):
 * 60,000 headers declared, the file ends after 30,000 of them. */
static void test_section_header_table_past_the_end(void **state)
{
	int fd = many_sections_file(60000, 30000);

	(void)state;
	expect_fd_refused_cheaply("60,000 section headers declared, 30,000 in the file", fd,
				  1ull << 30,
				  "no section header table within the file");
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sections_over_the_cap),
		cmocka_unit_test(test_name_table_over_the_cap),
		cmocka_unit_test(test_compressed_raw_over_the_cap),
		cmocka_unit_test(test_compressed_inflated_over_the_cap),
		cmocka_unit_test(test_millions_of_section_headers),
		cmocka_unit_test(test_section_headers_at_the_cap),
		cmocka_unit_test(test_section_header_table_past_the_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
