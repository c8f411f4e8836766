/* A serialised unwind table as the unprivileged unwinder returns it: the
 * loader deserialises it and validates it before any row reaches a map. */
#include "unwind/unwind_table.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwind_table t;
	char err[256];

	if (unwind_table_deserialize(data, size, &t, err, sizeof(err)) != 0)
		return 0;
	(void)unwind_table_validate(&t, err, sizeof(err));
	if (t.nrows > 0)
		(void)unwind_table_lookup(&t, t.rows[t.nrows / 2].pc);
	unwind_table_free(&t);
	return 0;
}
