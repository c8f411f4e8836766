/*
 * OTLP encoder. The model's tables are already deduplicated, so mappings,
 * functions and locations map one to one (OTLP index = model index + 1, the
 * zero element taking index 0). What OTLP adds is deduplicated here: strings
 * (only those referenced, so the table has no orphans), attributes (one entry
 * per distinct key/value/unit), and stacks (the model keys stacks by pid and
 * comm as well; OTLP keys them by locations only, so stacks of different
 * processes running the same code share one entry).
 *
 * Every string put on the wire is valid UTF-8: names come from untrusted
 * binaries and processes, and protobuf decoders (Go's, in the collector)
 * reject a proto3 string that is not. Invalid bytes become U+FFFD.
 *
 * Allocation: everything one encode needs comes from a list of blocks freed on
 * the single cleanup path.
 */
#include "exporter/otlp_encoder.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>

#include "exporter/otlp/otlp_intern.h"
#include "exporter/otlp/profiles.pb-c.h"
#include "exporter/process_info.h"
#include "exporter/profile.h"
#include "lowprof_build_config.h"

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
#define OTLP_NPROFILES 2        /* samples/count and cpu/nanoseconds */
#define OTLP_MAX_SAMPLE_ATTRS 6
#define OTLP_RESOURCE_ATTRS 3

enum otlp_attr_type { OTLP_ATTR_ZERO, OTLP_ATTR_STRING, OTLP_ATTR_INT };

struct otlp_block {
	struct otlp_block *next;
	max_align_t data[];
};

struct otlp_build {
	const struct profile *p;
	const struct otlp_encoder_meta *meta;
	struct otlp_block *blocks;
	struct otlp_intern strings;
	struct otlp_intern attrs;   /* key: type byte, key and unit strindex, value */
	struct otlp_intern stacks;  /* key: int32 location indices */
	uint32_t *model_string;     /* model string index -> OTLP string index */
	char *scratch;              /* UTF-8 repair and attribute keys */
	size_t scratch_cap;
	uint32_t truncated_function; /* 0 when no stack is truncated */
	otlp_request req;
	otlp_dictionary dict;
};

static void otlp_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Zeroed memory that lives until the encode ends; NULL on out of memory. */
static void *otlp_alloc(struct otlp_build *b, size_t n, size_t size)
{
	struct otlp_block *blk;

	if (size != 0 && n > (SIZE_MAX - sizeof(*blk)) / size)
		return NULL;
	blk = calloc(1, sizeof(*blk) + n * size);
	if (blk == NULL)
		return NULL;
	blk->next = b->blocks;
	b->blocks = blk;
	return blk->data;
}

static int otlp_scratch(struct otlp_build *b, size_t need)
{
	char *s;

	if (need <= b->scratch_cap)
		return 0;
	s = realloc(b->scratch, need);
	if (s == NULL)
		return -ENOMEM;
	b->scratch = s;
	b->scratch_cap = need;
	return 0;
}

/* s as valid UTF-8: s itself, or a repaired copy in b->scratch; NULL on ENOMEM. */
static const char *otlp_utf8(struct otlp_build *b, const char *s, size_t *lenp)
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

static int otlp_string(struct otlp_build *b, const char *s, int32_t *idx)
{
	const char *v;
	size_t len;
	uint32_t i;
	int ret;

	v = otlp_utf8(b, s != NULL ? s : "", &len);
	if (v == NULL)
		return -ENOMEM;
	ret = otlp_intern_add(&b->strings, v, len, &i);
	*idx = (int32_t)i;
	return ret;
}

static int otlp_model_string(struct otlp_build *b, uint32_t model_idx, int32_t *idx)
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
	ret = otlp_string(b, profile_string(b->p, model_idx), idx);
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

	ret = otlp_string(b, key, &k);
	if (ret == 0 && unit != NULL)
		ret = otlp_string(b, unit, &u);
	if (ret != 0)
		return ret;
	if (type == OTLP_ATTR_STRING) {
		v = otlp_utf8(b, sval, &vlen);
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
	ret = otlp_intern_add(&b->attrs, b->scratch, len, &i);
	*idx = (int32_t)i;
	return ret;
}

