/* config_reload: the settings read again on SIGHUP (see the header). */
#include "supervisor/config_reload.h"

#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/log.h"

/*
 * What a running lowprof changes: the throttle's inputs (the controller and
 * the loader are restarted with them), the exporter's interval, window and
 * OTLP delivery (the exporter is restarted: it reloads its profile from the
 * output directory; the interval also restarts the loader, which bounds its
 * steady intervals by it), and what the supervisor reads at each use. Everything
 * else shapes the shared objects created once at start (the ring, the
 * sockets, the output and audit files, the users, the sandbox).
 */
static const char *const config_reload_keys[] = {
	"cpu-budget", "frequency", "control-interval", "max-depth", "no-throttle", "unwind",
	"interval", "window", "otlp-endpoint", "otlp-compression", "otlp-ca",
	"otlp-client-cert", "otlp-client-key", "otlp-queue-mb", "otlp-headers-file",
	"liveness-timeout", "verbose", NULL,
};

bool config_reload_applies(const char *key)
{
	const char *const *k;

	for (k = config_reload_keys; *k != NULL; k++) {
		if (strcmp(*k, key) == 0)
			return true;
	}
	return false;
}

/* Every value of the row as one text ("a, b" for a repeatable option). */
static void config_reload_text(const struct option_spec *spec, char *buf, size_t len)
{
	size_t i, used = 0, n = option_table_count(spec);

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		if (i > 0)
			used += (size_t)snprintf(buf + used, len - used, ", ");
		if (used < len)
			used += (size_t)option_table_format(spec, i, buf + used, len - used);
	}
}

struct supervisor_options *config_reload_load(struct supervisor_options *cur, bool *changed,
					      char *err, size_t errlen)
{
	struct option_spec old_specs[SUPERVISOR_OPTIONS_MAX_SPECS];
	struct option_spec new_specs[SUPERVISOR_OPTIONS_MAX_SPECS];
	char before[512], after[512];
	struct supervisor_options *next;
	size_t i, n;

	*changed = false;
	next = malloc(sizeof(*next));
	if (next == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	supervisor_options_defaults(next);
	next->max_sample_rate_path = cur->max_sample_rate_path;
	next->default_config_path = cur->default_config_path;
	next->output_dir = cur->output_dir; /* as the tests set it: it never changes anyway */
	if (supervisor_options_load(cur->argc, cur->argv, next, err, errlen) != 0) {
		supervisor_options_free(next);
		free(next);
		return NULL;
	}
	/* The processes -p named at start stay the run's (a pid given again
	 * may name another process by now). */
	memcpy(next->targets, cur->targets, sizeof(next->targets));
	next->ntargets = cur->ntargets;
	next->follow_pid = cur->follow_pid;
	n = supervisor_options_specs(cur, old_specs);
	supervisor_options_specs(next, new_specs);
	for (i = 0; i < n; i++) {
		/* Header values are never logged. */
		if (old_specs[i].flags & OPTION_CLI_ONLY)
			continue;
		config_reload_text(&old_specs[i], before, sizeof(before));
		config_reload_text(&new_specs[i], after, sizeof(after));
		if (strcmp(before, after) == 0)
			continue;
		if (config_reload_applies(old_specs[i].name)) {
			log_info("reload: %s = %s (was %s)", old_specs[i].name, after, before);
			*changed = true;
			continue;
		}
		log_warn("reload: %s = %s needs a restart of lowprof; %s stays in force until then",
			 old_specs[i].name, after, before);
		option_table_copy(&new_specs[i], &old_specs[i]);
	}
	supervisor_options_settle(next);
	supervisor_options_retire_text(next, cur);
	return next;
}
