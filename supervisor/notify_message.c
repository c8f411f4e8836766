#include "supervisor/notify_message.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool notify_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static bool notify_value_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '+' || c == '-';
}

/* One "key=value" token of length len at s. */
static int notify_parse_pair(const char *s, size_t len, struct notify_pair *p, char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', len);
	size_t klen, vlen, i;

	if (eq == NULL) {
		snprintf(err, errlen, "state item without '='");
		return -1;
	}
	klen = (size_t)(eq - s);
	vlen = len - klen - 1;
	if (klen == 0 || klen >= NOTIFY_KEY_MAX || vlen == 0 || vlen >= NOTIFY_VALUE_MAX) {
		snprintf(err, errlen, "state item of bad length");
		return -1;
	}
	for (i = 0; i < klen; i++) {
		if (!notify_key_char(s[i])) {
			snprintf(err, errlen, "bad character in state key");
			return -1;
		}
	}
	for (i = 0; i < vlen; i++) {
		if (!notify_value_char(eq[1 + i])) {
			snprintf(err, errlen, "bad character in state value");
			return -1;
		}
	}
	memcpy(p->key, s, klen);
	p->key[klen] = '\0';
	memcpy(p->value, eq + 1, vlen);
	p->value[vlen] = '\0';
	return 0;
}

int notify_message_parse(const char *buf, size_t len, struct notify_message *out,
			 char *err, size_t errlen)
{
	size_t pos, start;

	memset(out, 0, sizeof(*out));
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len == 0 || len > NOTIFY_MESSAGE_MAX) {
		snprintf(err, errlen, "message of %zu bytes", len);
		return -1;
	}
	if (len == 5 && memcmp(buf, "ready", 5) == 0) {
		out->kind = NOTIFY_READY;
		return 0;
	}
	if (len == 4 && memcmp(buf, "ping", 4) == 0) {
		out->kind = NOTIFY_PING;
		return 0;
	}
	if (len < 7 || memcmp(buf, "state ", 6) != 0) {
		snprintf(err, errlen, "unknown message");
		return -1;
	}
	out->kind = NOTIFY_STATE;
	pos = 6;
	while (pos < len) {
		start = pos;
		while (pos < len && buf[pos] != ' ')
			pos++;
		if (pos == start) {
			snprintf(err, errlen, "empty state item");
			return -1;
		}
		if (out->npairs == NOTIFY_MAX_PAIRS) {
			snprintf(err, errlen, "more than %d state items", NOTIFY_MAX_PAIRS);
			return -1;
		}
		if (notify_parse_pair(buf + start, pos - start, &out->pairs[out->npairs], err, errlen) != 0)
			return -1;
		out->npairs++;
		if (pos < len)
			pos++; /* the single space between items */
	}
	return 0;
}
