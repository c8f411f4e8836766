/*
 * Workload "jit": code in anonymous executable memory, as a JIT makes it,
 * one thread per online CPU for argv[1] seconds. Even threads run code that
 * keeps no frame pointers and holds data in RBP: a plausible frame just
 * above RSP whose "return address" is a number in no mapping (the DWARF
 * walk's step out of it must not believe it). Odd threads run code that
 * keeps a frame pointer, so that their stacks lead on into the program.
 * Prints the calls made (units of work).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "common.h"

/* In no mapping: below any program's load address, above the lowest page. */
#define JIT_GARBAGE_PC 0x100000UL

/* push %rbp; sub $32, %rsp; mov %rsi, 8(%rsp); movq $0, (%rsp);
 * mov %rsp, %rbp; 1: sub $1, %rdi; jnz 1b; add $32, %rsp; pop %rbp; ret */
static const unsigned char jit_rbp_data[] = {
	0x55, 0x48, 0x83, 0xec, 0x20, 0x48, 0x89, 0x74, 0x24, 0x08, 0x48, 0xc7, 0x04,
	0x24, 0x00, 0x00, 0x00, 0x00, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xef, 0x01, 0x75,
	0xfa, 0x48, 0x83, 0xc4, 0x20, 0x5d, 0xc3};
/* push %rbp; mov %rsp, %rbp; 1: sub $1, %rdi; jnz 1b; pop %rbp; ret */
static const unsigned char jit_frame[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xef,
					  0x01, 0x75, 0xfa, 0x5d, 0xc3};

static double deadline;
static int next_thread;

static void *worker(void *arg)
{
	unsigned long long *count = arg, n = 0;
	int odd = __atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED) & 1;
	void (*fn)(long, unsigned long);
	void *page;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	if (odd)
		memcpy(page, jit_frame, sizeof(jit_frame));
	else
		memcpy(page, jit_rbp_data, sizeof(jit_rbp_data));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		return NULL;
	fn = (void (*)(long, unsigned long))page;
	while (wl_now() < deadline) {
		fn(2000000L, JIT_GARBAGE_PC);
		n++;
	}
	*count = n;
	return NULL;
}

int main(int argc, char **argv)
{
	deadline = wl_now() + wl_seconds(argc, argv);
	printf("%llu\n", wl_run_per_cpu(worker));
	return 0;
}
