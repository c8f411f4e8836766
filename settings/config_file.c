/* config_file: `key = value` lines applied through the option table (see the header). */
#include "settings/config_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errbuf.h"

static bool config_file_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* [s, e) without the spaces around it, NUL-terminated in place. */
static char *config_file_trim(char *s, char *e)
{
	while (s < e && config_file_space(*s))
		s++;
	while (e > s && config_file_space(e[-1]))
		e--;
	*e = '\0';
	return s;
}

static bool config_file_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* One line, NUL-terminated (no '\n'). */
static int config_file_line(char *line, const char *label, size_t lineno,
			    const struct option_spec *specs, char *err, size_t errlen)
{
	char msg[384], *eq, *key, *value, *k;
	size_t vlen;
	int rc;

	line = config_file_trim(line, line + strlen(line));
	if (line[0] == '\0' || line[0] == '#')
		return 0;
	eq = strchr(line, '=');
	if (eq == NULL)
		return errbuf_fail(-EINVAL, err, errlen, "%s:%zu: expected KEY = VALUE", label, lineno);
	key = config_file_trim(line, eq);
	value = config_file_trim(eq + 1, eq + 1 + strlen(eq + 1));
	if (key[0] == '\0')
		return errbuf_fail(-EINVAL, err, errlen, "%s:%zu: no key before '='", label, lineno);
	for (k = key; *k != '\0'; k++) {
		if (!config_file_key_char(*k))
			return errbuf_fail(-EINVAL, err, errlen,
					   "%s:%zu: invalid key '%.64s': lower-case option names only",
					   label, lineno, key);
	}
	vlen = strlen(value);
	if (value[0] == '"') {
		if (vlen < 2 || value[vlen - 1] != '"' || memchr(value + 1, '"', vlen - 2) != NULL)
			return errbuf_fail(-EINVAL, err, errlen, "%s:%zu: %s: unbalanced quotes",
					   label, lineno, key);
		value[vlen - 1] = '\0';
		value++;
	}
	msg[0] = '\0';
	rc = option_table_set(specs, key, value, msg, sizeof(msg));
	if (rc != 0)
		return errbuf_fail(rc, err, errlen, "%s:%zu: %s: %s", label, lineno, key, msg);
	return 0;
}

int config_file_apply(char *text, size_t len, const char *label, const struct option_spec *specs,
		      char *err, size_t errlen)
{
	char *line = text, *end = text + len, *nl;
	size_t lineno = 1;
	int rc;

	if (memchr(text, '\0', len) != NULL)
		return errbuf_fail(-EINVAL, err, errlen, "%s: a NUL byte: not a text file", label);
	while (line < end) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (nl == NULL)
			nl = end; /* the last line without its newline */
		/* nl is a '\n' or text[len], the NUL after the last line. */
		*nl = '\0';
		rc = config_file_line(line, label, lineno, specs, err, errlen);
		if (rc != 0)
			return rc;
		line = nl + 1;
		lineno++;
	}
	return 0;
}

int config_file_read(const char *path, char **textp, size_t *lenp, char *err, size_t errlen)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, rc;

	*textp = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errbuf_fail(-errno, err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = errbuf_fail(-EINVAL, err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((unsigned long long)st.st_size > CONFIG_FILE_MAX_BYTES) {
		rc = errbuf_fail(-EFBIG, err, errlen, "%s: larger than %u bytes", path,
				 CONFIG_FILE_MAX_BYTES);
		goto out;
	}
	text = malloc(CONFIG_FILE_MAX_BYTES + 1);
	if (text == NULL) {
		rc = errbuf_fail(-ENOMEM, err, errlen, "%s: out of memory", path);
		goto out;
	}
	/* Up to the cap, whatever st_size said: the file may grow while we read. */
	while (len < CONFIG_FILE_MAX_BYTES + 1) {
		n = read(fd, text + len, CONFIG_FILE_MAX_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = errbuf_fail(-errno, err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > CONFIG_FILE_MAX_BYTES) {
		rc = errbuf_fail(-EFBIG, err, errlen, "%s: larger than %u bytes", path,
				 CONFIG_FILE_MAX_BYTES);
		goto out;
	}
	text[len] = '\0';
	*textp = realloc(text, len + 1); /* kept as long as the settings: no spare MiB */
	if (*textp == NULL)
		*textp = text;
	*lenp = len;
	text = NULL;
	rc = 0;
out:
	free(text);
	close(fd);
	return rc;
}
