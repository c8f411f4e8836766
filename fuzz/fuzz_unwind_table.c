/* The .eh_frame / .debug_frame parser on whole ELF images, as any user can
 * map a crafted file and get it parsed. A table the builder returns must pass
 * the loader's validator, and survive serialise -> deserialise unchanged. */
#include "unwind/unwind_table.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwind_table t, back;
	char err[256];
	uint8_t *buf = NULL;
	size_t len = 0;

	if (unwind_table_build_mem(data, size, &t, err, sizeof(err)) != 0)
		return 0;
	FUZZ_CHECK(unwind_table_validate(&t, err, sizeof(err)) == 0);
	if (unwind_table_serialize(&t, &buf, &len, err, sizeof(err)) == 0) {
		FUZZ_CHECK(unwind_table_deserialize(buf, len, &back, err, sizeof(err)) == 0);
		FUZZ_CHECK(back.nrows == t.nrows);
		FUZZ_CHECK(t.nrows == 0 || memcmp(back.rows, t.rows, t.nrows * sizeof(*t.rows)) == 0);
		unwind_table_free(&back);
		free(buf);
	}
	unwind_table_free(&t);
	return 0;
}
