#include "controller/controller_options.h"

#include <string.h>

#include "ipc/lowprof_fds.h"
#include "settings/option_specs.h"

int controller_options_parse(int argc, char **argv, struct controller_options *out, char *err,
			     size_t errlen)
{
	const struct option_spec specs[] = {
		SETTINGS_OPT_CONTROL_INTERVAL_S(&out->interval_s),
		SETTINGS_OPT_CPU_BUDGET(&out->cpu_budget_pct),
		SETTINGS_OPT_FREQUENCY(&out->frequency_hz),
		SETTINGS_OPT_NO_THROTTLE(&out->no_throttle),
		SETTINGS_OPT_MAX_DEPTH(&out->max_depth),
		SETTINGS_OPT_LIVENESS_TIMEOUT(&out->liveness_timeout_s),
		SETTINGS_OPT_VERBOSE(&out->verbose),
		SETTINGS_OPT_OFF_CPU(&out->off_cpu, &out->off_cpu_min_us, &out->off_cpu_prob_pct),
		{.name = NULL},
	};
	const struct option_parser parser = {.specs = specs, .first = 1};

	memset(out, 0, sizeof(*out));
	out->interval_s = SETTINGS_CONTROL_INTERVAL_S;
	out->cpu_budget_pct = SETTINGS_CPU_BUDGET_PCT;
	out->frequency_hz = SETTINGS_FREQUENCY_HZ;
	out->max_depth = SETTINGS_MAX_DEPTH;
	out->off_cpu_min_us = SETTINGS_OFFCPU_MIN_US;
	out->off_cpu_prob_pct = SETTINGS_OFFCPU_PROBABILITY_PCT;
	out->liveness_timeout_s = SETTINGS_LIVENESS_TIMEOUT_S;
	return option_table_parse(&parser, argc, argv, err, errlen) != 0 ? LOWPROF_EXIT_USAGE : 0;
}
