/*
 * Test input for test_elf_symbols: compiled by the test at run time (PIE,
 * non-PIE, stripped) so that it can check names against nm and readelf.
 */
#include <stdio.h>

__attribute__((noinline)) int lowprof_alpha(int x)
{
	return x * 3 + 1;
}

/* Not exported: only .symtab names it, so a stripped copy must not. */
__attribute__((noinline)) static int lowprof_hidden(int x)
{
	return x ^ 0x55;
}

__attribute__((noinline)) int lowprof_beta(int x)
{
	return lowprof_alpha(x) + lowprof_hidden(x);
}

__attribute__((noinline)) long lowprof_gamma(long n)
{
	long sum = 0;

	for (long i = 0; i < n; i++)
		sum += i * i;
	return sum;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d %ld\n", lowprof_beta(argc), lowprof_gamma(argc));
	return 0;
}
