/*
 * A reload (SIGHUP, `systemctl reload lowprof`): the settings are read again
 * the way they were at start (defaults, the configuration file, then the
 * same command line, which still wins). The settings a running lowprof can
 * change take their new value: the supervisor then restarts each component
 * whose command line changed (supervisor/supervise.c); the others keep the
 * running value and the log says that they need a restart of lowprof. A bad
 * file changes nothing.
 */
#ifndef LOWPROF_SUPERVISOR_CONFIG_RELOAD_H
#define LOWPROF_SUPERVISOR_CONFIG_RELOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "supervisor/options.h"

/* Whether a running lowprof applies a new value of this key. */
bool config_reload_applies(const char *key);

/*
 * The settings read again, in a new malloc'd structure (free it with
 * supervisor_options_free, then free): every key that changed is logged, the
 * ones that cannot change at run time keep cur's value. cur's file texts move
 * to the new structure (kept values may point into them). *changed tells
 * whether any applied value changed. NULL with one line in err when the file
 * is bad: cur is untouched.
 */
struct supervisor_options *config_reload_load(struct supervisor_options *cur, bool *changed,
					      char *err, size_t errlen);

#endif /* LOWPROF_SUPERVISOR_CONFIG_RELOAD_H */
