/*
 * A process that writes its own dynamic loader's list, for the test that
 * what a process writes there names only its own frames and never holds the
 * walker up (docs/SECURITY.md, "The dynamic loader and its libraries are
 * named from the process's own memory"):
 *
 *   dl_forge SECONDS
 *
 * r_debug.r_map (the list the walker follows, docs/UNWINDING.md source 7;
 * the r_debug the executable's DT_DEBUG names, as the walker finds it: the
 * executable's own _r_debug may be a copy made by a copy relocation) is made
 * to head a forged list: one entry claims anonymous memory as libc
 * (a copy of libc's first page at its base: its ELF header and build id;
 * a counting loop at libc's labs offset), and the next one points to itself, a list without an end that
 * holds no other object. The process then runs the loop. Its samples in the
 * loop are named labs (the process's own choice, as a return address it
 * writes on its own stack would be); its libc frames (__libc_start_call_main
 * under main) are on no entry of the list, so every search for them follows
 * the loop to the walker's bound. The dynamic loader's own bookkeeping
 * (GL(dl_ns)) is left alone: the process runs and exits as usual.
 *
 * Built without frame pointers, like the programs it stands for.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define REGION_BYTES (8UL << 20) /* more than libc's text: the claim stays inside */

extern ElfW(Dyn) _DYNAMIC[];

/* The dynamic loader's r_debug, as a debugger (and the walker) finds it. */
static struct r_debug *forge_r_debug(void)
{
	for (ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_DEBUG)
			return (struct r_debug *)d->d_un.d_ptr;
	return NULL;
}

static double forge_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	/* 1: dec %rdi; jnz 1b; ret */
	static const uint8_t loop[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};
	static struct link_map fake, endless;
	struct r_debug *r = forge_r_debug();
	void (*spin)(long);
	Dl_info info;
	uint64_t vaddr;
	uint8_t *region;
	double until;

	if (argc != 2) {
		fprintf(stderr, "usage: dl_forge SECONDS\n");
		return 2;
	}
	if (r == NULL) {
		fprintf(stderr, "dl_forge: no DT_DEBUG\n");
		return 2;
	}
	until = forge_now() + atof(argv[1]);
	if (dladdr((void *)labs, &info) == 0 || info.dli_fbase == NULL) {
		fprintf(stderr, "dl_forge: labs is in no object\n");
		return 2;
	}
	vaddr = (uint64_t)(uintptr_t)labs - (uint64_t)(uintptr_t)info.dli_fbase;
	if (vaddr + sizeof(loop) > REGION_BYTES) {
		fprintf(stderr, "dl_forge: labs at 0x%llx, past the region\n",
			(unsigned long long)vaddr);
		return 2;
	}
	region = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	/* libc's first page: its ELF header and its build id note, what the
	 * walker checks before it takes libc's table. */
	memcpy(region, info.dli_fbase, 4096);
	memcpy(region + vaddr, loop, sizeof(loop));
	if (mprotect(region, REGION_BYTES, PROT_READ | PROT_EXEC) != 0) {
		perror("mprotect");
		return 2;
	}
	spin = (void (*)(long))(void *)(region + vaddr);

	fake.l_addr = (ElfW(Addr))(uintptr_t)region;
	fake.l_name = (char *)"forged";
	fake.l_ld = (ElfW(Dyn) *)(void *)(region + REGION_BYTES);
	fake.l_next = &endless;
	endless.l_addr = 1; /* [1, 2): holds no pc */
	endless.l_name = (char *)"endless";
	endless.l_ld = (ElfW(Dyn) *)(uintptr_t)2;
	endless.l_next = &endless;
	r->r_map = &fake;

	while (forge_now() < until)
		spin(1000000);
	return 0;
}
