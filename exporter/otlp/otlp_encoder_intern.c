/*
 * What the OTLP dictionary deduplicates beyond the model: strings (only those
 * referenced, so the table has no orphans), attributes (one entry per
 * distinct key/value/unit) and, once everything is interned, the string,
 * attribute, stack and link tables built from them. The stacks are interned
 * by otlp_encoder_samples.c; their key is the int32 location indices.
 *
 * Every string put on the wire is valid UTF-8: names come from untrusted
 * binaries and processes, and protobuf decoders (Go's, in the collector)
 * reject a proto3 string that is not. Invalid bytes become U+FFFD.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array_grow.h"
#include "exporter/otlp/otlp_encoder_internal.h"
#include "exporter/profile/profile.h"

static int otlp_scratch(struct otlp_build *b, size_t need)
{
	return array_grow((void **)&b->scratch, &b->scratch_cap, need, 1);
}

/* s as valid UTF-8: s itself, or a repaired copy in b->scratch; NULL on ENOMEM. */
const char *otlp_encoder_utf8(struct otlp_build *b, const char *s, size_t *lenp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), pos = 0, out = 0;

	while (pos < len) {
		size_t n = profile_utf8_len(u + pos, len - pos);

		if (n == 0)
			break;
		pos += n;
	}
	if (pos == len) {
		*lenp = len;
		return s;
	}
	/* Each bad byte becomes the 3-byte U+FFFD. */
	if (otlp_scratch(b, 3 * len + 1) != 0)
		return NULL;
	for (pos = 0; pos < len;) {
		size_t n = profile_utf8_len(u + pos, len - pos);

		if (n == 0) {
			memcpy(b->scratch + out, "\xef\xbf\xbd", 3);
			out += 3;
			pos++;
			continue;
		}
		memcpy(b->scratch + out, s + pos, n);
		out += n;
		pos += n;
	}
	b->scratch[out] = '\0';
	*lenp = out;
	return b->scratch;
}

int otlp_encoder_string(struct otlp_build *b, const char *s, int32_t *idx)
{
	const char *v;
	size_t len;
	uint32_t i;
	int ret;

	v = otlp_encoder_utf8(b, s != NULL ? s : "", &len);
	if (v == NULL)
		return -ENOMEM;
	ret = intern_add(&b->strings, v, len, &i);
	*idx = (int32_t)i;
	return ret;
}

int otlp_encoder_model_string(struct otlp_build *b, uint32_t model_idx, int32_t *idx)
{
	int ret;

	if (model_idx == 0 || model_idx >= profile_string_count(b->p)) {
		*idx = 0;
		return 0;
	}
	if (b->model_string[model_idx] != OTLP_UNSET) {
		*idx = (int32_t)b->model_string[model_idx];
		return 0;
	}
	ret = otlp_encoder_string(b, profile_string(b->p, model_idx), idx);
	if (ret == 0)
		b->model_string[model_idx] = (uint32_t)*idx;
	return ret;
}

/* Interns one attribute; key layout: type, key strindex, unit strindex, value. */
static int otlp_attribute_add(struct otlp_build *b, const char *key, const char *unit,
			      enum otlp_attr_type type, const char *sval, int64_t ival,
			      int32_t *idx)
{
	int32_t k, u = 0;
	const char *v = NULL;
	size_t vlen = 0, len;
	uint32_t i;
	int ret;

	ret = otlp_encoder_string(b, key, &k);
	if (ret == 0 && unit != NULL)
		ret = otlp_encoder_string(b, unit, &u);
	if (ret != 0)
		return ret;
	if (type == OTLP_ATTR_STRING) {
		v = otlp_encoder_utf8(b, sval, &vlen);
		if (v == NULL)
			return -ENOMEM;
	} else {
		v = (const char *)&ival;
		vlen = sizeof(ival);
	}
	/* v may live in the scratch buffer: build the key after it. */
	len = 1 + 2 * sizeof(int32_t) + vlen;
	if (v == b->scratch) {
		char *tmp = malloc(vlen);

		if (tmp == NULL)
			return -ENOMEM;
		memcpy(tmp, v, vlen);
		ret = otlp_scratch(b, len);
		if (ret == 0)
			memcpy(b->scratch + 1 + 2 * sizeof(int32_t), tmp, vlen);
		free(tmp);
	} else {
		ret = otlp_scratch(b, len);
		if (ret == 0)
			memcpy(b->scratch + 1 + 2 * sizeof(int32_t), v, vlen);
	}
	if (ret != 0)
		return ret;
	b->scratch[0] = (char)type;
	memcpy(b->scratch + 1, &k, sizeof(k));
	memcpy(b->scratch + 1 + sizeof(k), &u, sizeof(u));
	ret = intern_add(&b->attrs, b->scratch, len, &i);
	*idx = (int32_t)i;
	return ret;
}

