/* The symbol socket's messages: requests as a hostile exporter sends them
 * (decoded and checked the way the loader's symbol broker does) and replies as
 * a hostile loader could send them (the exporter's side). The first input
 * byte picks the direction and whether the reply came with a descriptor. A
 * request that passes the checks re-encodes within the request limit. */
#include "ipc/sym_wire.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <string.h>

static void fuzz_request(const uint8_t *data, size_t size)
{
	Lowprof__Sym__SymRequest *req;
	uint8_t again[SYM_WIRE_MAX_REQUEST];
	char err[256];

	if (sym_wire_decode_request(data, size, &req, err, sizeof(err)) != 0)
		return;
	FUZZ_CHECK(req->id != 0);
	(void)sym_wire_request_name(req->what_case);
	if (sym_wire_check_request(req, err, sizeof(err)) == 0 && size <= SYM_WIRE_MAX_REQUEST) {
		FUZZ_CHECK(lowprof__sym__sym_request__get_packed_size(req) <= sizeof(again));
		if (req->what_case == LOWPROF__SYM__SYM_REQUEST__WHAT_FILE)
			FUZZ_CHECK(req->file->ino != 0 && req->file->dev != 0);
	}
	sym_wire_free_request(req);
}

static void fuzz_reply(const uint8_t *data, size_t size, bool with_fd)
{
	Lowprof__Sym__SymReply *rep;
	char err[256];

	if (sym_wire_decode_reply(data, size, with_fd, &rep, err, sizeof(err)) != 0)
		return;
	FUZZ_CHECK(rep->id != 0 && rep->error >= 0);
	FUZZ_CHECK(!(with_fd && rep->error != 0));
	FUZZ_CHECK(rep->cgroup.len <= SYM_WIRE_MAX_CGROUP);
	FUZZ_CHECK(strlen(rep->path) <= SYM_WIRE_MAX_EXE_PATH);
	sym_wire_free_reply(rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fuzz_request(data + 1, size - 1);
		break;
	case 1:
		fuzz_reply(data + 1, size - 1, false);
		break;
	default:
		fuzz_reply(data + 1, size - 1, true);
		break;
	}
	return 0;
}
