#include "supervisor/audit_read.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct audit_parser {
	const char *p;
	const char *end;
	char *err;
	size_t errlen;
	bool failed;
};

static void ap_fail(struct audit_parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void ap_fail(struct audit_parser *ps, const char *fmt, ...)
{
	va_list ap;

	if (ps->failed)
		return;
	ps->failed = true;
	va_start(ap, fmt);
	vsnprintf(ps->err, ps->errlen, fmt, ap);
	va_end(ap);
}

static void ap_skip_ws(struct audit_parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r'))
		ps->p++;
}

/* Append c to out (bounded); false when it does not fit. */
static bool ap_put(char *out, size_t outlen, size_t *o, char c)
{
	if (*o + 1 >= outlen)
		return false;
	out[(*o)++] = c;
	out[*o] = '\0';
	return true;
}

static unsigned ap_hex4(struct audit_parser *ps)
{
	unsigned v = 0;
	int i;

	if (ps->end - ps->p < 4) {
		ap_fail(ps, "short \\u escape");
		return 0;
	}
	for (i = 0; i < 4; i++) {
		char c = ps->p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			ap_fail(ps, "bad \\u escape");
	}
	ps->p += 4;
	return v;
}

/* A string at ps->p (the opening quote); decoded into out. */
static void ap_string(struct audit_parser *ps, char *out, size_t outlen)
{
	size_t o = 0;
	unsigned u;
	char c;

	out[0] = '\0';
	ps->p++; /* the quote */
	while (!ps->failed) {
		if (ps->p >= ps->end) {
			ap_fail(ps, "unterminated string");
			return;
		}
		c = *ps->p++;
		if (c == '"')
			return;
		if ((unsigned char)c < 0x20) {
			ap_fail(ps, "control character in a string");
			return;
		}
		if (c == '\\') {
			if (ps->p >= ps->end) {
				ap_fail(ps, "unterminated escape");
				return;
			}
			c = *ps->p++;
			switch (c) {
			case '"': case '\\': case '/':
				break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u':
				u = ap_hex4(ps);
				/* Shown, not interpreted: non-ASCII and controls as '?'. */
				c = u >= 0x20 && u < 0x7f ? (char)u : '?';
				break;
			default:
				ap_fail(ps, "bad escape '\\%c'", c);
				return;
			}
		}
		if (!ap_put(out, outlen, &o, c)) {
			ap_fail(ps, "string longer than %zu bytes", outlen - 1);
			return;
		}
	}
}

static void ap_number(struct audit_parser *ps)
{
	const char *start = ps->p;

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p >= ps->end || !isdigit((unsigned char)*ps->p)) {
		ap_fail(ps, "bad number");
		return;
	}
	if (*ps->p == '0')
		ps->p++;
	else
		while (ps->p < ps->end && isdigit((unsigned char)*ps->p))
			ps->p++;
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if (ps->p >= ps->end || !isdigit((unsigned char)*ps->p)) {
			ap_fail(ps, "bad fraction");
			return;
		}
		while (ps->p < ps->end && isdigit((unsigned char)*ps->p))
			ps->p++;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (ps->p >= ps->end || !isdigit((unsigned char)*ps->p)) {
			ap_fail(ps, "bad exponent");
			return;
		}
		while (ps->p < ps->end && isdigit((unsigned char)*ps->p))
			ps->p++;
	}
	if (ps->p - start > 40)
		ap_fail(ps, "number too long");
}

static void ap_value(struct audit_parser *ps, int depth);

/* An object or array; only checked, the caller keeps its text. */
static void ap_container(struct audit_parser *ps, int depth)
{
	char close = *ps->p == '{' ? '}' : ']';
	bool object = close == '}';
	char key[AUDIT_READ_KEY_MAX];
	bool first = true;

	if (depth > AUDIT_READ_MAX_DEPTH) {
		ap_fail(ps, "nested deeper than %d", AUDIT_READ_MAX_DEPTH);
		return;
	}
	ps->p++;
	for (;;) {
		ap_skip_ws(ps);
		if (ps->failed)
			return;
		if (ps->p < ps->end && *ps->p == close && first) {
			ps->p++;
			return;
		}
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"') {
				ap_fail(ps, "expected a key");
				return;
			}
			ap_string(ps, key, sizeof(key));
			ap_skip_ws(ps);
			if (ps->failed || ps->p >= ps->end || *ps->p != ':') {
				ap_fail(ps, "expected ':'");
				return;
			}
			ps->p++;
		}
		ap_value(ps, depth + 1);
		ap_skip_ws(ps);
		if (ps->failed)
			return;
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			first = false;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return;
		}
		ap_fail(ps, "expected ',' or '%c'", close);
		return;
	}
}

static bool ap_literal(struct audit_parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0) {
		ps->p += n;
		return true;
	}
	return false;
}

static void ap_value(struct audit_parser *ps, int depth)
{
	char scratch[AUDIT_READ_VALUE_MAX];

	ap_skip_ws(ps);
	if (ps->p >= ps->end) {
		ap_fail(ps, "expected a value");
		return;
	}
	if (*ps->p == '"')
		ap_string(ps, scratch, sizeof(scratch));
	else if (*ps->p == '{' || *ps->p == '[')
		ap_container(ps, depth);
	else if (*ps->p == '-' || isdigit((unsigned char)*ps->p))
		ap_number(ps);
	else if (!ap_literal(ps, "true") && !ap_literal(ps, "false") && !ap_literal(ps, "null"))
		ap_fail(ps, "unexpected '%c'", *ps->p);
}

