/*
 * What the symbol tables of exporter/symbols share: reading a whole text file
 * (kallsyms, /proc/PID/maps) into their parser, the sort by address, and
 * the binary search over entries sorted by it.
 */
#ifndef LOWPROF_EXPORTER_SYMTAB_COMMON_H
#define LOWPROF_EXPORTER_SYMTAB_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A parser of len bytes of text into *out (a struct kallsyms **, ...). */
typedef int (*symtab_parse_fn)(const char *buf, size_t len, void *out, char *err, size_t errlen);

/*
 * Reads the file, at most max bytes, from fd when fd >= 0 (name only for
 * messages; fd not closed) or else from the path name, and hands the text to
 * parse. Returns what parse returns, or the read's -errno with err set.
 */
int symtab_load_text(int fd, const char *name, size_t max, symtab_parse_fn parse, void *out,
		     char *err, size_t errlen);

/*
 * Sorts n entries of stride bytes, each starting with its uint64_t address,
 * by that address, stably (entries at one address keep their order, so a
 * parse's line order can rank aliases). A radix sort over the address bytes
 * that differ: a few linear passes where qsort's comparisons were most of the
 * time to read a libc's or the kernel's symbols; entries already in order
 * cost one pass. Returns 0, or -ENOMEM with the entries untouched.
 */
int symtab_sort_by_addr(void *base, size_t n, size_t stride);

/*
 * In n entries of stride bytes, each starting with its uint64_t address and
 * sorted by it: how many have an address <= addr. The entry covering addr, if
 * any, is the one before that count (none when it is 0).
 */
static inline size_t symtab_upto(const void *base, size_t n, size_t stride, uint64_t addr)
{
	const unsigned char *b = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t a;

		memcpy(&a, b + mid * stride, sizeof(a));
		if (a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