static int otlp_attribute_str(struct otlp_build *b, const char *key, const char *value, int32_t *idx)
{
	return otlp_attribute_add(b, key, NULL, OTLP_ATTR_STRING, value, 0, idx);
}

static int otlp_attribute_int(struct otlp_build *b, const char *key, const char *unit,
			      int64_t value, int32_t *idx)
{
	return otlp_attribute_add(b, key, unit, OTLP_ATTR_INT, NULL, value, idx);
}

static int otlp_build_mappings(struct otlp_build *b)
{
	size_t n = profile_mapping_count(b->p), i;
	otlp_mapping *maps = otlp_alloc(b, n + 1, sizeof(*maps));
	otlp_mapping **ptrs = otlp_alloc(b, n + 1, sizeof(*ptrs));
	int32_t *attrs = otlp_alloc(b, n + 1, sizeof(*attrs));
	int ret;

	if (maps == NULL || ptrs == NULL || attrs == NULL)
		return -ENOMEM;
	lowprof__otlp__mapping__init(&maps[0]);
	ptrs[0] = &maps[0];
	for (i = 0; i < n; i++) {
		const struct profile_mapping *m = profile_mapping_at(b->p, (uint32_t)i);
		otlp_mapping *om = &maps[i + 1];

		lowprof__otlp__mapping__init(om);
		om->memory_start = m->memory_start;
		om->memory_limit = m->memory_limit;
		om->file_offset = m->file_offset;
		ret = otlp_model_string(b, m->filename, &om->filename_strindex);
		if (ret != 0)
			return ret;
		if (m->build_id != 0 && profile_string(b->p, m->build_id)[0] != '\0') {
			/* Semantic conventions: the GNU build-id note, as lowercase hex. */
			ret = otlp_attribute_str(b, "process.executable.build_id.gnu",
						 profile_string(b->p, m->build_id), &attrs[i]);
			if (ret != 0)
				return ret;
			om->attribute_indices = &attrs[i];
			om->n_attribute_indices = 1;
		}
		ptrs[i + 1] = om;
	}
	b->dict.mapping_table = ptrs;
	b->dict.n_mapping_table = n + 1;
	return 0;
}

static int otlp_build_functions(struct otlp_build *b, bool any_truncated)
{
	size_t n = profile_function_count(b->p), i, total = n + 1 + (any_truncated ? 1 : 0);
	otlp_function *fns = otlp_alloc(b, total, sizeof(*fns));
	otlp_function **ptrs = otlp_alloc(b, total, sizeof(*ptrs));
	int ret = 0;

	if (fns == NULL || ptrs == NULL)
		return -ENOMEM;
	for (i = 0; i < total; i++) {
		lowprof__otlp__function__init(&fns[i]);
		ptrs[i] = &fns[i];
	}
	for (i = 0; i < n && ret == 0; i++) {
		const struct profile_function *f = profile_function_at(b->p, (uint32_t)i);
		otlp_function *of = &fns[i + 1];

		ret = otlp_model_string(b, f->name, &of->name_strindex);
		if (ret == 0)
			ret = otlp_model_string(b, f->system_name, &of->system_name_strindex);
		/* The model's function filename is the module, not a source file, but the
		 * same name in two modules (clock_gettime in libc and the vDSO) is two
		 * functions: without it the table would hold duplicates. */
		if (ret == 0)
			ret = otlp_model_string(b, f->filename, &of->filename_strindex);
	}
	if (ret == 0 && any_truncated) {
		b->truncated_function = (uint32_t)(n + 1);
		ret = otlp_string(b, PROFILE_TRUNCATED_NAME, &fns[n + 1].name_strindex);
		fns[n + 1].system_name_strindex = fns[n + 1].name_strindex;
	}
	b->dict.function_table = ptrs;
	b->dict.n_function_table = total;
	return ret;
}

