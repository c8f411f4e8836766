/* Options of lowprof-loader (started by the supervisor; validated all the same). */
#ifndef LOWPROF_LOADER_OPTIONS_H
#define LOWPROF_LOADER_OPTIONS_H

#include <stddef.h>
#include <sys/types.h>

#define LOADER_MAX_PIDS 1024

struct loader_options {
	unsigned frequency_hz;
	unsigned ringbuf_kb;
	unsigned max_depth;
	unsigned drain_ms;
	unsigned stats_ms;
	pid_t pids[LOADER_MAX_PIDS];
	size_t npids;
};

/* Returns 0, or LOWPROF_EXIT_USAGE with a one-line reason in err. */
int loader_options_parse(int argc, char **argv, struct loader_options *out, char *err, size_t errlen);

#endif
