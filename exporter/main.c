/*
 * lowprof-exporter: reads sample batches from the shared-memory ring,
 * symbolizes and aggregates them, and rewrites the output files every
 * --interval and once more at the end.
 *
 * Inherited fds (ipc/lowprof_fds.h): NOTIFY, SHM, EVENT, OUTDIR, SYMBOLS, and
 * the TLS files as /dev/fd/N. It runs as --user with no capabilities and opens
 * no path: what it symbolizes with comes from the loader over SYMBOLS.
 */
#include <string.h>

#include "common/heap_bound.h"
#include "common/log.h"
#include "exporter/exporter_run.h"
#include "ipc/lowprof_fds.h"
#include "ipc/notify.h"
#include "seccomp/sandbox.h"

int main(int argc, char **argv)
{
	struct exporter ex;
	char err[512];
	bool seccomp_log;
	int rc;

	heap_bound();
	memset(&ex, 0, sizeof(ex));
	ex.state_fd = -1;
	ex.job_running = OUTPUT_PACE_N;
	log_init("lowprof-exporter", LOG_LEVEL_INFO);
	sandbox_not_dumpable("exporter");
	seccomp_log = sandbox_take_seccomp_log(&argc, argv);
	rc = exporter_options_parse(argc, argv, &ex.opt, err, sizeof(err));
	if (rc != 0)
		fatal(rc, "%s", err);
	notify_set_liveness_timeout(ex.opt.liveness_timeout_s);
	exporter_start(&ex, seccomp_log);
	exporter_run(&ex);
	exporter_stop(&ex);
	return LOWPROF_EXIT_OK;
}
