/* One kernel uevent on arbitrary bytes (loader/cpu_uevents: the loader reads
 * a netlink socket; only the kernel's messages are believed, but their text
 * is parsed as untrusted all the same).
 *
 * Invariants: a message taken is a CPU's, its number within CPU_LIST_MAX,
 * its header's action the one said (online or offline) and its text ending
 * with a NUL; a message refused leaves the outputs as they were. */
#include "loader/cpu_uevents.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes: ASan sees any read past the end. */
	char *msg = malloc(size ? size : 1);
	bool online = false;
	int cpu = -7;

	if (msg == NULL)
		return 0;
	memcpy(msg, data, size);
	if (cpu_uevent_parse(msg, size, &cpu, &online)) {
		FUZZ_CHECK(cpu >= 0 && cpu < CPU_LIST_MAX);
		FUZZ_CHECK(size > 0 && msg[size - 1] == '\0');
		FUZZ_CHECK(strncmp(msg, online ? "online@/devices/system/cpu/cpu" :
					  "offline@/devices/system/cpu/cpu",
				   online ? 30 : 31) == 0);
	} else {
		FUZZ_CHECK(cpu == -7 && !online);
	}
	free(msg);
	return 0;
}
