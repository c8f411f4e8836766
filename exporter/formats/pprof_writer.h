/*
 * pprof encoder: a gzip'd perftools.profiles.Profile (exporter/formats/pprof.proto)
 * readable by `go tool pprof` and by protoc --decode with the official schema.
 *
 * sample_type [samples/count, cpu/nanoseconds], period_type cpu/nanoseconds,
 * period = profile_period_ns(). Samples list location ids leaf first and carry
 * labels pid (num), tid (num, only when the stack saw one thread) and comm (str).
 * Truncated stacks end (root side) in a "[truncated]" location.
 */
#ifndef LOWPROF_EXPORTER_PPROF_WRITER_H
#define LOWPROF_EXPORTER_PPROF_WRITER_H

#include <stddef.h>
#include <stdio.h>

struct profile;

/* Returns 0, or a negative errno with a message in err. */
int pprof_write(const struct profile *p, FILE *out, char *err, size_t errlen);

/* pprof_write into dirfd/name, atomically, flags as output_file_write_flags's
 * (output_file.h). 0, or a negative errno with a message in err. */
int pprof_write_file(int dirfd, const char *name, const struct profile *p, unsigned flags,
		     char *err, size_t errlen);

/* The same into a held file (held_file.h: the supervisor's memfd), whole,
 * at most PPROF_READER_MAX_COMPRESSED: what pprof_reader_load_held reads. */
int pprof_write_held(int fd, const struct profile *p, char *err, size_t errlen);

/* Other names for the two sample types: the stacks' count, then their
 * cpu_ns (also the period type and the default sample type). */
struct pprof_sample_types {
	const char *count_type, *count_unit;
	const char *value_type, *value_unit;
};

/* pprof_write with types (NULL: samples/count, cpu/nanoseconds). */
int pprof_write_types(const struct profile *p, const struct pprof_sample_types *types, FILE *out,
		      char *err, size_t errlen);

#endif
