/*
 * The unwinder's program-header reader (unwinder/exec_segments.c) on ELF
 * files made here byte by byte: the executable PT_LOAD segments, and the
 * place of the GNU build id, which the walker compares with a process's
 * memory before it takes a file's table by content (bpf/lowprof.h). A note
 * that is not a build id, a build id too short, or one no PT_LOAD maps, is
 * no build id; a note whose sizes run past its segment is not read past it;
 * a bad header is refused with a reason.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "unwinder/exec_segments.h"

#define FILE_BYTES 8192
#define NOTE_OFF 0x300
#define TEXT_OFF 0x1000

struct elf_file {
	uint8_t b[FILE_BYTES];
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
};

/* A PIE's layout: PT_LOAD r-- [0, 0x1000) holding a PT_NOTE at NOTE_OFF,
 * PT_LOAD r-x [0x1000, 0x2000) at vaddr 0x1000. */
static void elf_init(struct elf_file *f)
{
	memset(f->b, 0, sizeof(f->b));
	f->eh = (Elf64_Ehdr *)f->b;
	memcpy(f->eh->e_ident, ELFMAG, SELFMAG);
	f->eh->e_ident[EI_CLASS] = ELFCLASS64;
	f->eh->e_ident[EI_DATA] = ELFDATA2LSB;
	f->eh->e_type = ET_DYN;
	f->eh->e_machine = EM_X86_64;
	f->eh->e_phoff = sizeof(Elf64_Ehdr);
	f->eh->e_phentsize = sizeof(Elf64_Phdr);
	f->eh->e_phnum = 3;
	f->ph = (Elf64_Phdr *)(f->b + sizeof(Elf64_Ehdr));
	f->ph[0] = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0, .p_vaddr = 0,
				.p_filesz = 0x1000, .p_memsz = 0x1000};
	f->ph[1] = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = TEXT_OFF,
				.p_vaddr = TEXT_OFF, .p_filesz = 0x1000, .p_memsz = 0x1000};
	f->ph[2] = (Elf64_Phdr){.p_type = PT_NOTE, .p_flags = PF_R, .p_offset = NOTE_OFF,
				.p_vaddr = NOTE_OFF, .p_filesz = 0, .p_memsz = 0};
}

/* A note at *at in the note segment, which grows to hold it. */
static void elf_note(struct elf_file *f, uint32_t type, const char *name, uint32_t namesz,
		     const uint8_t *desc, uint32_t descsz, size_t *at)
{
	Elf64_Nhdr nh = {.n_namesz = namesz, .n_descsz = descsz, .n_type = type};
	uint8_t *p = f->b + NOTE_OFF + *at;

	memcpy(p, &nh, sizeof(nh));
	memcpy(p + sizeof(nh), name, namesz);
	memcpy(p + sizeof(nh) + ((namesz + 3) & ~3u), desc, descsz);
	*at += sizeof(nh) + ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
	f->ph[2].p_filesz = f->ph[2].p_memsz = *at;
}

static int elf_parse(const struct elf_file *f, struct unwinder_segment *seg, uint32_t *nseg,
		     struct unwinder_build_id *bid, char *err, size_t errlen)
{
	int fd = memfd_create("elf", MFD_CLOEXEC), rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, f->b, sizeof(f->b)), (ssize_t)sizeof(f->b));
	rc = unwinder_exec_segments(fd, seg, nseg, bid, err, errlen);
	close(fd);
	return rc;
}

static const uint8_t BUILD_ID[20] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa,
				     0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01, 0x02, 0x03, 0x04, 0x05};

/* A linker's order: .note.gnu.property first, then the build id. */
static void test_build_id_found(void **state)
{
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id bid;
	uint8_t prop[16] = {0};
	struct elf_file f;
	uint32_t nseg;
	char err[128];
	size_t at = 0, desc;

	(void)state;
	elf_init(&f);
	elf_note(&f, 5 /* NT_GNU_PROPERTY_TYPE_0 */, "GNU", 4, prop, sizeof(prop), &at);
	desc = at + sizeof(Elf64_Nhdr) + 4;
	elf_note(&f, NT_GNU_BUILD_ID, "GNU", 4, BUILD_ID, sizeof(BUILD_ID), &at);
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), 0);
	assert_int_equal(nseg, 1);
	assert_int_equal(seg[0].offset, TEXT_OFF);
	assert_int_equal(bid.offset, NOTE_OFF + desc);
	assert_int_equal(bid.vaddr, NOTE_OFF + desc);
	assert_memory_equal(bid.bytes, BUILD_ID, sizeof(bid.bytes));

	/* The note's segment loaded elsewhere than its offset: the address
	 * follows the PT_LOAD that maps it. */
	f.ph[0].p_vaddr = 0x400000;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), 0);
	assert_int_equal(bid.offset, NOTE_OFF + desc);
	assert_int_equal(bid.vaddr, 0x400000 + NOTE_OFF + desc);
}

