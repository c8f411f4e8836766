/*
 * The symbol-source protocol (ipc/lowprof_sym.proto) on the wire: one packed
 * message per SOCK_SEQPACKET message, at most one fd with it (ipc/fd_pass.h).
 *
 * Both directions are decoded as untrusted input: an oversized or truncated
 * message, control data that is not one SCM_RIGHTS fd, a body protobuf-c
 * cannot unpack, a request with id 0 or no known kind, or a reply whose fd
 * does not match its error (an fd on failure) is refused with -EPROTO or
 * -EBADMSG and a reason, and any fd that came with it is closed.
 */
#ifndef LOWPROF_IPC_SYM_WIRE_H
#define LOWPROF_IPC_SYM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/lowprof_sym.pb-c.h"

/* Largest packed request: a build id and a few integers. */
#define SYM_WIRE_MAX_REQUEST 512u
/* /proc/PID/cgroup text carried in a reply, at most (longer is cut at a line). */
#define SYM_WIRE_MAX_CGROUP 16384u
/* An executable path in a reply, at most (PATH_MAX). */
#define SYM_WIRE_MAX_EXE_PATH 4096u
/* Largest packed reply: the text fields plus room for the rest. */
#define SYM_WIRE_MAX_REPLY (SYM_WIRE_MAX_CGROUP + SYM_WIRE_MAX_EXE_PATH + 1024u)
/* A GNU build id in hex: 2 to 128 lowercase digits, an even count. */
#define SYM_WIRE_MAX_BUILD_ID 128u
/* Largest pid the kernel hands out (PID_MAX_LIMIT on 64-bit). */
#define SYM_WIRE_MAX_PID 4194304u

/* Send a request (0 or -errno; -EMSGSIZE above SYM_WIRE_MAX_REQUEST). */
int sym_wire_send_request(int sock, const Lowprof__Sym__SymRequest *req);

/*
 * Receive one request. Returns 1 (*out set; free with sym_wire_free_request),
 * 0 (the peer closed), -EAGAIN (nothing to read on a non-blocking socket), or
 * a refusal: -EPROTO (framing, an fd attached: requests carry none) or
 * -EBADMSG (unpack failure, id 0, no kind), the reason in err. A refused
 * message is consumed: the next call reads the next one.
 */
int sym_wire_recv_request(int sock, Lowprof__Sym__SymRequest **out, char *err, size_t errlen);

/*
 * Unpack one request already received (by the loader's monitor core):
 * 0 and *out set (free with sym_wire_free_request), or -EBADMSG (does not
 * unpack, id 0) with the reason in err. A request of no known kind is left
 * to the caller's request table, which refuses it on the record.
 */
int sym_wire_decode_request(const uint8_t *buf, size_t len, Lowprof__Sym__SymRequest **out,
			    char *err, size_t errlen);

/*
 * The semantic checks of a request the loader applies before acting:
 * 1 <= pid <= SYM_WIRE_MAX_PID, start < end, inode != 0, a well-formed build
 * id (sym_wire_build_id_valid), a file's inode != 0 and device not 0:0. 0, or -EINVAL with the first violation in err.
 */
int sym_wire_check_request(const Lowprof__Sym__SymRequest *req, char *err, size_t errlen);

/* 2..SYM_WIRE_MAX_BUILD_ID lowercase hex digits, an even count. */
bool sym_wire_build_id_valid(const char *build_id);

/* Send a reply with fd (-1: none). 0 or -errno (-EMSGSIZE when too large). */
int sym_wire_send_reply(int sock, const Lowprof__Sym__SymReply *rep, int fd);

/*
 * Receive one reply. Returns 1 (*out set, *fd the fd or -1), 0 (closed),
 * -EAGAIN, or a refusal (-EPROTO, -EBADMSG, reason in err): framing, unpack
 * failure, id 0, a negative error, an fd with a non-zero error, text fields
 * over their bounds (the path as the exe path). Whether a success must carry an fd depends on the
 * request, which the caller checks.
 */
int sym_wire_recv_reply(int sock, Lowprof__Sym__SymReply **out, int *fd, char *err, size_t errlen);

/* The checks of sym_wire_recv_reply on a reply already received (with_fd: it
 * came with a descriptor). 0 and *out set, or -EBADMSG / -EPROTO + err. */
int sym_wire_decode_reply(const uint8_t *buf, size_t len, bool with_fd,
			  Lowprof__Sym__SymReply **out, char *err, size_t errlen);

void sym_wire_free_request(Lowprof__Sym__SymRequest *req);
void sym_wire_free_reply(Lowprof__Sym__SymReply *rep);

/* "maps", "mapped_file", "debug_file", "kallsyms", "process", "file", or "unknown". */
const char *sym_wire_request_name(Lowprof__Sym__SymRequest__WhatCase c);

#endif /* LOWPROF_IPC_SYM_WIRE_H */
