/*
 * summary.json writer. Function names and comms come from untrusted binaries
 * and processes, so every string goes through summary_json_write_string().
 */
#include "exporter/formats/summary_json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "exporter/profile/profile.h"

static const char *const summary_base_keys[] = {
	"version", "duration_s", "start_unix_ns", "end_unix_ns", "samples", "cpu_ns",
	"lost_samples", "idle_samples", "dropped_samples", "stacks", "processes", "cut_stacks", "top",
};

/*
 * The samples whose user stack was cut early, by reason: the stacks of the
 * profile (the window) ending in a marker frame. {"samples": N, reason: n...},
 * every reason present, 0 when none.
 */
static void summary_cut_stacks(const struct profile *p, FILE *out)
{
	uint64_t by[PROFILE_STOP_REASONS] = {0}, total = 0;
	size_t n = profile_stack_count(p), i;
	unsigned r;

	for (i = 0; i < n; i++) {
		const struct profile_stack *st = profile_stack_at(p, i);

		if (st->nlocations == 0)
			continue;
		r = profile_stop_reason(p, profile_stack_function(p, st, 0, PROFILE_ROOT_FIRST));
		if (r != 0) {
			by[r] += st->count;
			total += st->count;
		}
	}
	fprintf(out, ", \"cut_stacks\": {\"samples\": %" PRIu64, total);
	for (r = 1; r < PROFILE_STOP_REASONS; r++)
		fprintf(out, ", \"%s\": %" PRIu64, profile_stop_keys[r], by[r]);
	fputs("}", out);
}

void summary_json_write_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str != NULL ? str : "");
	size_t left = strlen((const char *)s);

	putc('"', out);
	while (left > 0) {
		size_t n = profile_utf8_len(s, left);

		if (n == 0) {
			fputs("\\ufffd", out); /* an invalid byte: replaced, never passed on */
			n = 1;
		} else if (s[0] == '"') {
			fputs("\\\"", out);
		} else if (s[0] == '\\') {
			fputs("\\\\", out);
		} else if (s[0] == '\n') {
			fputs("\\n", out);
		} else if (s[0] == '\r') {
			fputs("\\r", out);
		} else if (s[0] == '\t') {
			fputs("\\t", out);
		} else if (s[0] < 0x20 || s[0] == 0x7f) {
			fprintf(out, "\\u%04x", s[0]);
		} else {
			fwrite(s, 1, n, out);
		}
		s += n;
		left -= n;
	}
	putc('"', out);
}

static int summary_check_extras(const struct summary_info *info)
{
	size_t i, k;

	for (i = 0; i < info->nextras; i++) {
		const struct summary_extra *e = &info->extras[i];

		if (e->key == NULL || e->key[0] == '\0' || e->raw_json == NULL ||
		    e->raw_json[strspn(e->raw_json, " \t\r\n")] == '\0')
			return -EINVAL;
		for (k = 0; k < sizeof(summary_base_keys) / sizeof(summary_base_keys[0]); k++) {
			if (strcmp(e->key, summary_base_keys[k]) == 0)
				return -EINVAL;
		}
		for (k = 0; k < i; k++) {
			if (strcmp(e->key, info->extras[k].key) == 0)
				return -EINVAL;
		}
	}
	return 0;
}

/* JSON has no NaN or infinity. */
static double summary_finite(double v)
{
	return isfinite(v) ? v : 0.0;
}

int summary_json_write(const struct profile *p, const struct summary_info *info, FILE *out)
{
	struct summary_info none = { 0 };
	struct profile_top_entry top[SUMMARY_JSON_TOP];
	struct profile_totals tot;
	uint64_t start, end;
	double duration;
	size_t ntop, i;
	int ret;

	if (info == NULL)
		info = &none;
	if (info->nextras > 0 && info->extras == NULL)
		return -EINVAL;
	ret = summary_check_extras(info);
	if (ret != 0)
		return ret;
	profile_get_totals(p, &tot);
	profile_get_time(p, &start, &end);
	duration = info->duration_s;
	if (!(duration > 0))
		duration = end > start ? (double)(end - start) / 1e9 : 0.0;
	ntop = profile_top_functions(p, SUMMARY_JSON_TOP, top);

	fprintf(out, "{\"version\": %d, \"duration_s\": %.3f", SUMMARY_JSON_VERSION,
		summary_finite(duration));
	fprintf(out, ", \"start_unix_ns\": %" PRIu64 ", \"end_unix_ns\": %" PRIu64, start, end);
	fprintf(out, ", \"samples\": %" PRIu64 ", \"cpu_ns\": %" PRIu64, tot.samples, tot.cpu_ns);
	fprintf(out, ", \"lost_samples\": %" PRIu64 ", \"idle_samples\": %" PRIu64,
		info->lost_samples, info->idle_samples);
	fprintf(out, ", \"dropped_samples\": %" PRIu64 ", \"stacks\": %zu, \"processes\": %zu",
		tot.dropped_samples, tot.stacks, tot.pids);
	summary_cut_stacks(p, out);
	fputs(",\n \"top\": [", out);
	for (i = 0; i < ntop; i++) {
		fputs(i ? ",\n  {\"function\": " : "\n  {\"function\": ", out);
		summary_json_write_string(out, top[i].name);
		fputs(", \"module\": ", out);
		summary_json_write_string(out, top[i].module);
		fprintf(out, ", \"kernel\": %s, \"self_pct\": %.2f, \"samples\": %" PRIu64 "}",
			top[i].kernel ? "true" : "false", summary_finite(top[i].self_pct),
			top[i].self_samples);
	}
	fputs("]", out);
	for (i = 0; i < info->nextras; i++) {
		fputs(",\n ", out);
		summary_json_write_string(out, info->extras[i].key);
		fprintf(out, ": %s", info->extras[i].raw_json);
	}
	fputs("}\n", out);
	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}
