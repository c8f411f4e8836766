/*
 * pprof encoder: the model's tables map one to one onto pprof's (ids are
 * index + 1), so the only work is building the protobuf-c message, packing it
 * and gzipping it onto the stream.
 */
#include "exporter/formats/pprof_writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/errbuf.h"
#include "exporter/formats/output_file.h"
#include "exporter/formats/pprof.pb-c.h"
#include "exporter/profile/profile.h"

typedef Perftools__Profiles__Profile pprof_profile;
typedef Perftools__Profiles__ValueType pprof_value_type;
typedef Perftools__Profiles__Sample pprof_sample;
typedef Perftools__Profiles__Label pprof_label;
typedef Perftools__Profiles__Mapping pprof_mapping;
typedef Perftools__Profiles__Location pprof_location;
typedef Perftools__Profiles__Line pprof_line;
typedef Perftools__Profiles__Function pprof_function;

/* Strings the encoder needs beyond the model's own. */
enum pprof_extra {
	PPROF_S_SAMPLES,
	PPROF_S_COUNT,
	PPROF_S_CPU,
	PPROF_S_NANOSECONDS,
	PPROF_S_PID,
	PPROF_S_TID,
	PPROF_S_COMM,
	PPROF_S_TRUNCATED,
	PPROF_S_MAIN_MAPPING,
	PPROF_S_N,
};

static const char *const pprof_extra_names[PPROF_S_N] = {
	"samples", "count", "cpu", "nanoseconds", "pid", "tid", "comm", PROFILE_TRUNCATED_NAME,
	PROFILE_MAIN_MAPPING_NAME,
};

/* Everything allocated for one encode; freed on the single cleanup path. */
struct pprof_build {
	pprof_profile msg;
	const char *names[PPROF_S_N];
	pprof_value_type sample_types[2];
	pprof_value_type *sample_type_ptrs[2];
	pprof_value_type period_type;
	int64_t extra[PPROF_S_N];
	char **strings;
	pprof_mapping *mappings;
	pprof_mapping **mapping_ptrs;
	pprof_function *functions;
	pprof_function **function_ptrs;
	pprof_location *locations;
	pprof_location **location_ptrs;
	pprof_line *lines;
	pprof_line **line_ptrs;
	pprof_sample *samples;
	pprof_sample **sample_ptrs;
	pprof_label *labels;
	pprof_label **label_ptrs;
	uint64_t *loc_ids;
	int64_t *values;
	uint8_t *packed;
};

