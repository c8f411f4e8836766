#include "exporter/exporter_options.h"

#include <errno.h>
#include <string.h>

#include "ipc/lowprof_fds.h"
#include "settings/option_specs.h"

/* --run-id: 32 lowercase hex digits. */
static int exporter_check_run_id(const struct option_spec *spec, const char *value, void *slot,
				 char *err, size_t errlen)
{
	return strlen(value) == SETTINGS_RUN_ID_LEN &&
			       strspn(value, "0123456789abcdef") == SETTINGS_RUN_ID_LEN
		       ? 0
		       : -EINVAL;
}

int exporter_options_parse(int argc, char **argv, struct exporter_options *out,
			   char *err, size_t errlen)
{
	const char *run_id = NULL;
	const struct option_spec specs[] = {
		SETTINGS_OPT_INTERVAL(&out->interval_s),
		SETTINGS_OPT_WINDOW(&out->window),
		SETTINGS_OPT_FREQUENCY(&out->frequency_hz),
		SETTINGS_OPT_CPU_BUDGET(&out->cpu_budget_pct),
		SETTINGS_OPT_CONTROL_INTERVAL_S(&out->control_interval_s),
		{.name = "off-cpu", .kind = OPTION_FLAG, .dest = &out->off_cpu},
		{.name = "output-label", .kind = OPTION_STRING, .dest = &out->output_label},
		{.name = "kallsyms", .kind = OPTION_STRING, .dest = &out->kallsyms_path},
		{.name = "kernel-addresses", .kind = OPTION_FLAG, .dest = &out->kernel_addresses},
		{.name = "run-id", .kind = OPTION_STRING, .dest = &run_id,
		 .check = exporter_check_run_id},
		SETTINGS_OPT_LIVENESS_TIMEOUT(&out->liveness_timeout_s),
		SETTINGS_OPT_OTLP(&out->otlp, &out->otlp_enabled, NULL),
		/* The supervisor converted --otlp-queue-mb. */
		{.name = "otlp-queue-bytes", .kind = OPTION_SIZE, .dest = &out->otlp.queue_max_bytes,
		 .min = SETTINGS_OTLP_QUEUE_MIN_BYTES, .max = (double)SETTINGS_OTLP_QUEUE_MAX_BYTES},
		{.name = NULL},
	};
	const struct option_parser parser = {.specs = specs, .first = 1};

	memset(out, 0, sizeof(*out));
	out->interval_s = SETTINGS_INTERVAL_S;
	settings_window_init(&out->window);
	out->frequency_hz = SETTINGS_FREQUENCY_HZ;
	out->cpu_budget_pct = SETTINGS_CPU_BUDGET_PCT;
	out->control_interval_s = SETTINGS_CONTROL_INTERVAL_S;
	out->output_label = SETTINGS_OUTPUT_LABEL;
	out->kallsyms_path = SETTINGS_KALLSYMS_PATH;
	out->liveness_timeout_s = SETTINGS_LIVENESS_TIMEOUT_S;
	otlp_settings_init(&out->otlp);
	if (option_table_parse(&parser, argc, argv, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (settings_window_check(&out->window, out->interval_s, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	if (run_id != NULL)
		memcpy(out->run_id, run_id, SETTINGS_RUN_ID_LEN + 1);
	/* The supervisor validated these already; a second look costs nothing. */
	if (out->otlp_enabled && otlp_settings_load_headers_file(&out->otlp, err, errlen) != 0)
		return LOWPROF_EXIT_CONFIG;
	if (out->otlp_enabled && otlp_settings_validate(&out->otlp, err, errlen) != 0)
		return LOWPROF_EXIT_USAGE;
	return 0;
}