int audit_read_parse_line(const char *line, size_t len, struct audit_entry *out, char *err,
			  size_t errlen)
{
	struct audit_parser ps = {line, line + len, err, errlen, false};
	struct audit_field *f;
	const char *start;
	size_t vlen;

	out->n = 0;
	if (len > AUDIT_READ_MAX_LINE) {
		snprintf(err, errlen, "line longer than %d bytes", AUDIT_READ_MAX_LINE);
		return -1;
	}
	if (memchr(line, '\0', len) != NULL) {
		snprintf(err, errlen, "NUL byte");
		return -1;
	}
	ap_skip_ws(&ps);
	if (ps.p >= ps.end || *ps.p != '{') {
		snprintf(err, errlen, "not a JSON object");
		return -1;
	}
	ps.p++;
	for (;;) {
		ap_skip_ws(&ps);
		if (ps.p < ps.end && *ps.p == '}' && out->n == 0) {
			ps.p++;
			break;
		}
		if (out->n == AUDIT_READ_MAX_FIELDS) {
			ap_fail(&ps, "more than %d fields", AUDIT_READ_MAX_FIELDS);
			break;
		}
		f = &out->f[out->n];
		if (ps.p >= ps.end || *ps.p != '"') {
			ap_fail(&ps, "expected a key");
			break;
		}
		ap_string(&ps, f->key, sizeof(f->key));
		ap_skip_ws(&ps);
		if (ps.failed || ps.p >= ps.end || *ps.p != ':') {
			ap_fail(&ps, "expected ':'");
			break;
		}
		ps.p++;
		ap_skip_ws(&ps);
		f->is_string = ps.p < ps.end && *ps.p == '"';
		if (f->is_string) {
			ap_string(&ps, f->value, sizeof(f->value));
		} else {
			start = ps.p;
			ap_value(&ps, 1);
			vlen = (size_t)(ps.p - start);
			if (!ps.failed && vlen >= sizeof(f->value))
				ap_fail(&ps, "value of '%s' longer than %zu bytes", f->key, sizeof(f->value) - 1);
			if (!ps.failed) {
				memcpy(f->value, start, vlen);
				f->value[vlen] = '\0';
			}
		}
		if (ps.failed)
			break;
		out->n++;
		ap_skip_ws(&ps);
		if (ps.p < ps.end && *ps.p == ',') {
			ps.p++;
			continue;
		}
		if (ps.p < ps.end && *ps.p == '}') {
			ps.p++;
			break;
		}
		ap_fail(&ps, "expected ',' or '}'");
		break;
	}
	if (!ps.failed) {
		ap_skip_ws(&ps);
		if (ps.p != ps.end)
			ap_fail(&ps, "text after the object");
	}
	return ps.failed ? -1 : 0;
}

const char *audit_entry_get(const struct audit_entry *e, const char *key)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		if (strcmp(e->f[i].key, key) == 0)
			return e->f[i].value;
	}
	return NULL;
}

/* Fields shown in their own columns are left out of DETAILS. */
static bool audit_read_is_column(const char *key)
{
	static const char *const cols[] = {"time", "event", "component", "pid", "uid", "result", "errno"};
	size_t i;

	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		if (strcmp(cols[i], key) == 0)
			return true;
	}
	return false;
}

static void audit_read_print_entry(const struct audit_entry *e, FILE *out)
{
	const char *time = audit_entry_get(e, "time");
	const char *event = audit_entry_get(e, "event");
	const char *comp = audit_entry_get(e, "component");
	const char *pid = audit_entry_get(e, "pid");
	const char *uid = audit_entry_get(e, "uid");
	const char *result = audit_entry_get(e, "result");
	const char *errnum = audit_entry_get(e, "errno");
	char who[96], res[64];
	size_t i;
	int err_code = errnum != NULL ? atoi(errnum) : 0;

	snprintf(who, sizeof(who), "%s[%s] uid %s", comp ? comp : "?", pid ? pid : "?", uid ? uid : "?");
	if (result != NULL && strcmp(result, "ok") != 0)
		snprintf(res, sizeof(res), "%s (%s)", result, err_code > 0 ? strerror(err_code) : "?");
	else
		snprintf(res, sizeof(res), "%s", result ? result : "?");
	fprintf(out, "%-26s  %-15s  %-28s  %-24s ", time ? time : "?", event ? event : "?", who, res);
	for (i = 0; i < e->n; i++) {
		if (audit_read_is_column(e->f[i].key))
			continue;
		fprintf(out, " %s=%s", e->f[i].key, e->f[i].value);
	}
	fputc('\n', out);
}

int audit_read_print(FILE *in, FILE *out, FILE *errout)
{
	static char line[AUDIT_READ_MAX_LINE + 2];
	static struct audit_entry e;
	char err[160];
	unsigned long lineno = 0;
	int malformed = 0;
	size_t len;
	bool long_line = false;

	fprintf(out, "%-26s  %-15s  %-28s  %-24s  %s\n", "TIME", "EVENT", "WHO", "RESULT", "DETAILS");
	while (fgets(line, sizeof(line), in) != NULL) {
		len = strlen(line);
		if (long_line) {
			/* The rest of a line already reported. */
			long_line = len > 0 && line[len - 1] != '\n';
			continue;
		}
		lineno++;
		if (len > 0 && line[len - 1] == '\n') {
			line[--len] = '\0';
		} else if (!feof(in)) {
			fprintf(errout, "line %lu: malformed: longer than %d bytes\n", lineno, AUDIT_READ_MAX_LINE);
			malformed++;
			long_line = true;
			continue;
		}
		if (len == 0)
			continue;
		if (audit_read_parse_line(line, len, &e, err, sizeof(err)) != 0) {
			fprintf(errout, "line %lu: malformed: %s\n", lineno, err);
			malformed++;
			continue;
		}
		audit_read_print_entry(&e, out);
	}
	if (ferror(in))
		return -1;
	return malformed;
}
