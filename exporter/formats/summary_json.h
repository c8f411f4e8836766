/*
 * summary.json: one JSON object describing a profile for people and scripts:
 *
 *   {"version": 1, "duration_s": D, "start_unix_ns": N, "end_unix_ns": N,
 *    "samples": N, "cpu_ns": N, "lost_samples": N, "idle_samples": N,
 *    "dropped_samples": N, "stacks": N, "processes": N,
 *    "top": [{"function": S, "module": S, "kernel": B, "self_pct": P,
 *             "samples": N}, ... up to 10],
 *    EXTRA_KEY: EXTRA_RAW_JSON, ...}
 *
 * Strings are escaped per RFC 8259: quote, backslash and control characters
 * escaped, valid UTF-8 passed through, each invalid byte replaced by U+FFFD.
 */
#ifndef LOWPROF_EXPORTER_SUMMARY_JSON_H
#define LOWPROF_EXPORTER_SUMMARY_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;

#define SUMMARY_JSON_VERSION 1
#define SUMMARY_JSON_TOP 10

/* A caller-provided member: raw_json is copied verbatim and must be one valid
 * JSON value (object, array, number...); the key must not be a base key. */
struct summary_extra {
	const char *key;
	const char *raw_json;
};

/* What the model does not know. */
struct summary_info {
	double duration_s;      /* <= 0: taken from the profile's time span */
	uint64_t lost_samples;  /* ring-buffer drops and the like */
	uint64_t idle_samples;
	const struct summary_extra *extras;
	size_t nextras;
};

/* info may be NULL. Returns 0, -EINVAL (bad extra: NULL or empty key/value,
 * or a key the base object already has), -ENOMEM, or -EIO on a stream error. */
int summary_json_write(const struct profile *p, const struct summary_info *info, FILE *out);

/* s as a JSON string literal, quotes included (also used for extra keys). */
void summary_json_write_string(FILE *out, const char *s);

#endif
