/*
 * The dynamic loader's code, run two ways, for the test that no process can
 * choose the table another process's dynamic loader or libraries are
 * unwound with (docs/SECURITY.md, "The dynamic loader is named from the
 * process's own memory"):
 *
 *   interp_spin lookup SECONDS
 *       a victim: dlsym() of a name no object defines, over and over, so
 *       that most samples are in the dynamic loader's symbol lookup, reached
 *       through AT_BASE (the walker's unwind_interp);
 *   interp_spin map SECONDS FILE [SYMBOL]
 *       an attacker: FILE, a copy of the dynamic loader (same ELF header,
 *       different content), mapped executable a second time, away from
 *       AT_BASE, and run there (a counting loop written over the copy's
 *       _dl_debug_state, in the process's private pages of the file's
 *       mapping: a function that only returns is too short to be sampled),
 *       so that the walker finds the copy by its VMA and the loader builds
 *       its table. With SYMBOL, FILE is a copy of the library that defines
 *       SYMBOL, and the loop runs at the copy's SYMBOL instead.
 *
 * Built without frame pointers, like the programs it stands for.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double spin_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int spin_lookup(double until)
{
	volatile void *p = NULL;

	while (spin_now() < until)
		for (int i = 0; i < 200; i++)
			p = dlsym(RTLD_DEFAULT, "lowprof_interp_spin_no_such_symbol");
	return p == NULL ? 0 : 1;
}

/* The address, in a copy of the dynamic loader mapped whole at base, of what
 * is at ELF address vaddr: through the executable segment that holds it. */
static void *spin_copy_address(const uint8_t *base, size_t size, uint64_t vaddr)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_phoff > size || eh->e_phnum > (size - eh->e_phoff) / sizeof(Elf64_Phdr))
		return NULL;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr < ph->p_filesz && ph->p_offset + ph->p_filesz <= size)
			return (void *)(base + ph->p_offset + (vaddr - ph->p_vaddr));
	}
	return NULL;
}

/* The ELF address of SYMBOL in the object that defines it, or of
 * _dl_debug_state (a function of the dynamic loader that only returns,
 * found through the real one: r_brk names it, AT_BASE is its base). */
static int spin_vaddr(const char *symbol, uint64_t *vaddr)
{
	Dl_info info;
	void *sym;

	if (symbol == NULL) {
		*vaddr = (uint64_t)_r_debug.r_brk - getauxval(AT_BASE);
		return 0;
	}
	sym = dlsym(RTLD_DEFAULT, symbol);
	if (sym == NULL || dladdr(sym, &info) == 0 || info.dli_fbase == NULL) {
		fprintf(stderr, "interp_spin: no symbol %s\n", symbol);
		return -1;
	}
	*vaddr = (uint64_t)sym - (uint64_t)info.dli_fbase;
	return 0;
}

static int spin_map(double until, const char *path, const char *symbol)
{
	/* 1: dec %rdi; jnz 1b; ret */
	static const uint8_t loop[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};
	uint64_t vaddr;
	void (*fn)(long);
	struct stat st;
	uint8_t *base;
	int fd;

	if (spin_vaddr(symbol, &vaddr) != 0)
		return 2;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(path);
		return 2;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE, fd,
		    0);
	close(fd);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	fn = (void (*)(long))spin_copy_address(base, (size_t)st.st_size, vaddr);
	if (fn == NULL) {
		fprintf(stderr, "%s: no executable segment holds 0x%llx\n", path,
			(unsigned long long)vaddr);
		return 2;
	}
	memcpy((void *)fn, loop, sizeof(loop));
	while (spin_now() < until)
		fn(1000000);
	return 0;
}

int main(int argc, char **argv)
{
	double until;

	if (argc < 3 || (strcmp(argv[1], "map") == 0 && argc < 4)) {
		fprintf(stderr, "usage: interp_spin lookup SECONDS | map SECONDS FILE [SYMBOL]\n");
		return 2;
	}
	until = spin_now() + atof(argv[2]);
	if (strcmp(argv[1], "lookup") == 0)
		return spin_lookup(until);
	if (strcmp(argv[1], "map") == 0)
		return spin_map(until, argv[3], argc > 4 ? argv[4] : NULL);
	fprintf(stderr, "interp_spin: unknown mode %s\n", argv[1]);
	return 2;
}
