/*
 * The way back from pprof_writer: a gzip'd perftools.profiles.Profile, as
 * lowprof writes it, decoded into a new profile model. A restarted exporter
 * reloads its predecessor's profile.pb.gz with it.
 *
 * The bytes are untrusted (anything may have written the file): sizes are
 * bounded before anything is allocated, protobuf-c checks the wire format,
 * and every id and string index is checked against its table. Only what
 * pprof_writer produces is accepted (ids = index + 1, two sample values,
 * one line per location); anything else is refused with a reason.
 */
#ifndef LOWPROF_EXPORTER_PPROF_READER_H
#define LOWPROF_EXPORTER_PPROF_READER_H

#include <stddef.h>
#include <stdint.h>

struct profile;

/* Refused past these: a profile.pb.gz this large was not written by us. */
#define PPROF_READER_MAX_COMPRESSED (256u << 20)
#define PPROF_READER_MAX_DECOMPRESSED (1024u << 20)

/* Returns 0 and a new profile in *out, or a negative errno (-EINVAL malformed,
 * -EFBIG too large, -ENOMEM) with a one-line reason in err. */
int pprof_reader_load(const uint8_t *gz, size_t len, struct profile **out,
		      char *err, size_t errlen);

/* Same from the file name in directory dirfd; -ENOENT when it does not exist. */
int pprof_reader_load_file(int dirfd, const char *name, struct profile **out,
			   char *err, size_t errlen);

/* Same from a held file (held_file.h); -ENOENT when it is empty. A write the
 * exporter's death cut short is refused (-EINVAL) like any malformed stream. */
int pprof_reader_load_held(int fd, struct profile **out, char *err, size_t errlen);

#endif