/* Notes that are no build id: the segments still come back, bid all zero. */
static void test_no_build_id(void **state)
{
	static const struct unwinder_build_id zero;
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id bid;
	struct elf_file f;
	uint32_t nseg;
	char err[128];
	size_t at;

	(void)state;
	/* No note at all. */
	elf_init(&f);
	f.eh->e_phnum = 2;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), 0);
	assert_memory_equal(&bid, &zero, sizeof(bid));
	/* Another owner's note of the same type. */
	elf_init(&f);
	at = 0;
	elf_note(&f, NT_GNU_BUILD_ID, "GNX", 4, BUILD_ID, sizeof(BUILD_ID), &at);
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), 0);
	assert_memory_equal(&bid, &zero, sizeof(bid));
	/* A build id shorter than the bytes compared. */
	elf_init(&f);
	at = 0;
	elf_note(&f, NT_GNU_BUILD_ID, "GNU", 4, BUILD_ID, 4, &at);
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), 0);
	assert_memory_equal(&bid, &zero, sizeof(bid));
	/* A build id that no PT_LOAD maps: no address to compare at. */
	elf_init(&f);
	at = 0;
	elf_note(&f, NT_GNU_BUILD_ID, "GNU", 4, BUILD_ID, sizeof(BUILD_ID), &at);
	f.ph[0].p_filesz = NOTE_OFF;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), 0);
	assert_memory_equal(&bid, &zero, sizeof(bid));
	/* A descriptor size past the segment's end (and past the file's):
	 * not read, not believed. */
	elf_init(&f);
	at = 0;
	elf_note(&f, NT_GNU_BUILD_ID, "GNU", 4, BUILD_ID, sizeof(BUILD_ID), &at);
	((Elf64_Nhdr *)(f.b + NOTE_OFF))->n_descsz = 0xfffffff0u;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), 0);
	assert_memory_equal(&bid, &zero, sizeof(bid));
	/* A name size that wraps the note's arithmetic on 32 bits. */
	((Elf64_Nhdr *)(f.b + NOTE_OFF))->n_descsz = sizeof(BUILD_ID);
	((Elf64_Nhdr *)(f.b + NOTE_OFF))->n_namesz = 0xfffffffeu;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), 0);
	assert_memory_equal(&bid, &zero, sizeof(bid));
	/* A note segment past the file's end: not read. */
	elf_init(&f);
	at = 0;
	elf_note(&f, NT_GNU_BUILD_ID, "GNU", 4, BUILD_ID, sizeof(BUILD_ID), &at);
	f.ph[2].p_offset = FILE_BYTES - 8;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), 0);
	assert_memory_equal(&bid, &zero, sizeof(bid));
}

/* Headers that are refused, each with its reason. */
static void test_bad_headers(void **state)
{
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id bid;
	struct elf_file f;
	uint32_t nseg;
	char err[128];

	(void)state;
	elf_init(&f);
	f.eh->e_ident[EI_CLASS] = ELFCLASS32;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "64-bit"));
	elf_init(&f);
	f.eh->e_phnum = 0;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "program header table"));
	elf_init(&f);
	f.eh->e_phoff = FILE_BYTES - 16;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cannot read"));
	elf_init(&f);
	f.eh->e_phoff = UINT64_MAX - 8;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), -EINVAL);
	elf_init(&f);
	f.ph[1].p_flags = PF_R;
	assert_int_equal(elf_parse(&f, seg, &nseg, &bid, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no executable"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_id_found),
		cmocka_unit_test(test_no_build_id),
		cmocka_unit_test(test_bad_headers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
