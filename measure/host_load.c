#define _GNU_SOURCE /* memmem */
#include "measure/host_load.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/file_read.h"

/* /proc/stat grows with the CPU count (the intr line mostly); refuse anything absurd. */
#define HOST_LOAD_MAX_FILE (16u << 20)
/* Fields up to steal: older kernels (before 2.6.11) had fewer and are not supported. */
#define HOST_LOAD_MIN_FIELDS 8

/* The fields of a cpu line, in /proc/stat order. */
static uint64_t *field_ptr(struct host_cpu_times *t, int i)
{
	uint64_t *fields[HOST_LOAD_MIN_FIELDS] = {
		&t->user, &t->nice, &t->system, &t->idle, &t->iowait, &t->irq, &t->softirq, &t->steal,
	};

	return fields[i];
}

/*
 * Next space-separated decimal in [*p, end): 1 and *v on a number, 0 at the
 * end of the line, -1 if the token is not a plain unsigned decimal that fits.
 */
static int next_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t acc = 0;

	while (s < end && *s == ' ')
		s++;
	if (s == end) {
		*p = s;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	while (s < end && *s >= '0' && *s <= '9') {
		uint64_t d = (uint64_t)(*s - '0');

		if (acc > (UINT64_MAX - d) / 10)
			return -1;
		acc = acc * 10 + d;
		s++;
	}
	if (s < end && *s != ' ')
		return -1;
	*p = s;
	*v = acc;
	return 1;
}

/*
 * One line starting with "cpu": the aggregate ("cpu") when *id is set to -1,
 * else "cpuN". Returns 0 or -EINVAL with the reason in err.
 */
static int parse_cpu_line(const char *line, size_t len, long *id, struct host_cpu_times *t,
			  char *err, size_t errlen)
{
	const char *end = line + len;
	const char *p = line + 3;
	int nfields = 0;
	uint64_t v;
	int rc;

	if (p < end && *p == ' ') {
		*id = -1;
	} else {
		unsigned long n = 0;

		if (p == end || *p < '0' || *p > '9')
			goto bad_label;
		while (p < end && *p >= '0' && *p <= '9') {
			n = n * 10 + (unsigned long)(*p - '0');
			if (n > 1u << 20)
				goto bad_label;
			p++;
		}
		if (p == end || *p != ' ')
			goto bad_label;
		*id = (long)n;
	}
	memset(t, 0, sizeof(*t));
	for (;;) {
		rc = next_u64(&p, end, &v);
		if (rc == 0)
			break;
		if (rc < 0) {
			snprintf(err, errlen, "/proc/stat line \"%.*s\": field %d is not a number",
				 (int)(len > 40 ? 40 : len), line, nfields + 1);
			return -EINVAL;
		}
		/* Fields after steal (guest, guest_nice, future ones) are already counted or unknown. */
		if (nfields < HOST_LOAD_MIN_FIELDS)
			*field_ptr(t, nfields) = v;
		nfields++;
	}
	if (nfields < HOST_LOAD_MIN_FIELDS) {
		snprintf(err, errlen, "/proc/stat line \"%.*s\" has %d fields, needs at least %d",
			 (int)(len > 40 ? 40 : len), line, nfields, HOST_LOAD_MIN_FIELDS);
		return -EINVAL;
	}
	return 0;

bad_label:
	snprintf(err, errlen, "/proc/stat line \"%.*s\" is neither cpu nor cpuN",
		 (int)(len > 40 ? 40 : len), line);
	return -EINVAL;
}

