/* The exporter's /proc/kallsyms parser, on arbitrary text (the loader hands
 * over an fd, but a compromised loader or a strange kernel could write
 * anything). A table it accepts is looked up at a few addresses: the core
 * base, near it, and addresses taken from the input; whatever a lookup names
 * must lie at or below the address, within its module and within the tail
 * bound a kallsyms symbol without a successor gets. */
#include "exporter/symbols/kallsyms.h"

#include "fuzz/fuzz_check.h"
#include <errno.h>
#include <stdint.h>
#include <string.h>

/* KALLSYMS_TAIL_MAX in kallsyms.c: no symbol covers more than this. */
#define FUZZ_KALLSYMS_TAIL_MAX (64 * 1024)

static void fuzz_lookup(const struct kallsyms *k, uint64_t addr)
{
	struct kallsyms_result r;

	if (kallsyms_lookup(k, addr, &r) != 0)
		return;
	FUZZ_CHECK(!kallsyms_restricted(k));
	FUZZ_CHECK(r.name != NULL);
	FUZZ_CHECK(r.offset < FUZZ_KALLSYMS_TAIL_MAX);
	FUZZ_CHECK(r.module_base <= addr - r.offset);
	FUZZ_CHECK(r.module == NULL || strlen(r.module) < 1u << 20);
	(void)strlen(r.name);
}

/* The leading hex address of each of the first lines, and its neighbours. */
static void fuzz_lookup_lines(const struct kallsyms *k, const uint8_t *p, const uint8_t *end)
{
	for (int line = 0; line < 16 && p < end; line++) {
		uint64_t addr = 0;
		const uint8_t *nl;

		for (int n = 0; n < 16 && p < end; n++, p++) {
			int v = *p >= '0' && *p <= '9' ? *p - '0' :
				*p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;

			if (v < 0)
				break;
			addr = addr << 4 | (uint64_t)v;
		}
		fuzz_lookup(k, addr);
		fuzz_lookup(k, addr + 1);
		fuzz_lookup(k, addr - 1);
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			break;
		p = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms *k = NULL;
	char err[256];
	uint64_t a;

	if (kallsyms_parse((const char *)data, size, &k, err, sizeof(err)) != 0) {
		FUZZ_CHECK(k == NULL);
		return 0;
	}
	FUZZ_CHECK(k != NULL);
	a = kallsyms_core_base(k);
	fuzz_lookup(k, a);
	fuzz_lookup(k, a + 0x10);
	fuzz_lookup(k, 0);
	fuzz_lookup(k, UINT64_MAX);
	if (size >= sizeof(a)) {
		memcpy(&a, data, sizeof(a));
		fuzz_lookup(k, a);
		memcpy(&a, data + size - sizeof(a), sizeof(a));
		fuzz_lookup(k, a);
	}
	fuzz_lookup_lines(k, data, data + size);
	if (kallsyms_restricted(k))
		FUZZ_CHECK(kallsyms_lookup(k, kallsyms_core_base(k), &(struct kallsyms_result){ 0 }) ==
			   -ENOENT);
	kallsyms_free(k);
	return 0;
}
