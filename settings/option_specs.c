/* The words of the enumerated options (settings/option_specs.h). */
#include "settings/option_specs.h"

#include <stddef.h>

const char *const settings_unwind_names[] = SETTINGS_UNWIND_NAMES;
const char *const settings_otlp_compression_names[] = SETTINGS_OTLP_COMPRESSION_NAMES;
