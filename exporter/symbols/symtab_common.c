#include "exporter/symbols/symtab_common.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/file_read.h"

int symtab_load_text(int fd, const char *name, size_t max, symtab_parse_fn parse, void *out,
		     char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int ret;

	if (fd >= 0)
		ret = file_read_fd(fd, name, max, &buf, &len, err, errlen);
	else
		ret = file_read_all(name, max, &buf, &len, err, errlen);
	if (ret != 0)
		return ret;
	ret = parse(buf, len, out, err, errlen);
	free(buf);
	return ret;
}

static uint64_t symtab_addr_at(const unsigned char *entries, size_t i, size_t stride)
{
	uint64_t a;

	memcpy(&a, entries + i * stride, sizeof(a));
	return a;
}

int symtab_sort_by_addr(void *base, size_t n, size_t stride)
{
	unsigned char *src = base, *dst, *scratch;
	uint64_t first, prev, differ = 0;
	bool sorted = true;
	size_t i;

	if (n < 2)
		return 0;
	first = prev = symtab_addr_at(src, 0, stride);
	for (i = 1; i < n; i++) {
		uint64_t a = symtab_addr_at(src, i, stride);

		differ |= a ^ first;
		sorted &= a >= prev;
		prev = a;
	}
	/* In order already (a kernel's kallsyms without modules is): a stable
	 * sort would leave it as it is, without its scratch's pages. */
	if (differ == 0 || sorted)
		return 0;
	scratch = malloc(n * stride);
	if (!scratch)
		return -ENOMEM;
	dst = scratch;
	/* Least significant byte first; each pass is a stable counting sort, so
	 * the order of the bytes already sorted on survives the next. */
	for (unsigned int shift = 0; shift < 64; shift += 8) {
		size_t start[256] = { 0 }, total = 0;
		unsigned char *swap;

		if (((differ >> shift) & 0xff) == 0)
			continue;
		for (i = 0; i < n; i++)
			start[(symtab_addr_at(src, i, stride) >> shift) & 0xff]++;
		for (size_t b = 0; b < 256; b++) {
			size_t count = start[b];

			start[b] = total;
			total += count;
		}
		for (i = 0; i < n; i++) {
			size_t b = (symtab_addr_at(src, i, stride) >> shift) & 0xff;

			memcpy(dst + start[b]++ * stride, src + i * stride, stride);
		}
		swap = src;
		src = dst;
		dst = swap;
	}
	if (src != base)
		memcpy(base, src, n * stride);
	free(scratch);
	return 0;
}
