/*
 * The dynamic loader's code, run two ways, for the test that no process can
 * choose the table another process's dynamic loader is unwound with
 * (docs/SECURITY.md, "The dynamic loader is named from the process's own
 * memory"):
 *
 *   interp_spin lookup SECONDS
 *       a victim: dlsym() of a name no object defines, over and over, so
 *       that most samples are in the dynamic loader's symbol lookup, reached
 *       through AT_BASE (the walker's unwind_interp);
 *   interp_spin map SECONDS FILE
 *       an attacker: FILE, a copy of the dynamic loader (same ELF header,
 *       different content), mapped executable a second time, away from
 *       AT_BASE, and its _dl_debug_state called over and over, so that the
 *       walker finds the copy by its VMA and the loader builds its table.
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

static int spin_map(double until, const char *path)
{
	/* _dl_debug_state: a function of the dynamic loader that only returns,
	 * found through the real one (r_brk names it, AT_BASE is its base). */
	uint64_t vaddr = (uint64_t)_r_debug.r_brk - getauxval(AT_BASE);
	void (*fn)(void);
	struct stat st;
	uint8_t *base;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(path);
		return 2;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	fn = (void (*)(void))spin_copy_address(base, (size_t)st.st_size, vaddr);
	if (fn == NULL) {
		fprintf(stderr, "%s: no executable segment holds 0x%llx\n", path,
			(unsigned long long)vaddr);
		return 2;
	}
	while (spin_now() < until)
		for (int i = 0; i < 10000; i++)
			fn();
	return 0;
}

int main(int argc, char **argv)
{
	double until;

	if (argc < 3 || (strcmp(argv[1], "map") == 0 && argc < 4)) {
		fprintf(stderr, "usage: interp_spin lookup SECONDS | map SECONDS FILE\n");
		return 2;
	}
	until = spin_now() + atof(argv[2]);
	if (strcmp(argv[1], "lookup") == 0)
		return spin_lookup(until);
	if (strcmp(argv[1], "map") == 0)
		return spin_map(until, argv[3]);
	fprintf(stderr, "interp_spin: unknown mode %s\n", argv[1]);
	return 2;
}
