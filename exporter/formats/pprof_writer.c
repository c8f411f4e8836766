/*
 * pprof encoder: the model's tables map one to one onto pprof's (ids are
 * index + 1), so the only work is building the protobuf-c message, packing it
 * and gzipping it onto the stream, piece by piece (pprof_gz_message).
 */
#include "exporter/formats/pprof_writer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/errbuf.h"
#include "exporter/formats/held_file.h"
#include "exporter/formats/output_file.h"
#include "exporter/formats/pprof.pb-c.h"
#include "exporter/formats/pprof_reader.h"
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

/*
 * One encode. The message goes out piece by piece (pprof_gz below): each
 * piece's elements are built into these arrays, packed, compressed, and the
 * arrays reused for the next. Built whole, a full window's message touched
 * megabytes of fresh memory at every write (page faults: most of the
 * encoder's time on a VM) and was one stretch of CPU before the first byte.
 */
#define PPROF_PIECE_ITEMS 256
#define PPROF_SAMPLE_LABELS 3 /* pid, tid, comm */

struct pprof_build {
	const struct profile *p;
	const char *names[PPROF_S_N];
	int64_t extra[PPROF_S_N];        /* string index of each name */
	const char *appended[PPROF_S_N]; /* names the model's table lacks, after it */
	size_t nappended, nmodel_strings;
	pprof_value_type sample_types[2];
	pprof_value_type *sample_type_ptrs[2];
	pprof_value_type period_type;
	char *string_ptrs[PPROF_PIECE_ITEMS];
	pprof_mapping mappings[PPROF_PIECE_ITEMS];
	pprof_mapping *mapping_ptrs[PPROF_PIECE_ITEMS];
	pprof_function functions[PPROF_PIECE_ITEMS];
	pprof_function *function_ptrs[PPROF_PIECE_ITEMS];
	pprof_location locations[PPROF_PIECE_ITEMS];
	pprof_location *location_ptrs[PPROF_PIECE_ITEMS];
	pprof_line lines[PPROF_PIECE_ITEMS];
	pprof_line *line_ptrs[PPROF_PIECE_ITEMS];
	pprof_sample samples[PPROF_PIECE_ITEMS];
	pprof_sample *sample_ptrs[PPROF_PIECE_ITEMS];
	pprof_label labels[PPROF_SAMPLE_LABELS * PPROF_PIECE_ITEMS];
	pprof_label *label_ptrs[PPROF_SAMPLE_LABELS * PPROF_PIECE_ITEMS];
	int64_t values[2 * PPROF_PIECE_ITEMS];
	uint64_t *loc_ids; /* one piece's samples' location ids */
	size_t loc_ids_cap;
};

/* The names' string indices: the model's own where it has them, else
 * appended after its table. */