int host_load_parse_stat(const char *buf, size_t len, struct host_stat *out,
			 char *err, size_t errlen)
{
	bool have_total = false;
	long last_id = -1; /* the previous cpuN line's N */
	size_t pos = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	while (pos < len) {
		const char *line = buf + pos;
		const char *eol = memchr(line, '\n', len - pos);
		size_t line_len = eol != NULL ? (size_t)(eol - line) : len - pos;
		struct host_cpu_times t;
		long id;

		pos += line_len + 1;
		if (line_len >= 5 && memcmp(line, "ctxt ", 5) == 0) {
			const char *p = line + 5;
			uint64_t v, extra;

			if (out->have_ctxt || next_u64(&p, line + line_len, &v) != 1 ||
			    next_u64(&p, line + line_len, &extra) != 0) {
				snprintf(err, errlen, "/proc/stat: ctxt line malformed or repeated");
				rc = -EINVAL;
				goto fail;
			}
			out->have_ctxt = true;
			out->ctxt = v;
			continue;
		}
		if (line_len < 3 || memcmp(line, "cpu", 3) != 0)
			continue;
		rc = parse_cpu_line(line, line_len, &id, &t, err, errlen);
		if (rc < 0)
			goto fail;
		if (id < 0) {
			if (have_total || out->ncpus > 0) {
				snprintf(err, errlen, "/proc/stat: aggregate cpu line repeated or out of place");
				rc = -EINVAL;
				goto fail;
			}
			out->total = t;
			have_total = true;
			continue;
		}
		/* The kernel lists online CPUs in ascending order: anything else is not /proc/stat.
		 * The line is checked and counted; only the aggregate is kept. */
		if (!have_total || id <= last_id) {
			snprintf(err, errlen, "/proc/stat: cpu%ld out of order or repeated", id);
			rc = -EINVAL;
			goto fail;
		}
		last_id = id;
		out->ncpus++;
	}
	if (!have_total) {
		snprintf(err, errlen, "/proc/stat: no aggregate cpu line");
		rc = -EINVAL;
		goto fail;
	}
	if (out->ncpus == 0) {
		snprintf(err, errlen, "/proc/stat: no cpuN lines");
		rc = -EINVAL;
		goto fail;
	}
	return 0;

fail:
	memset(out, 0, sizeof(*out));
	return rc;
}

int host_load_read_stat(const char *path, struct host_stat *out, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = file_read_all(path, HOST_LOAD_MAX_FILE, &buf, &len, err, errlen);

	if (rc < 0) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	rc = host_load_parse_stat(buf, len, out, err, errlen);
	free(buf);
	return rc;
}

void host_ticks_of(const struct host_stat *st, struct host_ticks *out)
{
	const struct host_cpu_times *t = &st->total;

	out->busy = t->user + t->nice + t->system + t->irq + t->softirq + t->steal;
	out->total = out->busy + t->idle + t->iowait;
	out->ctxt = st->ctxt;
	out->have_ctxt = st->have_ctxt;
}

bool host_load_of_ticks(uint64_t busy_d, uint64_t total_d, bool have_ctxt, uint64_t ctxt_d,
			struct host_load *out)
{
	long hz;

	memset(out, 0, sizeof(*out));
	if (total_d == 0)
		return false;
	/* idle and iowait may dip (NO_HZ): busy is then at most all of it. */
	out->host_cpu_pct = busy_d >= total_d ? 100.0 : 100.0 * (double)busy_d / (double)total_d;
	/* total is ticks of every CPU: seconds of capacity once divided by USER_HZ. */
	if (have_ctxt) {
		hz = sysconf(_SC_CLK_TCK);
		out->switches_valid = true;
		out->switches_per_cpu_s = (double)ctxt_d / ((double)total_d / (double)(hz > 0 ? hz : 100));
	}
	return true;
}

double host_load_others_pct(double host_cpu_pct, uint64_t own_ns, uint32_t cpus, uint64_t interval_ns)
{
	double capacity = (double)(cpus > 0 ? cpus : 1) * (double)interval_ns;
	double own = capacity > 0 ? (double)own_ns / capacity * 100.0 : 0.0;

	return host_cpu_pct > own ? host_cpu_pct - own : 0.0;
}

int host_load_parse_pressure(const char *buf, size_t len, double *some_avg10,
			     char *err, size_t errlen)
{
	size_t pos = 0;

	while (pos < len) {
		const char *line = buf + pos;
		const char *eol = memchr(line, '\n', len - pos);
		size_t line_len = eol != NULL ? (size_t)(eol - line) : len - pos;
		const char *key;
		char num[32];
		size_t n = 0;
		char *end;
		double v;

		pos += line_len + 1;
		if (line_len < 5 || memcmp(line, "some ", 5) != 0)
			continue;
		key = memmem(line, line_len, " avg10=", 7);
		if (key == NULL) {
			snprintf(err, errlen, "pressure: \"some\" line without avg10");
			return -EINVAL;
		}
		key += 7;
		while (key + n < line + line_len && key[n] != ' ' && n < sizeof(num) - 1) {
			num[n] = key[n];
			n++;
		}
		num[n] = '\0';
		errno = 0;
		v = strtod(num, &end);
		if (n == 0 || *end != '\0' || errno != 0 || !isfinite(v) || v < 0.0 || v > 100.0) {
			snprintf(err, errlen, "pressure: avg10 \"%s\" is not a percentage", num);
			return -EINVAL;
		}
		*some_avg10 = v;
		return 0;
	}
	snprintf(err, errlen, "pressure: no \"some\" line");
	return -EINVAL;
}

