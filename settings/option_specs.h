/*
 * The options more than one program takes, as rows of an option table
 * (settings/option_table.h): the supervisor passes most of its command line
 * on to the components, which check what they get with the same rows.
 * Each macro takes where the value goes.
 */
#ifndef LOWPROF_SETTINGS_OPTION_SPECS_H
#define LOWPROF_SETTINGS_OPTION_SPECS_H

#include <stdbool.h>
#include <stddef.h>

#include "settings/defaults.h"
#include "settings/option_table.h"

/* The words of --unwind and --otlp-compression, NULL-terminated. */
extern const char *const settings_unwind_names[];
extern const char *const settings_otlp_compression_names[];

/* The components' -F: the supervisor checked it against the kernel's limit. */
#define SETTINGS_OPT_FREQUENCY(field)                                                         \
	{.name = "frequency", .short_name = 'F', .kind = OPTION_UINT, .dest = (field), .min = 1,  \
	 .max = SETTINGS_FREQUENCY_MAX_HZ, .unit = " Hz"}
#define SETTINGS_OPT_RINGBUF_KB(field)                                                        \
	{.name = "ringbuf-kb", .kind = OPTION_UINT, .dest = (field), .min = SETTINGS_RINGBUF_KB_MIN, \
	 .max = SETTINGS_RINGBUF_KB_MAX, .flags = OPTION_POW2, .what = "a power of two"}
#define SETTINGS_OPT_INTERVAL(field)                                                          \
	{.name = "interval", .kind = OPTION_UINT, .dest = (field), .min = 1,                      \
	 .max = SETTINGS_INTERVAL_MAX_S, .unit = " seconds"}
/* --window, --max-stacks, --archive, --archive-max-age, --archive-max-mb:
 * the exporter's bounds; struct settings_window *w. */
#define SETTINGS_OPT_WINDOW(w)                                                                \
	{.name = "window", .kind = OPTION_UINT, .dest = &(w)->window_s, .min = 1,                 \
	 .max = SETTINGS_WINDOW_MAX_S, .unit = " seconds", .seen = &(w)->window_given},                                       \
	{.name = "max-stacks", .kind = OPTION_UINT, .dest = &(w)->max_stacks,                     \
	 .min = SETTINGS_MAX_STACKS_MIN, .max = SETTINGS_MAX_STACKS_MAX},                         \
	{.name = "archive", .kind = OPTION_FLAG, .dest = &(w)->archive},                          \
	{.name = "archive-max-age", .kind = OPTION_UINT, .dest = &(w)->archive_max_age_s,         \
	 .min = 1, .max = SETTINGS_ARCHIVE_MAX_AGE_MAX_S, .unit = " seconds"},                    \
	{.name = "archive-max-mb", .kind = OPTION_UINT, .dest = &(w)->archive_max_mb, .min = 1,   \
	 .max = SETTINGS_ARCHIVE_MAX_MB_MAX}
#define SETTINGS_OPT_MAX_DEPTH(field)                                                         \
	{.name = "max-depth", .kind = OPTION_UINT, .dest = (field), .min = 1,                     \
	 .max = SETTINGS_MAX_DEPTH_MAX}
#define SETTINGS_OPT_CPU_BUDGET(field)                                                        \
	{.name = "cpu-budget", .kind = OPTION_DOUBLE, .dest = (field),                            \
	 .min = SETTINGS_CPU_BUDGET_MIN_PCT, .max = SETTINGS_CPU_BUDGET_MAX_PCT,                  \
	 .what = "a percentage"}
/* The components' --control-interval: fractions allowed (the tests use them). */
#define SETTINGS_OPT_CONTROL_INTERVAL_S(field)                                                \
	{.name = "control-interval", .kind = OPTION_DOUBLE, .dest = (field),                      \
	 .min = SETTINGS_CONTROL_INTERVAL_MIN_S, .max = SETTINGS_CONTROL_INTERVAL_MAX_S,          \
	 .unit = " seconds"}
/* --liveness-timeout: the supervisor's deadline; a component pings 0.4 of it
 * apart (ipc/notify.h), so it takes the same option. */
#define SETTINGS_OPT_LIVENESS_TIMEOUT(field)                                                  \
	{.name = "liveness-timeout", .kind = OPTION_UINT, .dest = (field), .min = 1,              \
	 .max = SETTINGS_LIVENESS_TIMEOUT_MAX_S, .unit = " seconds"}
