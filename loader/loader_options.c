#include "loader/loader_options.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ipc/lowprof_fds.h"
#include "settings/option_specs.h"

/* --pin-dir: only under bpffs, and never a path that climbs out of it. */
static int loader_check_pin_dir(const struct option_spec *spec, const char *value, void *slot,
				char *err, size_t errlen)
{
	return strncmp(value, SETTINGS_PIN_DIR_PREFIX, strlen(SETTINGS_PIN_DIR_PREFIX)) == 0 &&
			       strstr(value, "..") == NULL && strlen(value) <= SETTINGS_PIN_DIR_MAX
		       ? 0
		       : -EINVAL;
}

/* --debug-dir: absolute, and never a path that climbs out of where it points. */
static int loader_check_debug_dir(const struct option_spec *spec, const char *value, void *slot,
				  char *err, size_t errlen)
{
	return value[0] == '/' && strstr(value, "..") == NULL &&
			       strlen(value) <= SETTINGS_DEBUG_DIR_MAX
		       ? 0
		       : -EINVAL;
}

static bool loader_options_has_pid(const struct loader_options *o, pid_t pid)
{
	size_t i;

	for (i = 0; i < o->npids; i++) {
		if (o->pids[i] == pid)
			return true;
	}
	return false;
}

int loader_options_parse(int argc, char **argv, struct loader_options *out, char *err, size_t errlen)
{
	const struct option_spec specs[] = {
		SETTINGS_OPT_FREQUENCY(&out->frequency_hz),
		SETTINGS_OPT_RINGBUF_KB(&out->ringbuf_kb),
		SETTINGS_OPT_MAX_DEPTH(&out->max_depth),
		{.name = "drain-ms", .kind = OPTION_UINT, .dest = &out->drain_ms, .min = 1,
		 .max = SETTINGS_DRAIN_MAX_MS, .unit = " ms"},
		{.name = "stats-ms", .kind = OPTION_UINT, .dest = &out->stats_ms,
		 .min = SETTINGS_STATS_MIN_MS, .max = SETTINGS_STATS_MAX_MS, .unit = " ms"},
		SETTINGS_OPT_PID(out->pids, &out->npids, NULL),
		{.name = "pid-start", .kind = OPTION_SIZE, .dest = out->pid_starts,
		 .count = &out->npid_starts, .max_count = SETTINGS_MAX_PIDS, .min = 1, .max = 1e15},
		{.name = "follow-pid", .kind = OPTION_INT, .dest = &out->follow_pid, .min = 1,
		 .max = SETTINGS_ID_MAX},
		SETTINGS_OPT_CPU_BUDGET(&out->cpu_budget_pct),
		SETTINGS_OPT_CONTROL_INTERVAL_S(&out->control_interval_s),
		SETTINGS_OPT_NO_THROTTLE(&out->no_throttle),
		SETTINGS_OPT_UNWIND(&out->unwind),
		SETTINGS_OPT_UNWIND_TABLE_MB(&out->unwind_table_mb),
		{.name = "controller-uid", .kind = OPTION_INT, .dest = &out->controller_uid, .min = 1,
		 .max = SETTINGS_ID_MAX},
		{.name = "pin-dir", .kind = OPTION_STRING, .dest = &out->pin_dir,
		 .check = loader_check_pin_dir},
		{.name = "exporter-uid", .kind = OPTION_INT, .dest = &out->exporter_uid, .min = 1,
		 .max = SETTINGS_ID_MAX},
		{.name = "debug-dir", .kind = OPTION_STRING, .dest = &out->debug_dir,
		 .check = loader_check_debug_dir},
		SETTINGS_OPT_OFF_CPU(&out->off_cpu, &out->off_cpu_min_us, &out->off_cpu_prob_pct),
		SETTINGS_OPT_LIVENESS_TIMEOUT(&out->liveness_timeout_s),
		SETTINGS_OPT_INTERVAL(&out->interval_s),
		SETTINGS_OPT_VERBOSE(&out->verbose),
		{.name = NULL},
	};
	const struct option_parser parser = {.specs = specs, .first = 1};

	memset(out, 0, sizeof(*out));
	out->frequency_hz = SETTINGS_FREQUENCY_HZ;
	out->ringbuf_kb = SETTINGS_RINGBUF_KB;
	out->max_depth = SETTINGS_MAX_DEPTH;
	out->drain_ms = SETTINGS_DRAIN_MS;
	out->stats_ms = SETTINGS_STATS_MS;
	out->cpu_budget_pct = SETTINGS_CPU_BUDGET_PCT;
	out->control_interval_s = SETTINGS_CONTROL_INTERVAL_S;
	out->unwind = LOADER_UNWIND_AUTO;
	out->unwind_table_mb = SETTINGS_UNWIND_TABLE_MB;
	out->controller_uid = -1;
	out->exporter_uid = -1;
	out->debug_dir = SETTINGS_DEBUG_DIR;
	out->off_cpu_min_us = SETTINGS_OFFCPU_MIN_US;
	out->off_cpu_prob_pct = SETTINGS_OFFCPU_PROBABILITY_PCT;
	out->liveness_timeout_s = SETTINGS_LIVENESS_TIMEOUT_S;
	out->interval_s = SETTINGS_INTERVAL_S;
	if (option_table_parse(&parser, argc, argv, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (out->npid_starts != 0 && out->npid_starts != out->npids) {
		snprintf(err, errlen, "%zu --pid-start for %zu --pid: one each, in the same order",
			 out->npid_starts, out->npids);
		return LOWPROF_EXIT_USAGE;
	}
	if (out->follow_pid != 0 && !loader_options_has_pid(out, out->follow_pid)) {
		snprintf(err, errlen, "--follow-pid %d is not one of the --pid targets",
			 (int)out->follow_pid);
		return LOWPROF_EXIT_USAGE;
	}
	return 0;
}