/* As in the pprof encoder: rebase the address onto the mapping's recorded
 * bounds, since one mapping stands for the file in every process. */
static uint64_t otlp_location_address(const struct profile *p, const struct profile_location *l)
{
	const struct profile_mapping *m;

	if (l->kernel || l->mapping == PROFILE_NO_MAPPING)
		return l->address;
	m = profile_mapping_at(p, l->mapping);
	if (m->memory_limit <= m->memory_start || l->module_offset < m->file_offset ||
	    l->module_offset - m->file_offset >= m->memory_limit - m->memory_start)
		return l->address;
	return m->memory_start + (l->module_offset - m->file_offset);
}

static int otlp_build_locations(struct otlp_build *b)
{
	size_t n = profile_location_count(b->p), i;
	size_t total = n + 1 + (b->truncated_function != 0 ? 1 : 0);
	otlp_location *locs = otlp_alloc(b, total, sizeof(*locs));
	otlp_location **ptrs = otlp_alloc(b, total, sizeof(*ptrs));
	otlp_line *lines = otlp_alloc(b, total, sizeof(*lines));
	otlp_line **line_ptrs = otlp_alloc(b, total, sizeof(*line_ptrs));
	int32_t *kind = otlp_alloc(b, 2, sizeof(*kind)); /* native, kernel */
	int ret;

	if (locs == NULL || ptrs == NULL || lines == NULL || line_ptrs == NULL || kind == NULL)
		return -ENOMEM;
	ret = otlp_attribute_str(b, "profile.frame.type", "native", &kind[0]);
	if (ret == 0)
		ret = otlp_attribute_str(b, "profile.frame.type", "kernel", &kind[1]);
	if (ret != 0)
		return ret;
	for (i = 0; i < total; i++) {
		lowprof__otlp__location__init(&locs[i]);
		ptrs[i] = &locs[i];
		if (i == 0)
			continue; /* the zero element: no line */
		lowprof__otlp__line__init(&lines[i]);
		line_ptrs[i] = &lines[i];
		locs[i].lines = &line_ptrs[i];
		locs[i].n_lines = 1;
		if (i <= n) {
			const struct profile_location *l = profile_location_at(b->p, (uint32_t)(i - 1));

			locs[i].mapping_index = l->mapping == PROFILE_NO_MAPPING ? 0 : (int32_t)l->mapping + 1;
			locs[i].address = otlp_location_address(b->p, l);
			lines[i].function_index = (int32_t)l->function + 1;
			locs[i].attribute_indices = &kind[l->kernel ? 1 : 0];
			locs[i].n_attribute_indices = 1;
		} else {
			lines[i].function_index = (int32_t)b->truncated_function;
		}
	}
	b->dict.location_table = ptrs;
	b->dict.n_location_table = total;
	return 0;
}

/* The per-sample attributes of one model stack; returns how many in idx[]. */
static int otlp_sample_attributes(struct otlp_build *b, const struct profile_stack *s,
				  int32_t *idx, size_t *nidx)
{
	const struct process_info *pi = NULL;
	const char *comm = profile_string(b->p, s->comm);
	const char *exe_name = comm;
	size_t n = 0;
	int ret;

	if (b->meta->procs != NULL && s->pid != 0)
		pi = process_info_lookup(b->meta->procs, s->pid);
	if (pi != NULL && pi->exe_name[0] != '\0')
		exe_name = pi->exe_name;
	ret = otlp_attribute_int(b, "process.pid", NULL, s->pid, &idx[n++]);
	if (ret == 0 && exe_name[0] != '\0')
		ret = otlp_attribute_str(b, "process.executable.name", exe_name, &idx[n++]);
	if (ret == 0 && pi != NULL && pi->exe_path[0] != '\0')
		ret = otlp_attribute_str(b, "process.executable.path", pi->exe_path, &idx[n++]);
	/* tid 0: the model merged samples of several threads of this process. */
	if (ret == 0 && s->tid != 0)
		ret = otlp_attribute_int(b, "thread.id", NULL, s->tid, &idx[n++]);
	if (ret == 0 && comm[0] != '\0')
		ret = otlp_attribute_str(b, "thread.name", comm, &idx[n++]);
	if (ret == 0 && pi != NULL && pi->container_id[0] != '\0')
		ret = otlp_attribute_str(b, "container.id", pi->container_id, &idx[n++]);
	*nidx = n;
	return ret;
}