int host_load_read_pressure(const char *path, double *some_avg10, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = file_read_all(path, HOST_LOAD_MAX_FILE, &buf, &len, err, errlen);

	if (rc < 0)
		return rc;
	rc = host_load_parse_pressure(buf, len, some_avg10, err, errlen);
	free(buf);
	return rc;
}

/* The first buffer of a source: /proc/stat of a small host in one read. */
#define HOST_LOAD_SOURCE_FIRST_CAP (16u << 10)

void host_load_source_init(struct host_load_source *s, const char *stat_path,
			   const char *pressure_path)
{
	memset(s, 0, sizeof(*s));
	s->stat_path = stat_path;
	s->pressure_path = pressure_path;
	s->stat_fd = -1;
	s->pressure_fd = -1;
}

/*
 * The whole file behind *fd (opened at the first read, then kept) from offset
 * 0 into s->buf: one pread per reading while the buffer holds it (a proc
 * file read from offset 0 is generated afresh). 0 and *len, or -errno.
 */
static int host_load_source_pread(struct host_load_source *s, int *fd, const char *path,
				  size_t *len, char *err, size_t errlen)
{
	ssize_t n;

	if (*fd < 0) {
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd < 0) {
			int rc = -errno;

			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
			return rc;
		}
	}
	for (;;) {
		if (s->cap == 0) {
			s->buf = malloc(HOST_LOAD_SOURCE_FIRST_CAP);
			if (s->buf == NULL)
				return errbuf_fail(-ENOMEM, err, errlen, "%s: out of memory", path);
			s->cap = HOST_LOAD_SOURCE_FIRST_CAP;
		}
		n = pread(*fd, s->buf, s->cap, 0);
		if (n < 0) {
			int rc = -errno;

			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
			/* Opened afresh next time: the file may have been replaced. */
			close(*fd);
			*fd = -1;
			return rc;
		}
		if ((size_t)n < s->cap) {
			*len = (size_t)n;
			return 0;
		}
		/* Filled the buffer: maybe more behind it. Twice as large, within the cap. */
		if (s->cap * 2 > HOST_LOAD_MAX_FILE)
			return errbuf_fail(-EFBIG, err, errlen, "%s: larger than %u bytes", path,
					   HOST_LOAD_MAX_FILE);
		free(s->buf);
		s->buf = malloc(s->cap * 2);
		if (s->buf == NULL) {
			s->cap = 0;
			return errbuf_fail(-ENOMEM, err, errlen, "%s: out of memory", path);
		}
		s->cap *= 2;
	}
}

int host_load_source_stat(struct host_load_source *s, struct host_stat *out, char *err,
			  size_t errlen)
{
	size_t len;
	int rc = host_load_source_pread(s, &s->stat_fd, s->stat_path, &len, err, errlen);

	if (rc < 0) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	return host_load_parse_stat(s->buf, len, out, err, errlen);
}

int host_load_source_pressure(struct host_load_source *s, double *some_avg10, char *err,
			      size_t errlen)
{
	size_t len;
	int rc;

	if (s->pressure_path == NULL)
		return errbuf_fail(-ENOENT, err, errlen, "no pressure file");
	rc = host_load_source_pread(s, &s->pressure_fd, s->pressure_path, &len, err, errlen);
	if (rc < 0)
		return rc;
	return host_load_parse_pressure(s->buf, len, some_avg10, err, errlen);
}

void host_load_source_close(struct host_load_source *s)
{
	if (s->stat_fd >= 0)
		close(s->stat_fd);
	if (s->pressure_fd >= 0)
		close(s->pressure_fd);
	free(s->buf);
	host_load_source_init(s, s->stat_path, s->pressure_path);
}
