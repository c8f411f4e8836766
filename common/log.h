/*
 * Logging for every lowprof program: one line per message on stderr, prefixed
 * with the program name; the _f variants add the function name (OpenSSH's
 * fatal_f convention), for messages a developer reads.
 */
#ifndef LOWPROF_COMMON_LOG_H
#define LOWPROF_COMMON_LOG_H

#include <stdnoreturn.h>

enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

void log_init(const char *program, enum log_level level);
enum log_level log_get_level(void);
void log_msg(enum log_level level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
noreturn void log_fatal(int status, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, NULL, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, NULL, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, NULL, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, NULL, __VA_ARGS__)
#define log_error_f(...) log_msg(LOG_LEVEL_ERROR, __func__, __VA_ARGS__)
#define log_warn_f(...) log_msg(LOG_LEVEL_WARN, __func__, __VA_ARGS__)
#define log_debug_f(...) log_msg(LOG_LEVEL_DEBUG, __func__, __VA_ARGS__)
#define fatal(status, ...) log_fatal(status, NULL, __VA_ARGS__)
#define fatal_f(status, ...) log_fatal(status, __func__, __VA_ARGS__)

#endif