static void pprof_plan_strings(struct pprof_build *b)
{
	size_t n = profile_string_count(b->p), i;

	b->nmodel_strings = n;
	for (i = 0; i < PPROF_S_N; i++) {
		uint32_t idx;

		if (profile_string_lookup(b->p, b->names[i], &idx)) {
			b->extra[i] = idx;
			continue;
		}
		b->appended[b->nappended++] = b->names[i];
		b->extra[i] = (int64_t)n++;
	}
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

/* Strings [at, at + k): the model's table, then the appended names. */
static void pprof_piece_strings(struct pprof_build *b, pprof_profile *part, size_t at, size_t k)
{
	size_t i;

	for (i = 0; i < k; i++) {
		size_t s = at + i;

		/* packed, never written */
		b->string_ptrs[i] = s < b->nmodel_strings ? (char *)profile_string(b->p, (uint32_t)s)
							  : (char *)b->appended[s - b->nmodel_strings];
	}
	part->string_table = b->string_ptrs;
	part->n_string_table = k;
}

/* Mappings [at, at + k): id 1 is PROFILE_MAIN_MAPPING_NAME, the model's
 * mapping j is j + 2. */
static void pprof_piece_mappings(struct pprof_build *b, pprof_profile *part, size_t at, size_t k)
{
	size_t i;

	for (i = 0; i < k; i++) {
		pprof_mapping *pm = &b->mappings[i];

		perftools__profiles__mapping__init(pm);
		/* Names come symbolized: stop pprof from looking for the binaries. */
		pm->has_functions = true;
		if (at + i == 0) {
			pm->id = 1;
			pm->filename = b->extra[PPROF_S_MAIN_MAPPING];
		} else {
			const struct profile_mapping *m = profile_mapping_at(b->p, (uint32_t)(at + i - 1));

			pm->id = at + i + 1;
			pm->filename = m->filename;
			pm->build_id = m->build_id;
			pm->memory_start = m->memory_start;
			pm->memory_limit = m->memory_limit;
			pm->file_offset = m->file_offset;
		}
		b->mapping_ptrs[i] = pm;
	}
	part->mapping = b->mapping_ptrs;
	part->n_mapping = k;
}

static void pprof_init_function(pprof_function *pf, uint64_t id, int64_t name, int64_t file)
{
	perftools__profiles__function__init(pf);
	pf->id = id;
	pf->name = name;
	pf->system_name = name;
	pf->filename = file;
}

/* Functions [at, at + k): the model's, then the "[truncated]" pseudo-function. */
static void pprof_piece_functions(struct pprof_build *b, pprof_profile *part, size_t at, size_t k)
{
	size_t n = profile_function_count(b->p), i;

	for (i = 0; i < k; i++) {
		size_t f = at + i;

		if (f < n) {
			const struct profile_function *pf = profile_function_at(b->p, (uint32_t)f);

			pprof_init_function(&b->functions[i], f + 1, pf->name, pf->filename);
			b->functions[i].system_name = pf->system_name;
		} else {
			pprof_init_function(&b->functions[i], f + 1, b->extra[PPROF_S_TRUNCATED], 0);
		}
		b->function_ptrs[i] = &b->functions[i];
	}
	part->function = b->function_ptrs;
	part->n_function = k;
}

/* Locations [at, at + k): the model's, then the "[truncated]" one (no mapping). */
static void pprof_piece_locations(struct pprof_build *b, pprof_profile *part, size_t at, size_t k)
{
	size_t n = profile_location_count(b->p), nfunc = profile_function_count(b->p), i;

	for (i = 0; i < k; i++) {
		pprof_location *pl = &b->locations[i];
		pprof_line *line = &b->lines[i];
		size_t l = at + i;

		perftools__profiles__location__init(pl);
		perftools__profiles__line__init(line);
		pl->id = l + 1;
		if (l < n) {
			const struct profile_location *loc = profile_location_at(b->p, (uint32_t)l);

			pl->mapping_id = loc->mapping == PROFILE_NO_MAPPING ? 0 : (uint64_t)loc->mapping + 2;
			pl->address = pprof_location_address(b->p, loc);
			line->function_id = (uint64_t)loc->function + 1;
		} else {
			line->function_id = nfunc + 1;
		}
		b->line_ptrs[i] = line;
		pl->line = &b->line_ptrs[i];
		pl->n_line = 1;
		b->location_ptrs[i] = pl;
	}
	part->location = b->location_ptrs;
	part->n_location = k;
}

/* Samples [at, at + k). 0 or -ENOMEM. */
static int pprof_piece_samples(struct pprof_build *b, pprof_profile *part, size_t at, size_t k)
{
	uint64_t truncated_id = profile_location_count(b->p) + 1;
	size_t i, ids = 0;

	for (i = 0; i < k; i++) {
		const struct profile_stack *s = profile_stack_at(b->p, at + i);

		ids += s->nlocations + (s->truncated ? 1 : 0);
	}
	/* At least one: a piece of stacks without locations still points somewhere. */
	if (ids + 1 > b->loc_ids_cap) {
		uint64_t *n = realloc(b->loc_ids, (ids + 1) * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		b->loc_ids = n;
		b->loc_ids_cap = ids + 1;
	}
	ids = 0;
	for (i = 0; i < k; i++) {
		const struct profile_stack *s = profile_stack_at(b->p, at + i);
		const uint32_t *locs = profile_stack_locations(b->p, s);
		pprof_sample *ps = &b->samples[i];
		pprof_label *lab = &b->labels[PPROF_SAMPLE_LABELS * i];
		size_t nlab = 0;
		uint32_t j;

		perftools__profiles__sample__init(ps);
		ps->location_id = &b->loc_ids[ids];
		for (j = 0; j < s->nlocations; j++)
			b->loc_ids[ids++] = (uint64_t)locs[j] + 1;
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
		for (j = 0; j < nlab; j++)
			b->label_ptrs[PPROF_SAMPLE_LABELS * i + j] = &lab[j];
		ps->label = &b->label_ptrs[PPROF_SAMPLE_LABELS * i];
		ps->n_label = nlab;
		b->sample_ptrs[i] = ps;
	}
	part->sample = b->sample_ptrs;
	part->n_sample = k;
	return 0;
}

/* The fields past string_table: the period type, the times, the default type. */
static void pprof_piece_tail(struct pprof_build *b, pprof_profile *part)
{
	uint64_t start, end;

	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = b->extra[PPROF_S_CPU];
	b->period_type.unit = b->extra[PPROF_S_NANOSECONDS];
	part->period_type = &b->period_type;
	part->period = (int64_t)profile_period_ns(b->p);
	profile_get_time(b->p, &start, &end);
	part->time_nanos = (int64_t)start;
	part->duration_nanos = end > start ? (int64_t)(end - start) : 0;
	part->default_sample_type = b->extra[PPROF_S_CPU];
}

static void pprof_piece_sample_types(struct pprof_build *b, pprof_profile *part)
{
	perftools__profiles__value_type__init(&b->sample_types[0]);
	b->sample_types[0].type = b->extra[PPROF_S_SAMPLES];
	b->sample_types[0].unit = b->extra[PPROF_S_COUNT];
	perftools__profiles__value_type__init(&b->sample_types[1]);
	b->sample_types[1].type = b->extra[PPROF_S_CPU];
	b->sample_types[1].unit = b->extra[PPROF_S_NANOSECONDS];
	b->sample_type_ptrs[0] = &b->sample_types[0];
	b->sample_type_ptrs[1] = &b->sample_types[1];
	part->sample_type = b->sample_type_ptrs;
	part->n_sample_type = 2;
}

/*
 * The message is packed and compressed in pieces, one after another, not
 * packed whole first: the bytes are those of the whole message packed at
 * once (protobuf-c packs fields in number order, and each element of a
 * repeated field carries its own tag, so a Profile holding a run of one
 * field's elements packs to exactly their bytes), but the output reaches the
 * stream as the work goes. A paced caller's stream may pause between its
 * writes (exporter_write_progress, every 64 KiB): before, the whole pack
 * came before the first byte, one piece of 10-40 ms at a full window of a
 * churning host against the 7.5 ms a control interval allows the writes.
 * The message is never whole, built or packed, in memory (megabytes at the
 * cap).
 */
struct pprof_gz {
	z_stream *zs; /* pprof_gz_stream, or one of its own while that is taken */
	FILE *out;
	uint8_t *buf; /* one piece, packed */
	size_t cap;
	char *err;
	size_t errlen;
};

/*
 * The compressor's state kept from one write to the next: its ~270 KiB of
 * window and hash were allocated at the top of the heap and given back at
 * each write's end, over the trim threshold with what was freed beside them
 * (common/heap_bound.h), and faulted in again at the next: most of a small
 * profile.pb.gz's write (lowprof-write-cost on tmpfs: 0.65 -> 0.14 ms a
 * write of 3 stacks). deflateReset starts each stream afresh. A write that
 * starts while another is paused (the exporter's pacing) makes its own. Its
 * address is fixed: zlib's state points back to it.
 */
static z_stream pprof_gz_stream;
static bool pprof_gz_stream_ready, pprof_gz_stream_taken;

static int pprof_gz_init(struct pprof_gz *g, FILE *out, char *err, size_t errlen)
{
	int zr;

	memset(g, 0, sizeof(*g));
	g->out = out;
	g->err = err;
	g->errlen = errlen;
	if (!pprof_gz_stream_taken && pprof_gz_stream_ready && deflateReset(&pprof_gz_stream) == Z_OK) {
		pprof_gz_stream_taken = true;
		g->zs = &pprof_gz_stream;
		return 0;
	}
	if (!pprof_gz_stream_taken) {
		if (pprof_gz_stream_ready)
			deflateEnd(&pprof_gz_stream);
		pprof_gz_stream_ready = false;
		memset(&pprof_gz_stream, 0, sizeof(pprof_gz_stream));
		g->zs = &pprof_gz_stream;
	} else {
		g->zs = calloc(1, sizeof(*g->zs));
		if (g->zs == NULL) {
			errbuf_set(err, errlen, "pprof: out of memory for the compressor");
			return -ENOMEM;
		}
	}
	/* windowBits 15 + 16 asks zlib for a gzip header and trailer. The
	 * fastest level, as Go's runtime/pprof writes its profiles: the file is
	 * rewritten every --interval inside the CPU budget, and against the
	 * default level 6 this halves a full window's write (15 -> 8 ms in
	 * lowprof-window-churn) for a file 8% larger (38.7 KB against 35.9). */
	zr = deflateInit2(g->zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (zr != Z_OK) {
		if (g->zs != &pprof_gz_stream)
			free(g->zs);
		g->zs = NULL;
		errbuf_set(err, errlen, "pprof: deflateInit2: %d", zr);
		return -ENOMEM;
	}
	if (g->zs == &pprof_gz_stream) {
		pprof_gz_stream_ready = true;
		pprof_gz_stream_taken = true;
	}
	return 0;
}

static void pprof_gz_fini(struct pprof_gz *g)
{
	if (g->zs == &pprof_gz_stream) {
		pprof_gz_stream_taken = false;
	} else if (g->zs != NULL) {
		deflateEnd(g->zs);
		free(g->zs);
	}
	g->zs = NULL;
	free(g->buf);
}

/* Compress len bytes onto the stream; Z_FINISH ends the gzip member. */
static int pprof_gz_write(struct pprof_gz *g, const uint8_t *data, size_t len, int flush)
{
	unsigned char chunk[16384];
	size_t left = len;
	int zr, step;

	g->zs->next_in = (Bytef *)data;
	g->zs->avail_in = 0;
	do {
		/* avail_in is a uInt: feed large buffers in pieces. */
		if (g->zs->avail_in == 0 && left > 0) {
			uInt take = left > (1u << 30) ? (1u << 30) : (uInt)left;

			g->zs->avail_in = take;
			left -= take;
		}
		step = left == 0 ? flush : Z_NO_FLUSH;
		do {
			size_t have;

			g->zs->next_out = chunk;
			g->zs->avail_out = sizeof(chunk);
			zr = deflate(g->zs, step);
			if (zr == Z_STREAM_ERROR) {
				errbuf_set(g->err, g->errlen, "pprof: deflate failed");
				return -EIO;
			}
			have = sizeof(chunk) - g->zs->avail_out;
			if (fwrite(chunk, 1, have, g->out) != have) {
				int ret = errno ? -errno : -EIO;

				errbuf_set(g->err, g->errlen, "pprof: write: %s", strerror(-ret));
				return ret;
			}
		} while (g->zs->avail_out == 0);
	} while (left > 0 || g->zs->avail_in > 0);
	return 0;
}

/* One piece: part packed, then compressed. */
static int pprof_gz_part(struct pprof_gz *g, const pprof_profile *part)
{
	size_t len = perftools__profiles__profile__get_packed_size(part);

	if (len > g->cap) {
		uint8_t *n = realloc(g->buf, len);

		if (n == NULL) {
			errbuf_set(g->err, g->errlen, "pprof: out of memory for %zu packed bytes", len);
			return -ENOMEM;
		}
		g->buf = n;
		g->cap = len;
	}
	if (perftools__profiles__profile__pack(part, g->buf) != len) {
		errbuf_set(g->err, g->errlen, "pprof: packed size mismatch");
		return -EIO;
	}
	return pprof_gz_write(g, g->buf, len, Z_NO_FLUSH);
}

enum pprof_field { /* Profile's repeated fields, in number order */
	PPROF_F_SAMPLE,   /* 2 */
	PPROF_F_MAPPING,  /* 3 */
	PPROF_F_LOCATION, /* 4 */
	PPROF_F_FUNCTION, /* 5 */
	PPROF_F_STRING,   /* 6 */
	PPROF_F_N
};

/* How many elements field has in the message. */
static size_t pprof_field_count(const struct pprof_build *b, enum pprof_field field)
{
	switch (field) {
	case PPROF_F_SAMPLE:
		return profile_stack_count(b->p);
	case PPROF_F_MAPPING:
		return profile_mapping_count(b->p) + 1; /* the main mapping first */
	case PPROF_F_LOCATION:
		return profile_location_count(b->p) + 1; /* [truncated] last */
	case PPROF_F_FUNCTION:
		return profile_function_count(b->p) + 1; /* [truncated] last */
	default:
		return b->nmodel_strings + b->nappended;
	}
}

/* Elements [at, at + k) of field as a Profile holding only them. 0 or -ENOMEM. */
static int pprof_piece(struct pprof_build *b, enum pprof_field field, size_t at, size_t k,
		       pprof_profile *part)
{
	perftools__profiles__profile__init(part);
	switch (field) {
	case PPROF_F_SAMPLE:
		return pprof_piece_samples(b, part, at, k);
	case PPROF_F_MAPPING:
		pprof_piece_mappings(b, part, at, k);
		return 0;
	case PPROF_F_LOCATION:
		pprof_piece_locations(b, part, at, k);
		return 0;
	case PPROF_F_FUNCTION:
		pprof_piece_functions(b, part, at, k);
		return 0;
	default:
		pprof_piece_strings(b, part, at, k);
		return 0;
	}
}

/* The whole message, field by field in number order, then the gzip trailer. */
static int pprof_emit(struct pprof_build *b, FILE *out, char *err, size_t errlen)
{
	pprof_profile part;
	struct pprof_gz g;
	int field, ret;
	size_t at, n, k;

	ret = pprof_gz_init(&g, out, err, errlen);
	if (ret != 0)
		return ret;
	perftools__profiles__profile__init(&part);
	pprof_piece_sample_types(b, &part); /* 1 */
	ret = pprof_gz_part(&g, &part);
	for (field = 0; ret == 0 && field < PPROF_F_N; field++) {
		n = pprof_field_count(b, (enum pprof_field)field);
		for (at = 0; ret == 0 && at < n; at += k) {
			k = n - at < PPROF_PIECE_ITEMS ? n - at : PPROF_PIECE_ITEMS;
			ret = pprof_piece(b, (enum pprof_field)field, at, k, &part);
			if (ret != 0)
				errbuf_set(err, errlen, "pprof: out of memory building the message");
			else
				ret = pprof_gz_part(&g, &part);
		}
	}
	if (ret == 0) {
		perftools__profiles__profile__init(&part);
		pprof_piece_tail(b, &part);
		ret = pprof_gz_part(&g, &part);
	}
	if (ret == 0)
		ret = pprof_gz_write(&g, NULL, 0, Z_FINISH);
	pprof_gz_fini(&g);
	return ret;
}

int pprof_write(const struct profile *p, FILE *out, char *err, size_t errlen)
{
	return pprof_write_types(p, NULL, out, err, errlen);
}

int pprof_write_types(const struct profile *p, const struct pprof_sample_types *types, FILE *out,
		      char *err, size_t errlen)
{
	struct pprof_build *b = calloc(1, sizeof(*b));
	int ret;

	if (b == NULL) {
		errbuf_set(err, errlen, "pprof: out of memory");
		return -ENOMEM;
	}
	b->p = p;
	memcpy(b->names, pprof_extra_names, sizeof(b->names));
	if (types != NULL) {
		b->names[PPROF_S_SAMPLES] = types->count_type;
		b->names[PPROF_S_COUNT] = types->count_unit;
		b->names[PPROF_S_CPU] = types->value_type;
		b->names[PPROF_S_NANOSECONDS] = types->value_unit;
	}
	pprof_plan_strings(b);
	ret = pprof_emit(b, out, err, errlen);
	if (ret == 0 && (fflush(out) != 0 || ferror(out))) {
		ret = errno ? -errno : -EIO;
		errbuf_set(err, errlen, "pprof: write: %s", strerror(-ret));
	}
	free(b->loc_ids);
	free(b);
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

int pprof_write_held(int fd, const struct profile *p, char *err, size_t errlen)
{
	struct pprof_file_job job = {.p = p};
	int rc = held_file_write(fd, pprof_file_writer, &job, PPROF_READER_MAX_COMPRESSED, err,
				 errlen);

	if (rc != 0 && rc != -EFBIG && job.err[0] != '\0')
		errbuf_set(err, errlen, "%s", job.err);
	return rc;
}

int pprof_write_file(int dirfd, const char *name, const struct profile *p, unsigned flags,
		     char *err, size_t errlen)
{
	struct pprof_file_job job = {.p = p};
	int rc = output_file_write_flags(dirfd, name, pprof_file_writer, &job, flags, err, errlen);

	/* The encoder's own reason says more than "writing NAME failed". */
	if (rc != 0 && job.err[0] != '\0')
		errbuf_set(err, errlen, "%s: %s", name, job.err);
	return rc;
}
