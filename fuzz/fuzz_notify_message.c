/* The supervisor's parser of a component's notification message ("ready",
 * "ping", "state k=v ..."), on what a compromised component could send. */
#include "supervisor/notify_message.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct notify_message m;
	char err[256];

	if (notify_message_parse((const char *)data, size, &m, err, sizeof(err)) != 0)
		return 0;
	FUZZ_CHECK(m.npairs <= NOTIFY_MAX_PAIRS);
	for (size_t i = 0; i < m.npairs; i++) {
		FUZZ_CHECK(strlen(m.pairs[i].key) < NOTIFY_KEY_MAX);
		FUZZ_CHECK(strlen(m.pairs[i].value) < NOTIFY_VALUE_MAX);
	}
	return 0;
}
