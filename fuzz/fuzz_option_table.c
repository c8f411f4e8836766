/* Command lines through the table-driven option parser every lowprof program
 * uses (settings/option_table). The input, split on NUL bytes, is the argv;
 * its first byte picks the parser's mode (operands allowed, a command word
 * before the options).
 *
 * supervisor_options_parse is not driven here: it creates the output
 * directory (mkdir -p and a probe file) and opens the --otlp-ca/-cert/-key
 * files, side effects a fuzzer must not have. Its table is made of the
 * shared rows of settings/option_specs.h, used here as they are, plus rows of
 * the harness's own so that every kind and flag is covered: SIZE, INT with a
 * check of its own (with and without its own error line), ABOVE_MIN, STOP,
 * short options with and without a value, label/expect/what/unit.
 *
 * Invariants: the parser returns 0, OPTION_TABLE_STOP or -EINVAL, the last
 * with one non-empty line (the arguments it quotes are the user's own, as
 * given, newlines included); an unknown option is named, not the argument
 * before it; every value it stored is of its option's kind and range. */
#include "common/errbuf.h"
#include "settings/option_specs.h"
#include "settings/option_table.h"
#include "settings/otlp_settings.h"

#include "fuzz/fuzz_check.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define FUZZ_MAX_ARGS 64
#define FUZZ_ODD_MAX 1000

struct fuzz_values {
	unsigned frequency, ringbuf_kb, interval, max_depth, unwind, table_mb;
	double cpu_budget, control_interval, ratio;
	bool no_throttle, verbose, help, otlp_enabled, otlp_other, label_seen;
	pid_t pids[SETTINGS_MAX_PIDS];
	size_t npids;
	struct otlp_settings otlp;
	size_t size;
	int even;
	const char *output, *label;
};

/* An INT rule with an error line of its own. */
static int fuzz_check_even(const struct option_spec *spec, const char *value, void *slot,
			   char *err, size_t errlen)
{
	(void)spec;
	(void)value;
	if (*(const int *)slot % 2 != 0)
		return errbuf_fail(-EINVAL, err, errlen, "--even: %d is odd", *(const int *)slot);
	return 0;
}

/* A STRING rule that leaves the message to the option's "invalid" line. */
static int fuzz_check_label(const struct option_spec *spec, const char *value, void *slot,
			    char *err, size_t errlen)
{
	(void)spec;
	(void)slot;
	(void)err;
	(void)errlen;
	return value[0] == '/' ? 0 : -EINVAL;
}

