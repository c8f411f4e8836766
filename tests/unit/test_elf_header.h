/*
 * The ELF header of the crafted files the unwinder tests build: a shared
 * object for x86-64 (what the unwinder's pre-check accepts), its section
 * header table at shoff. The callers add a program header where they need
 * one (e_phoff, e_phentsize, e_phnum).
 */
#ifndef LOWPROF_TESTS_UNIT_TEST_ELF_HEADER_H
#define LOWPROF_TESTS_UNIT_TEST_ELF_HEADER_H

#include <elf.h>
#include <stdint.h>
#include <string.h>

static inline void test_elf_header(Elf64_Ehdr *eh, uint64_t shoff, uint16_t shnum,
				   uint16_t shstrndx)
{
	memset(eh, 0, sizeof(*eh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = shnum;
	eh->e_shstrndx = shstrndx;
}

#endif
