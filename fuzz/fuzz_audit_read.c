/* `lowprof audit`: the audit-log reader on arbitrary files (a log from an
 * older run, a truncated or hand-edited one). One line through the line
 * parser, the whole input through the table printer. */
#include "supervisor/audit_read.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct audit_entry e;
	const char *nl = memchr(data, '\n', size);
	size_t first = nl != NULL ? (size_t)((const uint8_t *)nl - data) : size;
	char err[256];
	FILE *in, *out;

	if (audit_read_parse_line((const char *)data, first, &e, err, sizeof(err)) == 0) {
		FUZZ_CHECK(e.n <= AUDIT_READ_MAX_FIELDS);
		(void)audit_entry_get(&e, "action");
	}
	in = fmemopen((void *)data, size, "r");
	out = fopen("/dev/null", "w");
	if (in != NULL && out != NULL)
		(void)audit_read_print(in, out, out);
	if (in != NULL)
		fclose(in);
	if (out != NULL)
		fclose(out);
	return 0;
}
