/*
 * Code in anonymous executable memory (as a JIT makes it): a countdown loop
 * copied into an mmap'd page, called from main for argv[1] ms. Its frames
 * have no file: the walker records raw addresses and ends the stack with a
 * marker where frame pointers do not lead on.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double ae_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	/* 1: sub $1, %rdi; jnz 1b; ret */
	static const unsigned char code[] = {0x48, 0x83, 0xef, 0x01, 0x75, 0xfa, 0xc3};
	double until = ae_now() + (argc > 1 ? atof(argv[1]) : 3000.0) / 1000.0;
	void (*fn)(long);
	void *page;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	fn = (void (*)(long))page;
	while (ae_now() < until)
		fn(20000000L);
	return 0;
}
