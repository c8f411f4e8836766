#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *log_program = "lowprof";
static enum log_level log_level = LOG_LEVEL_INFO;

void log_init(const char *program, enum log_level level)
{
	log_program = program;
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

static void log_vwrite(enum log_level level, const char *func, const char *fmt, va_list ap)
{
	static const char *const names[] = {"error: ", "warning: ", "", "debug: "};
	char line[1024];
	int n;

	/* Format the whole line first so concurrent writers never interleave. */
	n = snprintf(line, sizeof(line), "%s: %s%s%s", log_program, names[level],
		     func ? func : "", func ? ": " : "");
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}

void log_msg(enum log_level level, const char *func, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	log_vwrite(level, func, fmt, ap);
	va_end(ap);
}

void log_fatal(int status, const char *func, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, func, fmt, ap);
	va_end(ap);
	exit(status);
}
