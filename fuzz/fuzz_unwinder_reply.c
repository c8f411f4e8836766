/* The loader's end of the unwinder protocol (ipc/unwinder_proto.h) against a
 * hostile unwinder: lowprof-unwinder parses untrusted ELF files without
 * privileges, so the loader must assume it compromised.
 *
 * The whole client path runs, as file_tables calls it: the fuzzed reply
 * (and a memfd holding the fuzzed table, sealed the way the unwinder seals it
 * or not) is queued on a SOCK_SEQPACKET socketpair before
 * unwinder_client_parse() sends its request, so the client reads it at once:
 * fd passing, unwinder_reply_check, unwinder_table_memfd_map (seals, size),
 * unwind_table_deserialize and unwind_maps_check_table. The raw input also
 * goes through unwinder_request_check and unwinder_reply_check directly.
 *
 * Input: flags byte, length byte, struct unwinder_reply (zero-padded), table.
 * Invariant: a table the client accepts validates, and comes with 1..16
 * segments. */
#define _GNU_SOURCE
#include "ipc/fd_pass.h"
#include "ipc/unwinder_proto.h"
#include "loader/unwinder_client.h"
#include "unwind/unwind_table.h"

#include "fuzz/fuzz_check.h"
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
	FUZZ_WITH_MEMFD = 1 << 0,   /* attach a table memfd */
	FUZZ_SEALED = 1 << 1,       /* made by unwinder_table_memfd_create (sealed) */
	FUZZ_FIX_LEN = 1 << 2,      /* table_len = the table's length */
	FUZZ_FIX_HEADER = 1 << 3,   /* the right magic and sequence number */
	FUZZ_SHORT = 1 << 4,        /* send only length byte * 3 bytes of the reply */
	FUZZ_PART_SEALED = 1 << 5,  /* unsealed memfd: seal against writes only */
};

#define FUZZ_MAX_TABLE (4u << 20)

static int fuzz_table_fd(unsigned flags, const uint8_t *tbl, size_t len)
{
	char err[256];
	int fd;

	if (flags & FUZZ_SEALED)
		return unwinder_table_memfd_create(tbl, len, err, sizeof(err));
	fd = memfd_create("fuzz_table", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (len > 0 && pwrite(fd, tbl, len, 0) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	if (flags & FUZZ_PART_SEALED)
		(void)fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE);
	return fd;
}

static void fuzz_client(unsigned flags, size_t reply_len, struct unwinder_reply *r,
			const uint8_t *tbl, size_t tlen)
{
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwinder_build_id bid;
	struct unwinder_client c;
	struct unwind_table t;
	enum unwinder_result res;
	uint32_t nseg = 0;
	char err[256];
	int sv[2], memfd = -1, req_fd = -1;
	uint8_t req[64];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return;
	if (flags & FUZZ_WITH_MEMFD)
		memfd = fuzz_table_fd(flags, tbl, tlen);
	if (flags & FUZZ_FIX_HEADER) {
		r->magic = UNWINDER_REPLY_MAGIC;
		r->seq = 1; /* a new client's first request */
	}
	if (flags & FUZZ_FIX_LEN)
		r->table_len = tlen;
	/* Queued before the request: the client finds it as soon as it polls. */
	if (fdpass_send(sv[1], r, reply_len, memfd) == 0) {
		/* Short: a reply to another sequence number makes the client wait
		 * for the right one until this timeout. */
		unwinder_client_init_fd(&c, sv[0], 5);
		res = unwinder_client_parse(&c, sv[1], FUZZ_MAX_TABLE, &t, seg, &nseg, &bid, err,
					    sizeof(err));
		if (res == UNWINDER_OK) {
			FUZZ_CHECK(nseg >= 1 && nseg <= UNWINDER_MAX_SEGMENTS);
			FUZZ_CHECK(unwind_table_validate(&t, err, sizeof(err)) == 0);
			unwind_table_free(&t);
		}
		/* The request the client sent, with its fd: the unwinder's side. */
		if (fdpass_recv(sv[1], req, sizeof(req), &req_fd, err, sizeof(err)) > 0 &&
		    req_fd >= 0)
			close(req_fd);
		unwinder_client_fini(&c);
	} else {
		close(sv[0]);
	}
	if (memfd >= 0)
		close(memfd);
	close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwinder_reply r;
	unsigned flags;
	size_t rlen, tlen, reply_len;
	const uint8_t *tbl;
	char err[256];
	uint32_t seq;

	(void)unwinder_request_check(data, size, size > 8 ? 0 : -1, &seq, err, sizeof(err));
	if (size < 2)
		return 0;
	flags = data[0];
	rlen = size - 2 < sizeof(r) ? size - 2 : sizeof(r);
	memset(&r, 0, sizeof(r));
	memcpy(&r, data + 2, rlen);
	tbl = data + 2 + rlen;
	tlen = size - 2 - rlen;
	(void)unwinder_reply_check(&r, rlen, (flags & FUZZ_WITH_MEMFD) ? 0 : -1, FUZZ_MAX_TABLE,
				   err, sizeof(err));
	reply_len = (flags & FUZZ_SHORT) ? (size_t)data[1] * 3 : sizeof(r);
	if (reply_len > sizeof(r))
		reply_len = sizeof(r);
	fuzz_client(flags, reply_len, &r, tbl, tlen);
	return 0;
}