static int otlp_build_samples(struct otlp_build *b, otlp_sample ***out, int64_t **values)
{
	size_t n = profile_stack_count(b->p), i, maxlen = 1;
	uint32_t trunc_loc = (uint32_t)profile_location_count(b->p) + 1;
	otlp_sample *samples = otlp_alloc(b, OTLP_NPROFILES * n + 1, sizeof(*samples));
	int32_t *attrs = otlp_alloc(b, OTLP_MAX_SAMPLE_ATTRS * n + 1, sizeof(*attrs));
	int32_t *locs;
	int ret;

	out[0] = otlp_alloc(b, n + 1, sizeof(*out[0]));
	out[1] = otlp_alloc(b, n + 1, sizeof(*out[1]));
	values[0] = otlp_alloc(b, n + 1, sizeof(*values[0]));
	values[1] = otlp_alloc(b, n + 1, sizeof(*values[1]));
	if (samples == NULL || attrs == NULL || out[0] == NULL || out[1] == NULL ||
	    values[0] == NULL || values[1] == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct profile_stack *s = profile_stack_at(b->p, i);

		if (s->nlocations + 1 > maxlen)
			maxlen = s->nlocations + 1;
	}
	locs = malloc(maxlen * sizeof(*locs));
	if (locs == NULL)
		return -ENOMEM;
	ret = 0;
	for (i = 0; i < n && ret == 0; i++) {
		const struct profile_stack *s = profile_stack_at(b->p, i);
		const uint32_t *ml = profile_stack_locations(b->p, s);
		otlp_sample *s0 = &samples[2 * i], *s1 = &samples[2 * i + 1];
		size_t nloc = 0, nattr = 0;
		uint32_t k, stack = 0;

		for (k = 0; k < s->nlocations; k++)
			locs[nloc++] = (int32_t)ml[k] + 1; /* leaf first, as OTLP wants */
		if (s->truncated)
			locs[nloc++] = (int32_t)trunc_loc;
		ret = otlp_intern_add(&b->stacks, locs, nloc * sizeof(*locs), &stack);
		if (ret == 0)
			ret = otlp_sample_attributes(b, s, &attrs[OTLP_MAX_SAMPLE_ATTRS * i], &nattr);
		lowprof__otlp__sample__init(s0);
		s0->stack_index = (int32_t)stack;
		s0->attribute_indices = &attrs[OTLP_MAX_SAMPLE_ATTRS * i];
		s0->n_attribute_indices = nattr;
		*s1 = *s0;
		values[0][i] = (int64_t)s->count;
		values[1][i] = (int64_t)s->cpu_ns;
		s0->values = &values[0][i];
		s0->n_values = 1;
		s1->values = &values[1][i];
		s1->n_values = 1;
		out[0][i] = s0;
		out[1][i] = s1;
	}
	free(locs);
	return ret;
}

