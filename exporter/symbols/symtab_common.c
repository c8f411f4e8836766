#include "exporter/symbols/symtab_common.h"

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
