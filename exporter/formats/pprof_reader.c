#include "exporter/formats/pprof_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/array_grow.h"
#include "common/errbuf.h"
#include "exporter/formats/held_file.h"
#include "exporter/formats/pprof.pb-c.h"
#include "exporter/profile/frame.h"
#include "exporter/profile/profile.h"

typedef Perftools__Profiles__Profile pprof_profile;

/* What one decode holds; released on the single cleanup path. */
struct pprof_reader {
	const pprof_profile *msg;
	struct frame *frames;
	int64_t label_pid, label_tid, label_comm; /* string indices, -1 when absent */
	int64_t truncated_name;                   /* string index of "[truncated]", -1 */
	char *err;
	size_t errlen;
};

static int pprof_reader_gunzip(const uint8_t *gz, size_t len, uint8_t **out, size_t *outlen,
			       char *err, size_t errlen)
{
	z_stream zs;
	uint8_t *buf = NULL;
	size_t cap = 0, have = 0;
	int zr, rc = 0;

	memset(&zs, 0, sizeof(zs));
	if (len > PPROF_READER_MAX_COMPRESSED) {
		errbuf_set(err, errlen, "%zu compressed bytes: over the %u MiB bound", len,
			 PPROF_READER_MAX_COMPRESSED >> 20);
		return -EFBIG;
	}
	/* 15 + 16: a gzip stream only (what pprof_writer writes). */
	if (inflateInit2(&zs, 15 + 16) != Z_OK) {
		errbuf_set(err, errlen, "inflateInit2 failed");
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)gz;
	zs.avail_in = (uInt)len;
	for (;;) {
		if (have == cap) {
			if (cap >= PPROF_READER_MAX_DECOMPRESSED) {
				errbuf_set(err, errlen, "decompresses to more than %u MiB",
					 PPROF_READER_MAX_DECOMPRESSED >> 20);
				rc = -EFBIG;
				goto cleanup;
			}
			if (array_grow((void **)&buf, &cap, cap ? cap + 1 : 65536, 1) != 0) {
				rc = -ENOMEM;
				errbuf_set(err, errlen, "out of memory");
				goto cleanup;
			}
		}
		zs.next_out = buf + have;
		zs.avail_out = (uInt)(cap - have);
		zr = inflate(&zs, Z_NO_FLUSH);
		have = cap - zs.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_OK && (zs.avail_in > 0 || zs.avail_out == 0))
			continue;
		/* Z_BUF_ERROR with input left over cannot happen; without input, it is cut short. */
		errbuf_set(err, errlen, "not a complete gzip stream (%s)",
			 zr == Z_OK || zr == Z_BUF_ERROR ? "truncated" : (zs.msg ? zs.msg : "corrupt"));
		rc = -EINVAL;
		goto cleanup;
	}
	if (zs.avail_in != 0) {
		errbuf_set(err, errlen, "%u bytes of trailing garbage after the gzip stream", zs.avail_in);
		rc = -EINVAL;
		goto cleanup;
	}
	*out = buf;
	*outlen = have;
	buf = NULL;
cleanup:
	inflateEnd(&zs);
	free(buf);
	return rc;
}

/* The string at a string-table index, or NULL when out of range. */
static const char *pprof_reader_str(const struct pprof_reader *r, int64_t idx)
{
	if (idx < 0 || (uint64_t)idx >= r->msg->n_string_table)
		return NULL;
	return r->msg->string_table[idx];
}

static int pprof_reader_check_tables(struct pprof_reader *r)
{
	const pprof_profile *m = r->msg;
	size_t i;

	if (m->n_string_table == 0 || m->string_table[0][0] != '\0')
		return errbuf_fail(-EINVAL, r->err, r->errlen, "string_table[0] is not \"\"");
	r->label_pid = r->label_tid = r->label_comm = r->truncated_name = -1;
	for (i = 0; i < m->n_string_table; i++) {
		if (strcmp(m->string_table[i], "pid") == 0 && r->label_pid < 0)
			r->label_pid = (int64_t)i;
		else if (strcmp(m->string_table[i], "tid") == 0 && r->label_tid < 0)
			r->label_tid = (int64_t)i;
		else if (strcmp(m->string_table[i], "comm") == 0 && r->label_comm < 0)
			r->label_comm = (int64_t)i;
		else if (strcmp(m->string_table[i], PROFILE_TRUNCATED_NAME) == 0 && r->truncated_name < 0)
			r->truncated_name = (int64_t)i;
	}
	/* pprof_writer numbers every table 1, 2, 3...: anything else is not ours. */
	for (i = 0; i < m->n_mapping; i++) {
		const Perftools__Profiles__Mapping *mp = m->mapping[i];

		if (mp->id != i + 1 || pprof_reader_str(r, mp->filename) == NULL ||
		    pprof_reader_str(r, mp->build_id) == NULL)
			return errbuf_fail(-EINVAL, r->err, r->errlen, "mapping %zu malformed", i + 1);
	}
	for (i = 0; i < m->n_function; i++) {
		const Perftools__Profiles__Function *f = m->function[i];

		if (f->id != i + 1 || pprof_reader_str(r, f->name) == NULL ||
		    pprof_reader_str(r, f->filename) == NULL)
			return errbuf_fail(-EINVAL, r->err, r->errlen, "function %zu malformed", i + 1);
	}
	for (i = 0; i < m->n_location; i++) {
		const Perftools__Profiles__Location *l = m->location[i];

		if (l->id != i + 1 || l->mapping_id > m->n_mapping || l->n_line != 1 ||
		    l->line[0]->function_id == 0 || l->line[0]->function_id > m->n_function)
			return errbuf_fail(-EINVAL, r->err, r->errlen, "location %zu malformed", i + 1);
	}
	if (m->n_sample_type != 2)
		return errbuf_fail(-EINVAL, r->err, r->errlen, "%zu sample types, expected 2", m->n_sample_type);
	return 0;
}