/* The string, attribute and stack tables, once everything is interned. */
static int otlp_build_dictionary_tables(struct otlp_build *b)
{
	size_t i;
	otlp_attribute *attrs = otlp_alloc(b, b->attrs.n, sizeof(*attrs));
	otlp_attribute **attr_ptrs = otlp_alloc(b, b->attrs.n, sizeof(*attr_ptrs));
	otlp_any_value *vals = otlp_alloc(b, b->attrs.n, sizeof(*vals));
	otlp_stack *stacks = otlp_alloc(b, b->stacks.n, sizeof(*stacks));
	otlp_stack **stack_ptrs = otlp_alloc(b, b->stacks.n, sizeof(*stack_ptrs));
	otlp_link *link = otlp_alloc(b, 1, sizeof(*link));
	otlp_link **link_ptrs = otlp_alloc(b, 1, sizeof(*link_ptrs));
	uint8_t *zero_ids = otlp_alloc(b, 16, 1);

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

static int otlp_make_value_type(struct otlp_build *b, otlp_value_type **vt, const char *type,
			   const char *unit)
{
	int ret;

	*vt = otlp_alloc(b, 1, sizeof(**vt));
	if (*vt == NULL)
		return -ENOMEM;
	lowprof__otlp__value_type__init(*vt);
	ret = otlp_string(b, type, &(*vt)->type_strindex);
	if (ret == 0)
		ret = otlp_string(b, unit, &(*vt)->unit_strindex);
	return ret;
}

static int otlp_build_profiles(struct otlp_build *b, otlp_scope_profiles *sp)
{
	static const char *const types[OTLP_NPROFILES][2] = {
		{ "samples", "count" }, { "cpu", "nanoseconds" },
	};
	otlp_profile *profs = otlp_alloc(b, OTLP_NPROFILES, sizeof(*profs));
	otlp_profile **ptrs = otlp_alloc(b, OTLP_NPROFILES, sizeof(*ptrs));
	int32_t *pattrs = otlp_alloc(b, 2, sizeof(*pattrs));
	uint8_t *ids = otlp_alloc(b, OTLP_NPROFILES, 16);
	otlp_sample **samples[OTLP_NPROFILES];
	int64_t *values[OTLP_NPROFILES];
	otlp_value_type *period_type;
	size_t npattrs = 0, i;
	uint64_t start, end;
	int ret;

	if (profs == NULL || ptrs == NULL || pattrs == NULL || ids == NULL)
		return -ENOMEM;
	ret = otlp_build_samples(b, samples, values);
	if (ret == 0)
		ret = otlp_make_value_type(b, &period_type, "cpu", "nanoseconds");
	if (ret == 0 && b->meta->tier != NULL && b->meta->tier[0] != '\0')
		ret = otlp_attribute_str(b, "lowprof.throttle.tier", b->meta->tier, &pattrs[npattrs++]);
	if (ret == 0 && b->meta->frequency_hz != 0)
		ret = otlp_attribute_int(b, "lowprof.sampling.frequency", "Hz",
					 b->meta->frequency_hz, &pattrs[npattrs++]);
	if (ret != 0)
		return ret;
	/* A random id lets a backend drop a payload delivered twice (a retry after
	 * a response lost on the way); without one the field stays empty. */
	if (getrandom(ids, OTLP_NPROFILES * 16, GRND_NONBLOCK) != OTLP_NPROFILES * 16)
		ids = NULL;
	profile_get_time(b->p, &start, &end);
	for (i = 0; i < OTLP_NPROFILES && ret == 0; i++) {
		otlp_profile *op = &profs[i];

		lowprof__otlp__profile__init(op);
		ret = otlp_make_value_type(b, &op->sample_type, types[i][0], types[i][1]);
		op->samples = samples[i];
		op->n_samples = profile_stack_count(b->p);
		op->time_unix_nano = start;
		op->duration_nano = end > start ? end - start : 0;
		op->period_type = period_type;
		op->period = (int64_t)profile_period_ns(b->p);
		if (ids != NULL) {
			op->profile_id.data = ids + 16 * i;
			op->profile_id.len = 16;
		}
		op->attribute_indices = pattrs;
		op->n_attribute_indices = npattrs;
		ptrs[i] = op;
	}
	sp->profiles = ptrs;
	sp->n_profiles = OTLP_NPROFILES;
	return ret;
}

/* A resource or scope KeyValue with a string value (inline key, not strindex:
 * these messages are shared with the other OTLP signals). */
static int otlp_make_key_value(struct otlp_build *b, otlp_key_value *kv, const char *key,
			  const char *value)
{
	otlp_any_value *v = otlp_alloc(b, 1, sizeof(*v));
	const char *s;
	char *copy;
	size_t len;

	if (v == NULL)
		return -ENOMEM;
	s = otlp_utf8(b, value, &len);
	copy = s != NULL ? otlp_alloc(b, len + 1, 1) : NULL;
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, s, len);
	lowprof__otlp__key_value__init(kv);
	lowprof__otlp__any_value__init(v);
	kv->key = (char *)key; /* static strings, only read by pack */
	v->value_case = LOWPROF__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = copy;
	kv->value = v;
	return 0;
}