static void fuzz_check_values(const struct fuzz_values *v)
{
	FUZZ_CHECK(v->frequency == 0 || v->frequency <= SETTINGS_FREQUENCY_MAX_HZ);
	FUZZ_CHECK(v->ringbuf_kb == 0 ||
		   (v->ringbuf_kb >= SETTINGS_RINGBUF_KB_MIN && v->ringbuf_kb <= SETTINGS_RINGBUF_KB_MAX &&
		    (v->ringbuf_kb & (v->ringbuf_kb - 1)) == 0));
	FUZZ_CHECK(v->interval <= SETTINGS_INTERVAL_MAX_S);
	FUZZ_CHECK(v->unwind == 99 || v->unwind < 3);
	FUZZ_CHECK(v->otlp.compression == 99 || v->otlp.compression < 2);
	FUZZ_CHECK(v->cpu_budget == -1 || (v->cpu_budget >= SETTINGS_CPU_BUDGET_MIN_PCT &&
					   v->cpu_budget <= SETTINGS_CPU_BUDGET_MAX_PCT));
	FUZZ_CHECK(v->ratio == -1 || (v->ratio > 0 && v->ratio <= 1));
	FUZZ_CHECK(v->npids <= SETTINGS_MAX_PIDS);
	for (size_t i = 0; i < v->npids; i++)
		FUZZ_CHECK(v->pids[i] >= 1);
	FUZZ_CHECK(v->otlp.nheaders <= SETTINGS_OTLP_MAX_HEADERS);
	FUZZ_CHECK(v->size == 0 || v->size <= 1000000000000ULL);
	FUZZ_CHECK(v->even % 2 == 0 && v->even >= 0 && v->even <= FUZZ_ODD_MAX);
	FUZZ_CHECK(v->label == NULL || v->label[0] == '/');
	FUZZ_CHECK(v->label_seen == (v->label != NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_values v;
	char *argv[FUZZ_MAX_ARGS + 2], *buf, err[512];
	int argc = 0, operands = -1, rc;
	size_t i, start;

	if (size < 1)
		return 0;
	memset(&v, 0, sizeof(v));
	v.unwind = 99;
	v.otlp.compression = 99;
	v.cpu_budget = v.control_interval = v.ratio = -1;
	const struct option_spec specs[] = {
		SETTINGS_OPT_FREQUENCY(&v.frequency),
		SETTINGS_OPT_RINGBUF_KB(&v.ringbuf_kb),
		SETTINGS_OPT_INTERVAL(&v.interval),
		SETTINGS_OPT_MAX_DEPTH(&v.max_depth),
		SETTINGS_OPT_CPU_BUDGET(&v.cpu_budget),
		SETTINGS_OPT_CONTROL_INTERVAL_S(&v.control_interval),
		SETTINGS_OPT_NO_THROTTLE(&v.no_throttle),
		SETTINGS_OPT_UNWIND(&v.unwind),
		SETTINGS_OPT_UNWIND_TABLE_MB(&v.table_mb),
		SETTINGS_OPT_PID(v.pids, &v.npids, NULL),
		SETTINGS_OPT_OTLP(&v.otlp, &v.otlp_enabled, &v.otlp_other),
		{.name = "size", .short_name = 'z', .kind = OPTION_SIZE, .dest = &v.size, .min = 0,
		 .max = 1e12, .flags = OPTION_ABOVE_MIN, .unit = " bytes"},
		{.name = "even", .kind = OPTION_INT, .dest = &v.even, .min = 0, .max = FUZZ_ODD_MAX,
		 .check = fuzz_check_even},
		{.name = "ratio", .short_name = 'r', .kind = OPTION_DOUBLE, .dest = &v.ratio, .min = 0,
		 .max = 1, .flags = OPTION_ABOVE_MIN, .what = "a fraction", .unit = " of it"},
		{.name = "path", .kind = OPTION_STRING, .dest = &v.label, .label = "path",
		 .expect = "an absolute path", .check = fuzz_check_label, .seen = &v.label_seen},
		{.name = "output", .short_name = 'o', .kind = OPTION_STRING, .dest = &v.output},
		{.name = "verbose", .short_name = 'v', .kind = OPTION_FLAG, .dest = &v.verbose},
		{.name = "help", .short_name = 'h', .kind = OPTION_FLAG, .dest = &v.help,
		 .flags = OPTION_STOP},
		{.name = NULL},
	};
	/* Mode byte: bit 0 allows operands, bit 1 puts a command word first. */
	const struct option_parser p = {.specs = specs, .first = (data[0] & 2) ? 2 : 1,
					.hint = " (fuzz)", .operands = (data[0] & 1) ? &operands : NULL};

	buf = malloc(size);
	if (buf == NULL)
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	argv[argc++] = "lowprof";
	if (p.first == 2)
		argv[argc++] = "record";
	for (i = 0, start = 0; i < size && argc < FUZZ_MAX_ARGS; i++) {
		if (buf[i] == '\0') {
			argv[argc++] = buf + start;
			start = i + 1;
			if (start >= size - 1)
				break;
		}
	}
	argv[argc] = NULL;
	err[0] = '\0';
	rc = option_table_parse(&p, argc, argv, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == OPTION_TABLE_STOP || rc == -EINVAL);
	if (rc == -EINVAL) {
		FUZZ_CHECK(err[0] != '\0');
		/* One line, unless it quotes an argument holding a newline. */
		FUZZ_CHECK(strchr(err, '\n') == NULL || memchr(data, '\n', size) != NULL);
		/* "unknown option 'X'" names the option, never the program name. */
		if (strncmp(err, "unknown option '", 16) == 0)
			FUZZ_CHECK(strncmp(err + 16, "lowprof'", 8) != 0 &&
				   strncmp(err + 16, "record'", 7) != 0);
	} else {
		fuzz_check_values(&v);
	}
	if (rc == 0 && p.operands != NULL)
		FUZZ_CHECK(operands >= p.first && operands <= argc);
	free(buf);
	return 0;
}
