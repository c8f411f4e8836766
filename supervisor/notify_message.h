/*
 * Parsing what a component says on its notification channel (ipc/notify.h).
 * The components are less trusted than the supervisor: every message is
 * bounded and checked, and anything else is refused.
 */
#ifndef LOWPROF_SUPERVISOR_NOTIFY_MESSAGE_H
#define LOWPROF_SUPERVISOR_NOTIFY_MESSAGE_H

#include <stddef.h>

#define NOTIFY_MESSAGE_MAX 512
#define NOTIFY_MAX_PAIRS 16
#define NOTIFY_KEY_MAX 32
#define NOTIFY_VALUE_MAX 64

enum notify_kind { NOTIFY_READY, NOTIFY_PING, NOTIFY_STATE };

struct notify_pair {
	char key[NOTIFY_KEY_MAX];     /* [a-z0-9_]+ */
	char value[NOTIFY_VALUE_MAX]; /* [A-Za-z0-9._+-]+ */
};

struct notify_message {
	enum notify_kind kind;
	struct notify_pair pairs[NOTIFY_MAX_PAIRS];
	size_t npairs;
};

/* 0, or -1 with the reason in err. A trailing newline is accepted. */
int notify_message_parse(const char *buf, size_t len, struct notify_message *out,
			 char *err, size_t errlen);

#endif
