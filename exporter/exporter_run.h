/* The exporter's start, loop and stop (exporter/main.c calls them in turn). */
#ifndef LOWPROF_EXPORTER_RUN_H
#define LOWPROF_EXPORTER_RUN_H

#include <stdbool.h>

#include "exporter/exporter_loop.h"

/* Sources, the sandbox, the symbolizer, the restart state; then "ready".
 * ex->opt is parsed. Exits (fatal) on what it cannot do without. */
void exporter_start(struct exporter *ex, bool seccomp_log);
/* Until SIGTERM/SIGINT or the supervisor's hang-up. */
void exporter_run(struct exporter *ex);
/* The last batches and files, a bounded OTLP flush, the summary; frees ex. */
void exporter_stop(struct exporter *ex);

#endif