int otlp_encoder_attribute_str(struct otlp_build *b, const char *key, const char *value,
			       int32_t *idx)
{
	return otlp_attribute_add(b, key, NULL, OTLP_ATTR_STRING, value, 0, idx);
}

int otlp_encoder_attribute_int(struct otlp_build *b, const char *key, const char *unit,
			       int64_t value, int32_t *idx)
{
	return otlp_attribute_add(b, key, unit, OTLP_ATTR_INT, NULL, value, idx);
}

/* The string, attribute, stack and link tables, once everything is interned. */
int otlp_encoder_build_dictionary_tables(struct otlp_build *b)
{
	size_t i;
	otlp_attribute *attrs = otlp_encoder_alloc(b, b->attrs.n, sizeof(*attrs));
	otlp_attribute **attr_ptrs = otlp_encoder_alloc(b, b->attrs.n, sizeof(*attr_ptrs));
	otlp_any_value *vals = otlp_encoder_alloc(b, b->attrs.n, sizeof(*vals));
	otlp_stack *stacks = otlp_encoder_alloc(b, b->stacks.n, sizeof(*stacks));
	otlp_stack **stack_ptrs = otlp_encoder_alloc(b, b->stacks.n, sizeof(*stack_ptrs));
	otlp_link *link = otlp_encoder_alloc(b, 1, sizeof(*link));
	otlp_link **link_ptrs = otlp_encoder_alloc(b, 1, sizeof(*link_ptrs));
	uint8_t *zero_ids = otlp_encoder_alloc(b, 16, 1);

	if (attrs == NULL || attr_ptrs == NULL || vals == NULL || stacks == NULL ||
	    stack_ptrs == NULL || link == NULL || link_ptrs == NULL || zero_ids == NULL)
		return -ENOMEM;
	for (i = 0; i < b->attrs.n; i++) {
		const char *key = b->attrs.keys[i];
		const size_t hdr = 1 + 2 * sizeof(int32_t);

		lowprof__otlp__key_value_and_unit__init(&attrs[i]);
		attr_ptrs[i] = &attrs[i];
		if (key[0] == OTLP_ATTR_ZERO)
			continue; /* index 0: KeyValueAndUnit{} */
		memcpy(&attrs[i].key_strindex, key + 1, sizeof(int32_t));
		memcpy(&attrs[i].unit_strindex, key + 1 + sizeof(int32_t), sizeof(int32_t));
		lowprof__otlp__any_value__init(&vals[i]);
		if (key[0] == OTLP_ATTR_STRING) {
			vals[i].value_case = LOWPROF__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
			vals[i].string_value = b->attrs.keys[i] + hdr; /* NUL-terminated copy */
		} else {
			vals[i].value_case = LOWPROF__OTLP__ANY_VALUE__VALUE_INT_VALUE;
			memcpy(&vals[i].int_value, key + hdr, sizeof(int64_t));
		}
		attrs[i].value = &vals[i];
	}
	for (i = 0; i < b->stacks.n; i++) {
		lowprof__otlp__stack__init(&stacks[i]);
		/* Interned copies are malloc'd, so aligned for int32_t. */
		stacks[i].location_indices = (int32_t *)(void *)b->stacks.keys[i];
		stacks[i].n_location_indices = b->stacks.lens[i] / sizeof(int32_t);
		stack_ptrs[i] = &stacks[i];
	}
	/* link_table[0]: zero-filled ids of the standard lengths, as the spec advises. */
	lowprof__otlp__link__init(link);
	link->trace_id.data = zero_ids;
	link->trace_id.len = 16;
	link->span_id.data = zero_ids;
	link->span_id.len = 8;
	link_ptrs[0] = link;

	b->dict.string_table = b->strings.keys;
	b->dict.n_string_table = b->strings.n;
	b->dict.attribute_table = attr_ptrs;
	b->dict.n_attribute_table = b->attrs.n;
	b->dict.stack_table = stack_ptrs;
	b->dict.n_stack_table = b->stacks.n;
	b->dict.link_table = link_ptrs;
	b->dict.n_link_table = 1;
	return 0;
}
