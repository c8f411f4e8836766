/*
 * Code in anonymous executable memory (as a JIT makes it): a countdown loop
 * copied into an mmap'd page, called from main for argv[1] ms. Its frames
 * have no file: the walker records raw addresses and ends the stack with a
 * marker where frame pointers do not lead on.
 *
 * With "garbage-rbp" as argv[2] the loop is that of a JIT keeping no frame
 * pointers that uses RBP for its own data: RBP points at a plausible frame
 * on the stack (just above RSP) whose "return address" is a number that is
 * no code (ANON_GARBAGE_PC, in no mapping: below any program's load address
 * and above the kernel's lowest mappable page).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define ANON_GARBAGE_PC 0x100000UL

static double ae_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	/* 1: sub $1, %rdi; jnz 1b; ret */
	static const unsigned char countdown[] = {0x48, 0x83, 0xef, 0x01, 0x75, 0xfa, 0xc3};
	/* push %rbp; sub $32, %rsp; mov %rsi, 8(%rsp); movq $0, (%rsp);
	 * mov %rsp, %rbp; 1: sub $1, %rdi; jnz 1b; add $32, %rsp; pop %rbp; ret */
	static const unsigned char garbage_rbp[] = {
		0x55, 0x48, 0x83, 0xec, 0x20, 0x48, 0x89, 0x74, 0x24, 0x08, 0x48, 0xc7, 0x04,
		0x24, 0x00, 0x00, 0x00, 0x00, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xef, 0x01, 0x75,
		0xfa, 0x48, 0x83, 0xc4, 0x20, 0x5d, 0xc3};
	int garbage = argc > 2 && strcmp(argv[2], "garbage-rbp") == 0;
	double until = ae_now() + (argc > 1 ? atof(argv[1]) : 3000.0) / 1000.0;
	void (*fn)(long, unsigned long);
	void *page;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	if (garbage)
		memcpy(page, garbage_rbp, sizeof(garbage_rbp));
	else
		memcpy(page, countdown, sizeof(countdown));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	fn = (void (*)(long, unsigned long))page;
	while (ae_now() < until)
		fn(20000000L, ANON_GARBAGE_PC);
	return 0;
}