/* Location id (checked) to a frame: what the symbolizer had given, as far as
 * pprof keeps it. User addresses were rebased onto the mapping's bounds, so
 * the file offset comes back as address - memory_start + file_offset. */
static bool pprof_reader_frame(struct pprof_reader *r, uint64_t id, struct frame *f)
{
	const pprof_profile *m = r->msg;
	const Perftools__Profiles__Location *l = m->location[id - 1];
	const Perftools__Profiles__Function *fn = m->function[l->line[0]->function_id - 1];
	const Perftools__Profiles__Mapping *mp;
	const char *name = pprof_reader_str(r, fn->name);
	const char *file = pprof_reader_str(r, fn->filename);

	memset(f, 0, sizeof(*f));
	f->function = name;
	f->address = l->address;
	f->module_offset = l->address;
	/* Names the writer made up for unnamed frames look like these; a bracketed
	 * name without a mapping is one of lowprof's markers ("[unknown]", a cut
	 * stack's "[no unwind table]"), no symbol. */
	f->symbolized = strstr(name, "+0x") == NULL && !(l->mapping_id == 0 && name[0] == '[');
	if (l->mapping_id == 0)
		return true;
	mp = m->mapping[l->mapping_id - 1];
	if (strcmp(pprof_reader_str(r, mp->filename), PROFILE_KERNEL_MAPPING_NAME) == 0) {
		f->kernel = true;
		f->module = file[0] != '\0' ? file : PROFILE_KERNEL_MAPPING_NAME;
		return true;
	}
	f->module = pprof_reader_str(r, mp->filename);
	f->build_id = pprof_reader_str(r, mp->build_id);
	if (f->build_id[0] == '\0')
		f->build_id = NULL;
	f->map_start = mp->memory_start;
	f->map_end = mp->memory_limit;
	f->map_file_offset = mp->file_offset;
	if (mp->memory_start <= l->address && l->address < mp->memory_limit)
		f->module_offset = l->address - mp->memory_start + mp->file_offset;
	return true;
}

static int pprof_reader_labels(struct pprof_reader *r, const Perftools__Profiles__Sample *s,
			       uint32_t *pid, uint32_t *tid, const char **comm)
{
	size_t i;

	/* Without a pid label (a folded stack of processes gone, or another
	 * tool's profile): no process, which pid 0 (the idle task) is not. */
	*pid = PROFILE_PID_GONE;
	*tid = 0;
	*comm = "";
	for (i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *lab = s->label[i];

		if (lab->key == r->label_pid && lab->num >= 0 && lab->num < UINT32_MAX)
			*pid = (uint32_t)lab->num;
		else if (lab->key == r->label_tid && lab->num >= 0 && lab->num < UINT32_MAX)
			*tid = (uint32_t)lab->num;
		else if (lab->key == r->label_comm && pprof_reader_str(r, lab->str) != NULL)
			*comm = pprof_reader_str(r, lab->str);
		else
			return -EINVAL;
	}
	return 0;
}

