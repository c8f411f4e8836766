/*
 * The window's split into its intervals (exporter/profile/window_split.h),
 * held for the next exporter of the run: profile.pb.gz's in a memfd the
 * supervisor holds (LOWPROF_FD_WINDOW_SPLIT, exporter/formats/held_file.h),
 * offcpu.pb.gz's in another (LOWPROF_FD_OFFCPU_WINDOW_SPLIT). Written right
 * after each such file, from the same merge, so that a restarted exporter
 * lets the reloaded window's intervals leave one by one. Only this run's
 * exporters read it, so it needs no place in the output directory (where
 * each write was a file created, renamed over the last and its blocks
 * freed): the memfd ends with the run, as the split must.
 *
 * Format (little-endian, no padding):
 *   magic "LPWSPL01"
 *   u64 start_ns, u64 end_ns     the merge's time range (profile.pb.gz's)
 *   u32 nstacks                  the merge's stacks (profile.pb.gz's samples)
 *   u32 nparts                   intervals, oldest first
 *   u64 nrefs                    the refs of every interval together
 *   per interval: u64 start_ns, u64 end_ns, u32 nrefs, then per ref three
 *     LEB128 varints: the stack index (the first as is, then the gap to the
 *     previous one minus one), the count, the CPU nanoseconds
 *   u64 FNV-1a of every byte before it
 *
 * Bounds: at most WINDOW_SPLIT_MAX_PARTS intervals (the window's ring can
 * hold no more) and WINDOW_SPLIT_MAX_BYTES in all; a ref takes 3 to 25
 * bytes, one per stack of each interval, so the file is bounded by the
 * window's intervals times --max-stacks, never by the run's length. The
 * decoder is strict: every rule of window_split_validate, no overlong or
 * overflowing varint, the counts in the header equal to what follows, no
 * byte after the checksum. Allocations are bounded by the input's length.
 */
#ifndef LOWPROF_EXPORTER_WINDOW_SPLIT_FILE_H
#define LOWPROF_EXPORTER_WINDOW_SPLIT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/output_files.h"
#include "settings/defaults.h"

struct window_split;

/* Where earlier versions kept the splits, in the output directory: removed
 * at start, never read. */
#define WINDOW_SPLIT_FILE OUTPUT_FILE_WINDOW_SPLIT
#define OFFCPU_WINDOW_SPLIT_FILE OUTPUT_FILE_OFFCPU_WINDOW_SPLIT
/* The window's ring: its intervals, a restored one and a late roll's. */
#define WINDOW_SPLIT_MAX_PARTS (SETTINGS_WINDOW_MAX_INTERVALS + 8)
/* A full default window (60 intervals) of 10000 distinct stacks each is
 * about 4 MiB; this much is not a file the exporter wrote. */
#define WINDOW_SPLIT_MAX_BYTES (256u << 20)

/* The encoding of s in a new malloc'd buffer (*len bytes). 0, -ENOMEM, or
 * -EFBIG past WINDOW_SPLIT_MAX_BYTES or WINDOW_SPLIT_MAX_PARTS. */
int window_split_encode(const struct window_split *s, uint8_t **out, size_t *len);

/* A new split in *out from len bytes. 0, or -EINVAL (malformed) / -EFBIG /
 * -ENOMEM with a one-line reason in err. */
int window_split_decode(const uint8_t *buf, size_t len, struct window_split **out, char *err,
			size_t errlen);

/* window_split_encode into the held file fd (held_file.h: emptied if the
 * write fails). 0, or a negative errno with the reason in err. */
int window_split_write_held(int fd, const struct window_split *s, char *err, size_t errlen);

/* window_split_decode of the held file fd; -ENOENT when it is empty. */
int window_split_load_held(int fd, struct window_split **out, char *err, size_t errlen);

#endif
