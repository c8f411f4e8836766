/* The words of the enumerated options and the window's rules (settings/option_specs.h). */
#include "settings/option_specs.h"

#include <errno.h>
#include <stddef.h>

#include "common/errbuf.h"

const char *const settings_unwind_names[] = SETTINGS_UNWIND_NAMES;
const char *const settings_otlp_compression_names[] = SETTINGS_OTLP_COMPRESSION_NAMES;

void settings_window_init(struct settings_window *w)
{
	w->window_s = SETTINGS_WINDOW_S;
	w->window_given = false;
	w->max_stacks = SETTINGS_MAX_STACKS;
	w->archive = false;
	w->archive_max_age_s = SETTINGS_ARCHIVE_MAX_AGE_S;
	w->archive_max_mb = SETTINGS_ARCHIVE_MAX_MB;
}

int settings_window_check(struct settings_window *w, unsigned interval_s, char *err,
			  size_t errlen)
{
	if (!w->window_given && w->window_s < interval_s)
		w->window_s = interval_s;
	if (w->window_s < interval_s)
		return errbuf_fail(-EINVAL, err, errlen,
				   "--window (%u s) is shorter than --interval (%u s)", w->window_s,
				   interval_s);
	if (w->window_s / interval_s > SETTINGS_WINDOW_MAX_INTERVALS)
		return errbuf_fail(-EINVAL, err, errlen,
				   "--window (%u s) holds more than %u intervals of %u s", w->window_s,
				   SETTINGS_WINDOW_MAX_INTERVALS, interval_s);
	return 0;
}
