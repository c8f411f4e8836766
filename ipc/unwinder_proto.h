/*
 * The protocol between the privileged loader and lowprof-unwinder, the
 * unprivileged process that parses ELF files into unwind tables.
 *
 * A SOCK_SEQPACKET socketpair (fd LOWPROF_FD_UNWIND on both sides), one
 * message per request and per reply, so that a late or bad reply never
 * desynchronises the stream:
 *
 *   loader -> unwinder: struct unwinder_request + exactly one fd (SCM_RIGHTS):
 *                       the ELF file, opened read-only by the loader.
 *   unwinder -> loader: struct unwinder_reply; with status 0 exactly one fd:
 *                       a memfd sealed against writes and resizing, holding
 *                       the table's bytes, and the file's executable PT_LOAD
 *                       segments and the place of its build id in the
 *                       reply; otherwise no fd and a reason in msg.
 *
 * The protocol carries the table as opaque bytes: their format is the unwind
 * library's (unwind_table_serialize / unwind_table_deserialize), and both
 * ends link that library. The loader trusts nothing in a reply: exact size,
 * magic, sequence number, fd count, seals, size limits here, then the
 * table's own validation when it decodes the bytes.
 * The unwinder treats any malformed request as fatal (exit 1).
 */
#ifndef LOWPROF_IPC_UNWINDER_PROTO_H
#define LOWPROF_IPC_UNWINDER_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/fd_pass.h"

/* The unwinder's program (and, cut to 15 bytes, its command name). */
#define UNWINDER_PROGRAM "lowprof-unwinder"

#define UNWINDER_REQUEST_MAGIC 0x51555043u /* "CPUQ" little-endian */
#define UNWINDER_REPLY_MAGIC 0x41555043u   /* "CPUA" */
#define UNWINDER_MAX_SEGMENTS 16
#define UNWINDER_MSG_LEN 128

struct unwinder_request {
	uint32_t magic;
	uint32_t seq;
};

/* An executable PT_LOAD segment: what the loader needs to compute load biases. */
struct unwinder_segment {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t offset;
	uint64_t filesz;
};

/*
 * Where the first UNWINDER_BUILD_ID_BYTES of the file's GNU build id (its
 * NT_GNU_BUILD_ID note's descriptor) lie: at file offset `offset`, loaded at
 * ELF virtual address `vaddr` by a PT_LOAD segment. All zero: no build id.
 * The walker compares them with a process's memory before it takes a file's
 * table by content (bpf/lowprof.h, unwind_interp); the loader checks the
 * bytes against the file at `offset`.
 */
#define UNWINDER_BUILD_ID_BYTES 8

struct unwinder_build_id {
	uint64_t offset;
	uint64_t vaddr;
	uint8_t bytes[UNWINDER_BUILD_ID_BYTES];
};

struct unwinder_reply {
	uint32_t magic;
	uint32_t seq;       /* the request's */
	int32_t status;     /* 0, or a positive errno-style code (msg says why) */
	uint32_t nsegments; /* executable PT_LOAD segments, <= UNWINDER_MAX_SEGMENTS */
	uint64_t table_len; /* bytes of the serialised table in the memfd */
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id build_id;
	char msg[UNWINDER_MSG_LEN]; /* NUL-terminated */
};

/* Checks of what came in: 0, or -EINVAL with err. */
int unwinder_request_check(const void *buf, size_t n, int fd, uint32_t *seq, char *err,
			   size_t errlen);
int unwinder_reply_check(const struct unwinder_reply *r, size_t n, int fd, size_t max_table,
			 char *err, size_t errlen);

/* The unwinder's side: a memfd holding buf, sealed against writes and
 * resizing. The fd, or a negative errno with err. */
int unwinder_table_memfd_create(const void *buf, size_t len, char *err, size_t errlen);

/*
 * The loader's side: map a reply's table memfd read-only after checking that
 * its seals forbid writing and resizing and that it holds exactly len bytes,
 * len <= max_table. 0 with *bytes mapped (munmap(*bytes, len) when done), or
 * a negative errno with err.
 */
int unwinder_table_memfd_map(int fd, size_t len, size_t max_table, const void **bytes, char *err,
			     size_t errlen);

#endif /* LOWPROF_IPC_UNWINDER_PROTO_H */
