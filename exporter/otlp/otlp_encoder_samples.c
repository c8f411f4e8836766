/*
 * The samples and the two profiles over them (samples/count and
 * cpu/nanoseconds: v1development allows one sample_type per Profile), or the
 * one off_cpu/nanoseconds profile of an off-CPU model. Each
 * model stack becomes one sample per profile, sharing the stack and the
 * attributes; the model keys stacks by pid and comm as well, OTLP by
 * locations only, so stacks of different processes running the same code
 * share one stack table entry.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "exporter/otlp/otlp_encoder_internal.h"
#include "exporter/otlp/process_info.h"
#include "exporter/profile/profile.h"

#define OTLP_NPROFILES 2        /* samples/count and cpu/nanoseconds */
_Static_assert(OTLP_NPROFILES * 16 == OTLP_ENCODER_PROFILE_IDS_LEN, "one 16-byte id per profile");
#define OTLP_MAX_SAMPLE_ATTRS 6

/* The per-sample attributes of one model stack; returns how many in idx[]. */
static int otlp_sample_attributes(struct otlp_build *b, const struct profile_stack *s,
				  int32_t *idx, size_t *nidx)
{
	const struct process_info *pi = NULL;
	const char *comm = profile_string(b->p, s->comm);
	const char *exe_name = comm;
	size_t n = 0;
	int ret;

	if (b->meta->procs != NULL && s->pid != 0 && s->pid != PROFILE_PID_GONE)
		pi = process_info_lookup(b->meta->procs, s->pid);
	if (pi != NULL && pi->exe_name[0] != '\0')
		exe_name = pi->exe_name;
	/* Processes gone, folded by comm (a reloaded window's): no pid. */
	ret = 0;
	if (s->pid != PROFILE_PID_GONE)
		ret = otlp_encoder_attribute_int(b, "process.pid", NULL, s->pid, &idx[n++]);
	if (ret == 0 && exe_name[0] != '\0')
		ret = otlp_encoder_attribute_str(b, "process.executable.name", exe_name, &idx[n++]);
	if (ret == 0 && pi != NULL && pi->exe_path[0] != '\0')
		ret = otlp_encoder_attribute_str(b, "process.executable.path", pi->exe_path,
						 &idx[n++]);
	/* tid 0: the model merged samples of several threads of this process. */
	if (ret == 0 && s->tid != 0)
		ret = otlp_encoder_attribute_int(b, "thread.id", NULL, s->tid, &idx[n++]);
	if (ret == 0 && comm[0] != '\0')
		ret = otlp_encoder_attribute_str(b, "thread.name", comm, &idx[n++]);
	if (ret == 0 && pi != NULL && pi->container_id[0] != '\0')
		ret = otlp_encoder_attribute_str(b, "container.id", pi->container_id, &idx[n++]);
	*nidx = n;
	return ret;
}

