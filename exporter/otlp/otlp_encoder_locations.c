/*
 * The mapping, function and location tables. The model's tables are already
 * deduplicated, so they map one to one (OTLP index = model index + 1, the
 * zero element taking index 0); a stack cut short ends in one extra
 * location of an extra "[truncated]" function.
 */
#include <errno.h>
#include <stdbool.h>

#include "exporter/otlp/otlp_encoder_internal.h"
#include "exporter/profile/profile.h"

static int otlp_build_mappings(struct otlp_build *b)
{
	size_t n = profile_mapping_count(b->p), i;
	otlp_mapping *maps = otlp_encoder_alloc(b, n + 1, sizeof(*maps));
	otlp_mapping **ptrs = otlp_encoder_alloc(b, n + 1, sizeof(*ptrs));
	int32_t *attrs = otlp_encoder_alloc(b, n + 1, sizeof(*attrs));
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
		ret = otlp_encoder_model_string(b, m->filename, &om->filename_strindex);
		if (ret != 0)
			return ret;
		if (m->build_id != 0 && profile_string(b->p, m->build_id)[0] != '\0') {
			/* Semantic conventions: the GNU build-id note, as lowercase hex. */
			ret = otlp_encoder_attribute_str(b, "process.executable.build_id.gnu",
							 profile_string(b->p, m->build_id),
							 &attrs[i]);
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

static bool otlp_any_truncated(const struct profile *p)
{
	size_t n = profile_stack_count(p), i;

	for (i = 0; i < n; i++) {
		if (profile_stack_at(p, i)->truncated)
			return true;
	}
	return false;
}

static int otlp_build_functions(struct otlp_build *b, bool any_truncated)
{
	size_t n = profile_function_count(b->p), i, total = n + 1 + (any_truncated ? 1 : 0);
	otlp_function *fns = otlp_encoder_alloc(b, total, sizeof(*fns));
	otlp_function **ptrs = otlp_encoder_alloc(b, total, sizeof(*ptrs));
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

		ret = otlp_encoder_model_string(b, f->name, &of->name_strindex);
		if (ret == 0)
			ret = otlp_encoder_model_string(b, f->system_name,
								&of->system_name_strindex);
		/* The model's function filename is the module, not a source file, but the
		 * same name in two modules (clock_gettime in libc and the vDSO) is two
		 * functions: without it the table would hold duplicates. */
		if (ret == 0)
			ret = otlp_encoder_model_string(b, f->filename, &of->filename_strindex);
	}
	if (ret == 0 && any_truncated) {
		b->truncated_function = (uint32_t)(n + 1);
		ret = otlp_encoder_string(b, PROFILE_TRUNCATED_NAME, &fns[n + 1].name_strindex);
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
	otlp_location *locs = otlp_encoder_alloc(b, total, sizeof(*locs));
	otlp_location **ptrs = otlp_encoder_alloc(b, total, sizeof(*ptrs));
	otlp_line *lines = otlp_encoder_alloc(b, total, sizeof(*lines));
	otlp_line **line_ptrs = otlp_encoder_alloc(b, total, sizeof(*line_ptrs));
	int32_t *kind = otlp_encoder_alloc(b, 2, sizeof(*kind)); /* native, kernel */
	int ret;

	if (locs == NULL || ptrs == NULL || lines == NULL || line_ptrs == NULL || kind == NULL)
		return -ENOMEM;
	ret = otlp_encoder_attribute_str(b, "profile.frame.type", "native", &kind[0]);
	if (ret == 0)
		ret = otlp_encoder_attribute_str(b, "profile.frame.type", "kernel", &kind[1]);
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

int otlp_encoder_build_model_tables(struct otlp_build *b)
{
	int ret;

	ret = otlp_build_mappings(b);
	if (ret == 0)
		ret = otlp_build_functions(b, otlp_any_truncated(b->p));
	/* After the functions: the locations need truncated_function. */
	if (ret == 0)
		ret = otlp_build_locations(b);
	return ret;
}