#define SETTINGS_OPT_NO_THROTTLE(field) {.name = "no-throttle", .kind = OPTION_FLAG, .dest = (field)}
/* -v: debug lines on stderr (the audit trail of applied changes among them). */
#define SETTINGS_OPT_VERBOSE(field)                                                           \
	{.name = "verbose", .short_name = 'v', .kind = OPTION_FLAG, .dest = (field)}
/* enum settings_unwind */
#define SETTINGS_OPT_UNWIND(field)                                                            \
	{.name = "unwind", .kind = OPTION_ENUM, .dest = (field), .names = settings_unwind_names,  \
	 .expect = "dwarf, fp or auto"}
#define SETTINGS_OPT_UNWIND_TABLE_MB(field)                                                   \
	{.name = "unwind-table-mb", .kind = OPTION_UINT, .dest = (field), .min = 1,               \
	 .max = SETTINGS_UNWIND_TABLE_MB_MAX}
/* --off-cpu, --off-cpu-min-us, --off-cpu-probability: the loader's sched_switch
 * program (off by default) and the exporter's second profile. */
#define SETTINGS_OPT_OFF_CPU(enabled, min_us, prob_pct)                                       \
	{.name = "off-cpu", .kind = OPTION_FLAG, .dest = (enabled)},                              \
	{.name = "off-cpu-min-us", .kind = OPTION_UINT, .dest = (min_us), .min = 1,               \
	 .max = SETTINGS_OFFCPU_MIN_US_MAX, .unit = " us"},                                       \
	{.name = "off-cpu-probability", .kind = OPTION_DOUBLE, .dest = (prob_pct),                \
	 .min = SETTINGS_OFFCPU_PROBABILITY_MIN_PCT, .max = 100.0, .what = "a percentage"}
/* -p, repeatable: pids (pid_t) into array, *countp of them; check: a further rule or NULL. */
#define SETTINGS_OPT_PID(array, countp, check_fn)                                             \
	{.name = "pid", .short_name = 'p', .kind = OPTION_INT, .dest = (array), .min = 1,         \
	 .max = SETTINGS_ID_MAX, .count = (countp), .max_count = SETTINGS_MAX_PIDS,              \
	 .label = "pid", .expect = "", .check = (check_fn)}
/*
 * --otlp-endpoint, --otlp-compression, --otlp-header (repeatable), --otlp-headers-file, --otlp-ca,
 * --otlp-client-cert, --otlp-client-key into struct otlp_settings *s;
 * *enabled is set by --otlp-endpoint, *other (may be NULL) by any other.
 */
#define SETTINGS_OPT_OTLP(s, enabled, other)                                                  \
	{.name = "otlp-endpoint", .kind = OPTION_STRING, .dest = &(s)->endpoint, .seen = (enabled)}, \
	{.name = "otlp-compression", .kind = OPTION_ENUM, .dest = &(s)->compression,              \
	 .names = settings_otlp_compression_names, .seen = (other)},                              \
	{.name = "otlp-header", .kind = OPTION_STRING, .dest = (s)->headers,                      \
	 .count = &(s)->nheaders, .max_count = SETTINGS_OTLP_MAX_HEADERS, .seen = (other)},        \
	{.name = "otlp-headers-file", .kind = OPTION_STRING, .dest = &(s)->headers_file,          \
	 .seen = (other)},                                                                        \
	{.name = "otlp-ca", .kind = OPTION_STRING, .dest = &(s)->ca_file, .seen = (other)},       \
	{.name = "otlp-client-cert", .kind = OPTION_STRING, .dest = &(s)->client_cert,            \
	 .seen = (other)},                                                                        \
	{.name = "otlp-client-key", .kind = OPTION_STRING, .dest = &(s)->client_key, .seen = (other)}

/* What SETTINGS_OPT_WINDOW fills. */
struct settings_window {
	unsigned window_s;
	bool window_given;  /* else the default, raised to --interval when shorter */
	unsigned max_stacks;
	bool archive;
	unsigned archive_max_age_s;
	unsigned archive_max_mb;
};

/* The defaults. */
void settings_window_init(struct settings_window *w);
/* The window against --interval: at least one interval (the default is raised
 * to one), at most SETTINGS_WINDOW_MAX_INTERVALS of them. 0, or -EINVAL with
 * the reason in err. */
int settings_window_check(struct settings_window *w, unsigned interval_s, char *err,
			  size_t errlen);

#endif /* LOWPROF_SETTINGS_OPTION_SPECS_H */
