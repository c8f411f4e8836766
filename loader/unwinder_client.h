/*
 * unwinder_client: the loader's end of the lowprof-unwinder protocol
 * (ipc/unwinder_proto.h). The socket is inherited on LOWPROF_FD_UNWIND
 * when the supervisor runs the unwinder; otherwise the loader starts one
 * itself, without privileges (uid/gid nobody when root, no new privileges).
 */
#ifndef LOWPROF_LOADER_UNWINDER_CLIENT_H
#define LOWPROF_LOADER_UNWINDER_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/unwinder_proto.h"
#include "unwind/unwind_table.h"

struct unwinder_client {
	int sock;
	pid_t child;          /* >0 when we started the unwinder ourselves */
	uint32_t seq;
	unsigned timeout_ms;  /* per request */
	uint64_t next_spawn_ns;
	uint64_t quiet_until_ns; /* after a timeout: do not ask (and block) again before this */
	uint64_t requests, refused, failures, timeouts, spawns;
};

enum unwinder_result {
	UNWINDER_OK = 0,
	UNWINDER_REFUSED = 1,     /* the file (or the table built from it) is not usable */
	UNWINDER_UNAVAILABLE = 2, /* no answer: try the file again later */
	/* No answer in time, or the unwinder died on this very file (its CPU
	 * limit): the file is not asked about again, the unwinder is left quiet */
	UNWINDER_STUCK = 3,
};

/* 0, or -1 with err (no socket and the unwinder cannot be started). */
int unwinder_client_init(struct unwinder_client *c, char *err, size_t errlen);
/* Over an existing socket (tests): never spawns. */
void unwinder_client_init_fd(struct unwinder_client *c, int sock, unsigned timeout_ms);

/*
 * Have the unwinder build the table of an open file, then check the reply:
 * protocol, seals, sizes (table at most max_table bytes), validation, rows
 * inside the file's executable segments. On UNWINDER_OK *t holds the table,
 * and *bid the unwinder's word on where the build id lies (unchecked here:
 * unwind_maps_file_mark checks it against the file).
 */
enum unwinder_result unwinder_client_parse(struct unwinder_client *c, int file_fd,
					   size_t max_table, struct unwind_table *t,
					   struct unwinder_segment *seg, uint32_t *nseg,
					   struct unwinder_build_id *bid, char *err, size_t errlen);

void unwinder_client_fini(struct unwinder_client *c);

#endif
