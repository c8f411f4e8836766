/*
 * held_file: a file the supervisor holds for the exporter (a memfd), that
 * outlives each exporter of the run and ends with the run: written whole
 * from offset 0 and cut to its length, read back whole. Nothing of it
 * reaches a disk: no create, rename, block freeing (a synchronous discard
 * on a file system mounted `discard`) or writeback, as a file in the
 * output directory had for what only a restarted exporter of the same run
 * reads (the checkpoint of the interval being collected).
 *
 * A write cut short by the exporter's death leaves bytes of two writes (the
 * new one's head, the old one's tail): the content must carry its own check,
 * which a gzip stream does (its length and CRC; pprof_reader refuses it).
 * A write that fails empties the file rather than leave such a mix.
 */
#ifndef LOWPROF_EXPORTER_HELD_FILE_H
#define LOWPROF_EXPORTER_HELD_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* fd's content becomes what writer writes (at most max_bytes; beyond, the
 * write fails with -EFBIG). 0, or a negative errno with a message in err
 * (the file then empty). */
int held_file_write(int fd, int (*writer)(FILE *, void *), void *ctx, size_t max_bytes,
		    char *err, size_t errlen);

/* fd's whole content into *buf (malloc'd, *len bytes; NULL and 0 when the
 * file is empty). 0, -EFBIG past max_bytes, or a negative errno, with a
 * message in err. */
int held_file_read(int fd, size_t max_bytes, uint8_t **buf, size_t *len, char *err,
		   size_t errlen);

/* Empties fd. 0 or a negative errno. */
int held_file_clear(int fd);

#endif
