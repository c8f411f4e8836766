/* The configuration file's reader (settings/config_file.c) on any bytes,
 * applied to a table with a row of every kind: whatever the file holds, the
 * reader either takes each line or stops with one line naming FILE:LINE. */
#include "settings/config_file.h"

#include "fuzz/fuzz_check.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const words[] = {"auto", "dwarf", "fp", NULL};
	unsigned u = 0, e = 0;
	int i = 0, list[4];
	size_t z = 0, nlist = 0;
	double d = 0;
	bool flag = false, seen = false;
	const char *s = NULL;
	const struct option_spec specs[] = {
		{.name = "flag", .kind = OPTION_FLAG, .dest = &flag},
		{.name = "uint", .kind = OPTION_UINT, .dest = &u, .min = 1, .max = 100},
		{.name = "pow", .kind = OPTION_UINT, .dest = &u, .min = 4, .max = 1024,
		 .flags = OPTION_POW2},
		{.name = "int", .kind = OPTION_INT, .dest = &i, .min = 1, .max = 0x7fffffff},
		{.name = "size", .kind = OPTION_SIZE, .dest = &z, .min = 0, .max = 1e12},
		{.name = "double", .kind = OPTION_DOUBLE, .dest = &d, .min = 0, .max = 100,
		 .flags = OPTION_ABOVE_MIN},
		{.name = "string", .kind = OPTION_STRING, .dest = &s, .seen = &seen},
		{.name = "enum", .kind = OPTION_ENUM, .dest = &e, .names = words},
		{.name = "list", .kind = OPTION_INT, .dest = list, .min = 1, .max = 9, .count = &nlist,
		 .max_count = 4},
		{.name = "secret", .kind = OPTION_STRING, .dest = &s, .flags = OPTION_CLI_ONLY},
		{.name = NULL},
	};
	char err[512], *text = malloc(size + 1);

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	if (config_file_apply(text, size, "fuzz.conf", specs, err, sizeof(err)) != 0) {
		FUZZ_CHECK(strncmp(err, "fuzz.conf:", 10) == 0);
		FUZZ_CHECK(strchr(err, '\n') == NULL);
	}
	FUZZ_CHECK(nlist <= 4);
	FUZZ_CHECK(e < 3);
	if (s != NULL)
		FUZZ_CHECK(s >= text && s <= text + size && strlen(s) <= size);
	free(text);
	return 0;
}