static int pprof_build_strings(struct pprof_build *b, const struct profile *p)
{
	size_t n = profile_string_count(p), i;

	b->strings = calloc(n + PPROF_S_N, sizeof(*b->strings));
	if (b->strings == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		b->strings[i] = (char *)profile_string(p, (uint32_t)i); /* packed, never written */
	for (i = 0; i < PPROF_S_N; i++) {
		uint32_t idx;

		if (profile_string_lookup(p, b->names[i], &idx)) {
			b->extra[i] = idx;
			continue;
		}
		b->strings[n] = (char *)b->names[i];
		b->extra[i] = (int64_t)n++;
	}
	b->msg.string_table = b->strings;
	b->msg.n_string_table = n;
	return 0;
}

/* Mapping ids: 1 is PROFILE_MAIN_MAPPING_NAME, the model's mapping i is i + 2. */
static int pprof_build_mappings(struct pprof_build *b, const struct profile *p)
{
	size_t n = profile_mapping_count(p), i;

	b->mappings = calloc(n + 1, sizeof(*b->mappings));
	b->mapping_ptrs = calloc(n + 1, sizeof(*b->mapping_ptrs));
	if (b->mappings == NULL || b->mapping_ptrs == NULL)
		return -ENOMEM;
	perftools__profiles__mapping__init(&b->mappings[0]);
	b->mappings[0].id = 1;
	b->mappings[0].filename = b->extra[PPROF_S_MAIN_MAPPING];
	b->mappings[0].has_functions = true;
	b->mapping_ptrs[0] = &b->mappings[0];
	for (i = 0; i < n; i++) {
		const struct profile_mapping *m = profile_mapping_at(p, (uint32_t)i);
		pprof_mapping *pm = &b->mappings[i + 1];

		perftools__profiles__mapping__init(pm);
		pm->id = i + 2;
		pm->filename = m->filename;
		pm->build_id = m->build_id;
		pm->memory_start = m->memory_start;
		pm->memory_limit = m->memory_limit;
		pm->file_offset = m->file_offset;
		/* Names come symbolized: stop pprof from looking for the binaries. */
		pm->has_functions = true;
		b->mapping_ptrs[i + 1] = pm;
	}
	b->msg.mapping = b->mapping_ptrs;
	b->msg.n_mapping = n + 1;
	return 0;
}

static void pprof_init_function(pprof_function *pf, uint64_t id, int64_t name, int64_t file)
{
	perftools__profiles__function__init(pf);
	pf->id = id;
	pf->name = name;
	pf->system_name = name;
	pf->filename = file;
}

static int pprof_build_functions(struct pprof_build *b, const struct profile *p)
{
	size_t n = profile_function_count(p), i;

	/* One more for the "[truncated]" pseudo-function. */
	b->functions = calloc(n + 1, sizeof(*b->functions));
	b->function_ptrs = calloc(n + 1, sizeof(*b->function_ptrs));
	if (b->functions == NULL || b->function_ptrs == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct profile_function *f = profile_function_at(p, (uint32_t)i);

		pprof_init_function(&b->functions[i], i + 1, f->name, f->filename);
		b->functions[i].system_name = f->system_name;
		b->function_ptrs[i] = &b->functions[i];
	}
	pprof_init_function(&b->functions[n], n + 1, b->extra[PPROF_S_TRUNCATED], 0);
	b->function_ptrs[n] = &b->functions[n];
	b->msg.function = b->function_ptrs;
	b->msg.n_function = n + 1;
	return 0;
}

/* The mapping is shared by every process that maps the file, so the address is
 * rebased onto the mapping's recorded bounds to keep address - memory_start +
 * file_offset equal to the frame's file offset. */
static uint64_t pprof_location_address(const struct profile *p, const struct profile_location *l)
{
	const struct profile_mapping *m;
	uint64_t span;

	if (l->kernel || l->mapping == PROFILE_NO_MAPPING)
		return l->address;
	m = profile_mapping_at(p, l->mapping);
	if (m->memory_limit <= m->memory_start || l->module_offset < m->file_offset)
		return l->address;
	span = m->memory_limit - m->memory_start;
	if (l->module_offset - m->file_offset >= span)
		return l->address;
	return m->memory_start + (l->module_offset - m->file_offset);
}

static int pprof_build_locations(struct pprof_build *b, const struct profile *p)
{
	size_t n = profile_location_count(p), nfunc = profile_function_count(p), i;

	b->locations = calloc(n + 1, sizeof(*b->locations));
	b->location_ptrs = calloc(n + 1, sizeof(*b->location_ptrs));
	b->lines = calloc(n + 1, sizeof(*b->lines));
	b->line_ptrs = calloc(n + 1, sizeof(*b->line_ptrs));
	if (b->locations == NULL || b->location_ptrs == NULL || b->lines == NULL ||
	    b->line_ptrs == NULL)
		return -ENOMEM;
	for (i = 0; i <= n; i++) {
		pprof_location *pl = &b->locations[i];
		pprof_line *line = &b->lines[i];

		perftools__profiles__location__init(pl);
		perftools__profiles__line__init(line);
		pl->id = i + 1;
		if (i < n) {
			const struct profile_location *l = profile_location_at(p, (uint32_t)i);

			pl->mapping_id = l->mapping == PROFILE_NO_MAPPING ? 0 : (uint64_t)l->mapping + 2;
			pl->address = pprof_location_address(p, l);
			line->function_id = (uint64_t)l->function + 1;
		} else {
			line->function_id = nfunc + 1; /* [truncated], no mapping */
		}
		b->line_ptrs[i] = line;
		pl->line = &b->line_ptrs[i];
		pl->n_line = 1;
		b->location_ptrs[i] = pl;
	}
	b->msg.location = b->location_ptrs;
	b->msg.n_location = n + 1;
	return 0;
}

static int pprof_build_samples(struct pprof_build *b, const struct profile *p)
{
	size_t n = profile_stack_count(p), nloc = profile_location_count(p), i, ids = 0;
	uint64_t truncated_id = nloc + 1;

	for (i = 0; i < n; i++) {
		const struct profile_stack *s = profile_stack_at(p, i);

		ids += s->nlocations + (s->truncated ? 1 : 0);
	}
	b->samples = calloc(n + 1, sizeof(*b->samples));
	b->sample_ptrs = calloc(n + 1, sizeof(*b->sample_ptrs));
	b->labels = calloc(3 * n + 1, sizeof(*b->labels));
	b->label_ptrs = calloc(3 * n + 1, sizeof(*b->label_ptrs));
	b->loc_ids = calloc(ids + 1, sizeof(*b->loc_ids));
	b->values = calloc(2 * n + 1, sizeof(*b->values));
	if (b->samples == NULL || b->sample_ptrs == NULL || b->labels == NULL ||
	    b->label_ptrs == NULL || b->loc_ids == NULL || b->values == NULL)
		return -ENOMEM;
	ids = 0;
	for (i = 0; i < n; i++) {
		const struct profile_stack *s = profile_stack_at(p, i);
		const uint32_t *locs = profile_stack_locations(p, s);
		pprof_sample *ps = &b->samples[i];
		pprof_label *lab = &b->labels[3 * i];
		size_t nlab = 0;
		uint32_t k;

		perftools__profiles__sample__init(ps);
		ps->location_id = &b->loc_ids[ids];
		for (k = 0; k < s->nlocations; k++)
			b->loc_ids[ids++] = (uint64_t)locs[k] + 1;
		if (s->truncated)
			b->loc_ids[ids++] = truncated_id;
		ps->n_location_id = s->nlocations + (s->truncated ? 1 : 0);
		b->values[2 * i] = (int64_t)s->count;
		b->values[2 * i + 1] = (int64_t)s->cpu_ns;
		ps->value = &b->values[2 * i];
		ps->n_value = 2;

		/* Processes gone, folded by comm: no pid to give. */
		if (s->pid != PROFILE_PID_GONE) {
			perftools__profiles__label__init(&lab[nlab]);
			lab[nlab].key = b->extra[PPROF_S_PID];
			lab[nlab++].num = s->pid;
		}
		if (s->tid != 0) {
			perftools__profiles__label__init(&lab[nlab]);
			lab[nlab].key = b->extra[PPROF_S_TID];
			lab[nlab++].num = s->tid;
		}
		perftools__profiles__label__init(&lab[nlab]);
		lab[nlab].key = b->extra[PPROF_S_COMM];
		lab[nlab++].str = s->comm;
		for (k = 0; k < nlab; k++)
			b->label_ptrs[3 * i + k] = &lab[k];
		ps->label = &b->label_ptrs[3 * i];
		ps->n_label = nlab;
		b->sample_ptrs[i] = ps;
	}
	b->msg.sample = b->sample_ptrs;
	b->msg.n_sample = n;
	return 0;
}

static void pprof_build_header(struct pprof_build *b, const struct profile *p)
{
	uint64_t start, end;

	perftools__profiles__value_type__init(&b->sample_types[0]);
	b->sample_types[0].type = b->extra[PPROF_S_SAMPLES];
	b->sample_types[0].unit = b->extra[PPROF_S_COUNT];
	perftools__profiles__value_type__init(&b->sample_types[1]);
	b->sample_types[1].type = b->extra[PPROF_S_CPU];
	b->sample_types[1].unit = b->extra[PPROF_S_NANOSECONDS];
	b->sample_type_ptrs[0] = &b->sample_types[0];
	b->sample_type_ptrs[1] = &b->sample_types[1];
	b->msg.sample_type = b->sample_type_ptrs;
	b->msg.n_sample_type = 2;
	b->msg.default_sample_type = b->extra[PPROF_S_CPU];

	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = b->extra[PPROF_S_CPU];
	b->period_type.unit = b->extra[PPROF_S_NANOSECONDS];
	b->msg.period_type = &b->period_type;
	b->msg.period = (int64_t)profile_period_ns(p);

	profile_get_time(p, &start, &end);
	b->msg.time_nanos = (int64_t)start;
	b->msg.duration_nanos = end > start ? (int64_t)(end - start) : 0;
}

static int pprof_gzip(const uint8_t *buf, size_t len, FILE *out, char *err, size_t errlen)
{
	z_stream zs;
	unsigned char chunk[16384];
	size_t left = len;
	int zr, flush, ret = 0;

	memset(&zs, 0, sizeof(zs));
	/* windowBits 15 + 16 asks zlib for a gzip header and trailer. The
	 * fastest level, as Go's runtime/pprof writes its profiles: the file is
	 * rewritten every --interval inside the CPU budget, and against the
	 * default level 6 this halves a full window's write (15 -> 8 ms in
	 * lowprof-window-churn) for a file 8% larger (38.7 KB against 35.9). */
	zr = deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (zr != Z_OK) {
		errbuf_set(err, errlen, "pprof: deflateInit2: %d", zr);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)buf;
	do {
		/* avail_in is a uInt: feed large buffers in pieces. */
		if (zs.avail_in == 0 && left > 0) {
			uInt take = left > (1u << 30) ? (1u << 30) : (uInt)left;

			zs.avail_in = take;
			left -= take;
		}
		flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
		do {
			size_t have;

			zs.next_out = chunk;
			zs.avail_out = sizeof(chunk);
			zr = deflate(&zs, flush);
			if (zr == Z_STREAM_ERROR) {
				errbuf_set(err, errlen, "pprof: deflate failed");
				ret = -EIO;
				goto cleanup;
			}
			have = sizeof(chunk) - zs.avail_out;
			if (fwrite(chunk, 1, have, out) != have) {
				ret = errno ? -errno : -EIO;
				errbuf_set(err, errlen, "pprof: write: %s", strerror(-ret));
				goto cleanup;
			}
		} while (zs.avail_out == 0);
	} while (flush != Z_FINISH);
cleanup:
	deflateEnd(&zs);
	return ret;
}

int pprof_write(const struct profile *p, FILE *out, char *err, size_t errlen)
{
	return pprof_write_types(p, NULL, out, err, errlen);
}

int pprof_write_types(const struct profile *p, const struct pprof_sample_types *types, FILE *out,
		      char *err, size_t errlen)
{
	struct pprof_build b;
	size_t len;
	int ret;

	memset(&b, 0, sizeof(b));
	memcpy(b.names, pprof_extra_names, sizeof(b.names));
	if (types != NULL) {
		b.names[PPROF_S_SAMPLES] = types->count_type;
		b.names[PPROF_S_COUNT] = types->count_unit;
		b.names[PPROF_S_CPU] = types->value_type;
		b.names[PPROF_S_NANOSECONDS] = types->value_unit;
	}
	perftools__profiles__profile__init(&b.msg);
	ret = pprof_build_strings(&b, p);
	if (ret == 0)
		ret = pprof_build_mappings(&b, p);
	if (ret == 0)
		ret = pprof_build_functions(&b, p);
	if (ret == 0)
		ret = pprof_build_locations(&b, p);
	if (ret == 0)
		ret = pprof_build_samples(&b, p);
	if (ret != 0) {
		errbuf_set(err, errlen, "pprof: out of memory building the message");
		goto cleanup;
	}
	pprof_build_header(&b, p);

	len = perftools__profiles__profile__get_packed_size(&b.msg);
	b.packed = malloc(len ? len : 1);
	if (b.packed == NULL) {
		errbuf_set(err, errlen, "pprof: out of memory for %zu packed bytes", len);
		ret = -ENOMEM;
		goto cleanup;
	}
	if (perftools__profiles__profile__pack(&b.msg, b.packed) != len) {
		errbuf_set(err, errlen, "pprof: packed size mismatch");
		ret = -EIO;
		goto cleanup;
	}
	ret = pprof_gzip(b.packed, len, out, err, errlen);
	if (ret == 0 && (fflush(out) != 0 || ferror(out))) {
		ret = errno ? -errno : -EIO;
		errbuf_set(err, errlen, "pprof: write: %s", strerror(-ret));
	}
cleanup:
	free(b.strings);
	free(b.mappings);
	free(b.mapping_ptrs);
	free(b.functions);
	free(b.function_ptrs);
	free(b.locations);
	free(b.location_ptrs);
	free(b.lines);
	free(b.line_ptrs);
	free(b.samples);
	free(b.sample_ptrs);
	free(b.labels);
	free(b.label_ptrs);
	free(b.loc_ids);
	free(b.values);
	free(b.packed);
	return ret;
}

struct pprof_file_job {
	const struct profile *p;
	char err[256];
};

static int pprof_file_writer(FILE *out, void *arg)
{
	struct pprof_file_job *job = arg;

	return pprof_write(job->p, out, job->err, sizeof(job->err));
}

int pprof_write_file(int dirfd, const char *name, const struct profile *p, char *err,
		     size_t errlen)
{
	struct pprof_file_job job = {.p = p};
	int rc = output_file_write_atomic(dirfd, name, pprof_file_writer, &job, err, errlen);

	/* The encoder's own reason says more than "writing NAME failed". */
	if (rc != 0 && job.err[0] != '\0')
		errbuf_set(err, errlen, "%s: %s", name, job.err);
	return rc;
}