static int pprof_reader_samples(struct pprof_reader *r, struct profile *p)
{
	const pprof_profile *m = r->msg;
	size_t i, k, n;
	uint32_t pid, tid;
	const char *comm;
	bool truncated;
	int rc;

	r->frames = calloc(PROFILE_MAX_FRAMES + 1, sizeof(*r->frames));
	if (r->frames == NULL)
		return errbuf_fail(-ENOMEM, r->err, r->errlen, "out of memory");
	for (i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];

		if (s->n_value != 2 || s->value[0] <= 0 || s->value[1] < 0 ||
		    s->n_location_id > PROFILE_MAX_FRAMES + 1)
			return errbuf_fail(-EINVAL, r->err, r->errlen, "sample %zu: bad values or depth", i);
		if (pprof_reader_labels(r, s, &pid, &tid, &comm) != 0)
			return errbuf_fail(-EINVAL, r->err, r->errlen, "sample %zu: unknown or bad label", i);
		n = 0;
		truncated = false;
		for (k = 0; k < s->n_location_id; k++) {
			uint64_t id = s->location_id[k];

			if (id == 0 || id > m->n_location)
				return errbuf_fail(-EINVAL, r->err, r->errlen, "sample %zu: location id %llu out of range",
							 i, (unsigned long long)id);
			pprof_reader_frame(r, id, &r->frames[n]);
			/* The writer's "[truncated]" pseudo-frame is the flag, not a frame. */
			if (k == s->n_location_id - 1 && m->location[id - 1]->mapping_id == 0 &&
			    m->function[m->location[id - 1]->line[0]->function_id - 1]->name ==
				    r->truncated_name) {
				truncated = true;
				continue;
			}
			if (n == PROFILE_MAX_FRAMES)
				return errbuf_fail(-EINVAL, r->err, r->errlen, "sample %zu: too deep", i);
			n++;
		}
		rc = profile_add_sample(p, pid, tid, comm, r->frames, n, truncated,
					(uint64_t)s->value[0], (uint64_t)s->value[1]);
		if (rc != 0)
			return errbuf_fail(rc, r->err, r->errlen, "sample %zu: %s", i, strerror(-rc));
	}
	return 0;
}

int pprof_reader_load(const uint8_t *gz, size_t len, struct profile **out,
		      char *err, size_t errlen)
{
	struct pprof_reader r;
	struct profile *p = NULL;
	pprof_profile *msg = NULL;
	uint8_t *raw = NULL;
	size_t rawlen = 0;
	int rc;

	memset(&r, 0, sizeof(r));
	r.err = err;
	r.errlen = errlen;
	*out = NULL;
	rc = pprof_reader_gunzip(gz, len, &raw, &rawlen, err, errlen);
	if (rc != 0)
		return rc;
	msg = perftools__profiles__profile__unpack(NULL, rawlen, raw);
	if (msg == NULL) {
		rc = errbuf_fail(-EINVAL, r.err, r.errlen, "not a pprof Profile message");
		goto cleanup;
	}
	r.msg = msg;
	rc = pprof_reader_check_tables(&r);
	if (rc != 0)
		goto cleanup;
	p = profile_new();
	if (p == NULL) {
		rc = errbuf_fail(-ENOMEM, r.err, r.errlen, "out of memory");
		goto cleanup;
	}
	rc = pprof_reader_samples(&r, p);
	if (rc != 0)
		goto cleanup;
	if (msg->time_nanos < 0 || msg->duration_nanos < 0) {
		rc = errbuf_fail(-EINVAL, r.err, r.errlen, "negative time or duration");
		goto cleanup;
	}
	profile_set_time(p, (uint64_t)msg->time_nanos,
			 (uint64_t)msg->time_nanos + (uint64_t)msg->duration_nanos);
	*out = p;
	p = NULL;
cleanup:
	profile_free(p);
	free(r.frames);
	if (msg != NULL)
		perftools__profiles__profile__free_unpacked(msg, NULL);
	free(raw);
	return rc;
}

int pprof_reader_load_held(int fd, struct profile **out, char *err, size_t errlen)
{
	uint8_t *buf;
	size_t len;
	int rc;

	*out = NULL;
	rc = held_file_read(fd, PPROF_READER_MAX_COMPRESSED, &buf, &len, err, errlen);
	if (rc != 0)
		return rc;
	if (len == 0)
		return -ENOENT;
	rc = pprof_reader_load(buf, len, out, err, errlen);
	free(buf);
	return rc;
}

int pprof_reader_load_file(int dirfd, const char *name, struct profile **out,
			   char *err, size_t errlen)
{
	struct stat sb;
	uint8_t *buf = NULL;
	size_t have = 0;
	ssize_t n;
	int fd, rc;

	*out = NULL;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		rc = -errno;
		errbuf_set(err, errlen, "%s: %s", name, strerror(errno));
		return rc;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size > PPROF_READER_MAX_COMPRESSED) {
		errbuf_set(err, errlen, "%s: not a regular file under %u MiB", name,
			 PPROF_READER_MAX_COMPRESSED >> 20);
		rc = -EINVAL;
		goto cleanup;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (buf == NULL) {
		errbuf_set(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto cleanup;
	}
	while (have < (size_t)sb.st_size) {
		n = read(fd, buf + have, (size_t)sb.st_size - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	if (have != (size_t)sb.st_size) {
		errbuf_set(err, errlen, "%s: short read", name);
		rc = -EIO;
		goto cleanup;
	}
	rc = pprof_reader_load(buf, have, out, err, errlen);
cleanup:
	free(buf);
	close(fd);
	return rc;
}