static int otlp_build_samples(struct otlp_build *b, otlp_sample ***out, int64_t **values)
{
	size_t n = profile_stack_count(b->p), i, maxlen = 1;
	uint32_t trunc_loc = (uint32_t)profile_location_count(b->p) + 1;
	otlp_sample *samples = otlp_encoder_alloc(b, OTLP_NPROFILES * n + 1, sizeof(*samples));
	int32_t *attrs = otlp_encoder_alloc(b, OTLP_MAX_SAMPLE_ATTRS * n + 1, sizeof(*attrs));
	int32_t *locs;
	int ret;

	out[0] = otlp_encoder_alloc(b, n + 1, sizeof(*out[0]));
	out[1] = otlp_encoder_alloc(b, n + 1, sizeof(*out[1]));
	values[0] = otlp_encoder_alloc(b, n + 1, sizeof(*values[0]));
	values[1] = otlp_encoder_alloc(b, n + 1, sizeof(*values[1]));
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
		ret = intern_add(&b->stacks, locs, nloc * sizeof(*locs), &stack);
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

static int otlp_make_value_type(struct otlp_build *b, otlp_value_type **vt, const char *type,
			   const char *unit)
{
	int ret;

	*vt = otlp_encoder_alloc(b, 1, sizeof(**vt));
	if (*vt == NULL)
		return -ENOMEM;
	lowprof__otlp__value_type__init(*vt);
	ret = otlp_encoder_string(b, type, &(*vt)->type_strindex);
	if (ret == 0)
		ret = otlp_encoder_string(b, unit, &(*vt)->unit_strindex);
	return ret;
}

int otlp_encoder_build_profiles(struct otlp_build *b, otlp_scope_profiles *sp)
{
	static const char *const types[OTLP_NPROFILES][2] = {
		{ "samples", "count" }, { "cpu", "nanoseconds" },
	};
	/* Off-CPU: the time profile alone (its count is microseconds, no sample count). */
	static const char *const offcpu_type[2] = { "off_cpu", "nanoseconds" };
	const bool off = b->meta->off_cpu;
	const size_t nprof = off ? 1 : OTLP_NPROFILES;
	otlp_profile *profs = otlp_encoder_alloc(b, OTLP_NPROFILES, sizeof(*profs));
	otlp_profile **ptrs = otlp_encoder_alloc(b, OTLP_NPROFILES, sizeof(*ptrs));
	int32_t *pattrs = otlp_encoder_alloc(b, 3, sizeof(*pattrs));
	uint8_t *ids = otlp_encoder_alloc(b, OTLP_NPROFILES, 16);
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
		ret = otlp_make_value_type(b, &period_type, off ? offcpu_type[0] : "cpu", "nanoseconds");
	if (ret == 0 && b->meta->tier != NULL && b->meta->tier[0] != '\0')
		ret = otlp_encoder_attribute_str(b, "lowprof.throttle.tier", b->meta->tier,
						 &pattrs[npattrs++]);
	if (ret == 0 && b->meta->frequency_hz != 0)
		ret = otlp_encoder_attribute_int(b, "lowprof.sampling.frequency", "Hz",
						 b->meta->frequency_hz, &pattrs[npattrs++]);
	if (ret == 0 && off && b->meta->offcpu_prob_ppm != 0)
		ret = otlp_encoder_attribute_int(b, "lowprof.offcpu.probability", "ppm",
						 b->meta->offcpu_prob_ppm, &pattrs[npattrs++]);
	if (ret != 0)
		return ret;
	/* A random id lets a backend drop a payload delivered twice (a retry after
	 * a response lost on the way); without one the field stays empty. */
	if (b->meta->profile_ids != NULL)
		memcpy(ids, b->meta->profile_ids, OTLP_NPROFILES * 16);
	else if (getrandom(ids, OTLP_NPROFILES * 16, GRND_NONBLOCK) != OTLP_NPROFILES * 16)
		ids = NULL;
	profile_get_time(b->p, &start, &end);
	for (i = 0; i < nprof && ret == 0; i++) {
		otlp_profile *op = &profs[i];
		const char *const *ty = off ? offcpu_type : types[i];

		lowprof__otlp__profile__init(op);
		ret = otlp_make_value_type(b, &op->sample_type, ty[0], ty[1]);
		/* Off-CPU values are the time (the model's cpu_ns): the second array. */
		op->samples = samples[off ? 1 : i];
		op->n_samples = profile_stack_count(b->p);
		op->time_unix_nano = start;
		op->duration_nano = end > start ? end - start : 0;
		op->period_type = period_type;
		/* Blocked periods are measured, not sampled at a period. */
		op->period = off ? 0 : (int64_t)profile_period_ns(b->p);
		if (ids != NULL) {
			op->profile_id.data = ids + 16 * i;
			op->profile_id.len = 16;
		}
		op->attribute_indices = pattrs;
		op->n_attribute_indices = npattrs;
		ptrs[i] = op;
	}
	sp->profiles = ptrs;
	sp->n_profiles = nprof;
	return ret;
}
