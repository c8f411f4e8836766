/*
 * The OTLP encoder's private state, shared by otlp_encoder.c (the request,
 * its resource and scope, packing), otlp_encoder_intern.c (strings,
 * attributes and the dictionary tables built from them),
 * otlp_encoder_locations.c (mappings, functions, locations) and
 * otlp_encoder_samples.c (samples and profiles). Nothing else includes it.
 *
 * The build order matters: every string and attribute must be interned
 * before otlp_encoder_build_dictionary_tables() copies the tables out.
 */
#ifndef LOWPROF_EXPORTER_OTLP_ENCODER_INTERNAL_H
#define LOWPROF_EXPORTER_OTLP_ENCODER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/intern.h"
#include "exporter/otlp/otlp_encoder.h"
#include "exporter/otlp/profiles.pb-c.h"

typedef Lowprof__Otlp__ExportProfilesServiceRequest otlp_request;
typedef Lowprof__Otlp__ProfilesDictionary otlp_dictionary;
typedef Lowprof__Otlp__ResourceProfiles otlp_resource_profiles;
typedef Lowprof__Otlp__ScopeProfiles otlp_scope_profiles;
typedef Lowprof__Otlp__InstrumentationScope otlp_scope;
typedef Lowprof__Otlp__Resource otlp_resource;
typedef Lowprof__Otlp__KeyValue otlp_key_value;
typedef Lowprof__Otlp__AnyValue otlp_any_value;
typedef Lowprof__Otlp__Profile otlp_profile;
typedef Lowprof__Otlp__ValueType otlp_value_type;
typedef Lowprof__Otlp__Sample otlp_sample;
typedef Lowprof__Otlp__Mapping otlp_mapping;
typedef Lowprof__Otlp__Location otlp_location;
typedef Lowprof__Otlp__Line otlp_line;
typedef Lowprof__Otlp__Function otlp_function;
typedef Lowprof__Otlp__Stack otlp_stack;
typedef Lowprof__Otlp__Link otlp_link;
typedef Lowprof__Otlp__KeyValueAndUnit otlp_attribute;

#define OTLP_UNSET UINT32_MAX

/* First byte of an interned attribute key; OTLP_ATTR_ZERO is the zero element. */
enum otlp_attr_type { OTLP_ATTR_ZERO, OTLP_ATTR_STRING, OTLP_ATTR_INT };

struct otlp_block {
	struct otlp_block *next;
	max_align_t data[];
};

struct otlp_build {
	const struct profile *p;
	const struct otlp_encoder_meta *meta;
	struct otlp_block *blocks;
	struct intern strings;
	struct intern attrs;   /* key: type byte, key and unit strindex, value */
	struct intern stacks;  /* key: int32 location indices */
	uint32_t *model_string;     /* model string index -> OTLP string index */
	char *scratch;              /* UTF-8 repair and attribute keys */
	size_t scratch_cap;
	uint32_t truncated_function; /* 0 when no stack is truncated */
	otlp_request req;
	otlp_dictionary dict;
};

/* otlp_encoder.c */

/* Zeroed memory that lives until the encode ends; NULL on out of memory. */
void *otlp_encoder_alloc(struct otlp_build *b, size_t n, size_t size);

/* otlp_encoder_intern.c; each returns 0 or -ENOMEM. */

/* s as valid UTF-8: s itself, or a repaired copy in b->scratch (valid until
 * the next call that uses the scratch buffer); NULL on ENOMEM. */
const char *otlp_encoder_utf8(struct otlp_build *b, const char *s, size_t *lenp);
/* *idx = string table index of s (NULL = ""), repaired to UTF-8. */
int otlp_encoder_string(struct otlp_build *b, const char *s, int32_t *idx);
/* *idx = string table index of the model's string model_idx (0 for none). */
int otlp_encoder_model_string(struct otlp_build *b, uint32_t model_idx, int32_t *idx);
/* *idx = attribute table index of key = value (value repaired to UTF-8). */
int otlp_encoder_attribute_str(struct otlp_build *b, const char *key, const char *value,
			       int32_t *idx);
/* The same with an integer value and a unit (NULL = none). */
int otlp_encoder_attribute_int(struct otlp_build *b, const char *key, const char *unit,
			       int64_t value, int32_t *idx);
int otlp_encoder_build_dictionary_tables(struct otlp_build *b);

/* otlp_encoder_locations.c: the mapping, function and location tables. */
int otlp_encoder_build_model_tables(struct otlp_build *b);

/* otlp_encoder_samples.c: the samples (interning their stacks) and both profiles. */
int otlp_encoder_build_profiles(struct otlp_build *b, otlp_scope_profiles *sp);

#endif