static int otlp_build_resource(struct otlp_build *b, otlp_resource_profiles *rp,
			       otlp_scope_profiles *sp)
{
	const char *keys[OTLP_RESOURCE_ATTRS] = { "host.name", "host.arch", "os.type" };
	const char *vals[OTLP_RESOURCE_ATTRS] = { b->meta->host_name, b->meta->host_arch,
						  b->meta->os_type };
	otlp_resource *res = otlp_alloc(b, 1, sizeof(*res));
	otlp_key_value *kvs = otlp_alloc(b, OTLP_RESOURCE_ATTRS, sizeof(*kvs));
	otlp_key_value **kv_ptrs = otlp_alloc(b, OTLP_RESOURCE_ATTRS, sizeof(*kv_ptrs));
	otlp_scope *scope = otlp_alloc(b, 1, sizeof(*scope));
	size_t i, n = 0;
	int ret = 0;

	if (res == NULL || kvs == NULL || kv_ptrs == NULL || scope == NULL)
		return -ENOMEM;
	lowprof__otlp__resource__init(res);
	for (i = 0; i < OTLP_RESOURCE_ATTRS && ret == 0; i++) {
		if (vals[i] == NULL || vals[i][0] == '\0')
			continue;
		ret = otlp_make_key_value(b, &kvs[n], keys[i], vals[i]);
		kv_ptrs[n] = &kvs[n];
		n++;
	}
	res->attributes = kv_ptrs;
	res->n_attributes = n;
	rp->resource = res;

	lowprof__otlp__instrumentation_scope__init(scope);
	scope->name = "lowprof";
	scope->version = (char *)(b->meta->scope_version != NULL ? b->meta->scope_version : "");
	sp->scope = scope;
	return ret;
}

void otlp_encoder_meta_defaults(struct otlp_encoder_meta *meta,
				char host_name_buf[OTLP_ENCODER_HOST_NAME_MAX])
{
	struct utsname u;

	memset(meta, 0, sizeof(*meta));
	host_name_buf[0] = '\0';
	meta->host_arch = "";
	if (uname(&u) == 0) {
		snprintf(host_name_buf, OTLP_ENCODER_HOST_NAME_MAX, "%s", u.nodename);
		/* host.arch uses the semantic conventions' names, not uname's. */
		if (strcmp(u.machine, "x86_64") == 0)
			meta->host_arch = "amd64";
		else if (strcmp(u.machine, "aarch64") == 0)
			meta->host_arch = "arm64";
		else if (strcmp(u.machine, "i686") == 0 || strcmp(u.machine, "i386") == 0)
			meta->host_arch = "x86";
		else if (strncmp(u.machine, "arm", 3) == 0)
			meta->host_arch = "arm32";
		else if (strcmp(u.machine, "ppc64le") == 0)
			meta->host_arch = "ppc64";
		else if (strcmp(u.machine, "s390x") == 0)
			meta->host_arch = "s390x";
	}
	meta->host_name = host_name_buf;
	meta->os_type = "linux";
	meta->scope_version = LOWPROF_VERSION;
	meta->tier = "healthy";
}

static bool otlp_any_truncated(const struct profile *p)
{
	size_t n = profile_stack_count(p), i;

	for (i = 0; i < n; i++) {
		if (profile_stack_at(p, i)->truncated)
			return true;
	}
	return false;
}

int otlp_encoder_encode(const struct profile *p, const struct otlp_encoder_meta *meta,
			uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	struct otlp_build b;
	otlp_resource_profiles rp;
	otlp_resource_profiles *rp_ptr = &rp;
	otlp_scope_profiles sp;
	otlp_scope_profiles *sp_ptr = &sp;
	size_t nstr = profile_string_count(p), len, i;
	uint32_t zero;
	uint8_t *buf = NULL;
	int ret;

	*out = NULL;
	*outlen = 0;
	memset(&b, 0, sizeof(b));
	b.p = p;
	b.meta = meta;
	lowprof__otlp__export_profiles_service_request__init(&b.req);
	lowprof__otlp__profiles_dictionary__init(&b.dict);
	lowprof__otlp__resource_profiles__init(&rp);
	lowprof__otlp__scope_profiles__init(&sp);
	b.model_string = malloc((nstr + 1) * sizeof(*b.model_string));
	ret = b.model_string != NULL ? 0 : -ENOMEM;
	for (i = 0; i < nstr && ret == 0; i++)
		b.model_string[i] = OTLP_UNSET;
	/* The zero elements take index 0 of the interned tables. */
	if (ret == 0)
		ret = otlp_intern_add(&b.strings, "", 0, &zero);
	if (ret == 0)
		ret = otlp_intern_add(&b.attrs, "\0", 1, &zero);
	if (ret == 0)
		ret = otlp_intern_add(&b.stacks, "", 0, &zero);
	if (ret == 0)
		ret = otlp_build_mappings(&b);
	if (ret == 0)
		ret = otlp_build_functions(&b, otlp_any_truncated(p));
	if (ret == 0)
		ret = otlp_build_locations(&b);
	if (ret == 0)
		ret = otlp_build_profiles(&b, &sp);
	if (ret == 0)
		ret = otlp_build_resource(&b, &rp, &sp);
	if (ret == 0)
		ret = otlp_build_dictionary_tables(&b);
	if (ret != 0) {
		otlp_seterr(err, errlen, "otlp: out of memory building the request");
		goto cleanup;
	}
	rp.scope_profiles = &sp_ptr;
	rp.n_scope_profiles = 1;
	b.req.resource_profiles = &rp_ptr;
	b.req.n_resource_profiles = 1;
	b.req.dictionary = &b.dict;

	len = lowprof__otlp__export_profiles_service_request__get_packed_size(&b.req);
	buf = malloc(len ? len : 1);
	if (buf == NULL) {
		otlp_seterr(err, errlen, "otlp: out of memory for %zu packed bytes", len);
		ret = -ENOMEM;
		goto cleanup;
	}
	if (lowprof__otlp__export_profiles_service_request__pack(&b.req, buf) != len) {
		otlp_seterr(err, errlen, "otlp: packed size mismatch");
		ret = -EIO;
		goto cleanup;
	}
	*out = buf;
	*outlen = len;
	buf = NULL;
cleanup:
	free(buf);
	while (b.blocks != NULL) {
		struct otlp_block *next = b.blocks->next;

		free(b.blocks);
		b.blocks = next;
	}
	otlp_intern_free(&b.strings);
	otlp_intern_free(&b.attrs);
	otlp_intern_free(&b.stacks);
	free(b.model_string);
	free(b.scratch);
	return ret;
}
