/* The control socket's frames as a hostile controller sends them, decoded the
 * way the loader's control server does (one SEQPACKET message is fed to the
 * frame reader, which must yield exactly one envelope), then the request
 * validators. The first input byte splits the rest into two messages, to
 * exercise a reader fed again after a frame. A decoded envelope re-encodes
 * within the frame limit. */
#include "ipc/wire.h"

#include "fuzz/fuzz_check.h"
#include <errno.h>
#include <stdint.h>

static const struct wire_limits fuzz_limits = {.max_frequency_hz = 999, .max_divisor = 64};

static void fuzz_envelope(const Lowprof__Ctl__Envelope *env)
{
	static uint8_t out[WIRE_HEADER_SIZE + WIRE_MAX_FRAME];
	char err[256];

	(void)wire_payload_name(env->payload_case);
	if (env->payload_case == LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE)
		(void)wire_validate_set_throttle(env->set_throttle, &fuzz_limits, err, sizeof(err));
	if (env->payload_case == LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE)
		(void)wire_validate_throttle_state(env->state, &fuzz_limits, err, sizeof(err));
	FUZZ_CHECK(wire_encode(env, out, sizeof(out)) != -EMSGSIZE ||
		   env->payload_case == LOWPROF__CTL__ENVELOPE__PAYLOAD__NOT_SET);
}

static void fuzz_message(struct wire_reader *r, const uint8_t *msg, size_t len)
{
	Lowprof__Ctl__Envelope *env = NULL;
	char err[256];
	int rc;

	if (wire_reader_feed(r, msg, len) != 0)
		return;
	rc = wire_reader_next(r, &env, err, sizeof(err));
	if (rc == WIRE_MESSAGE) {
		fuzz_envelope(env);
		wire_free(env);
	}
	/* Errors are sticky: the control server cuts the peer off. */
	if (rc < 0)
		FUZZ_CHECK(wire_reader_next(r, &env, err, sizeof(err)) == rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct wire_reader r;
	size_t cut;

	if (size < 1)
		return 0;
	cut = size > 1 ? data[0] % size : 0;
	wire_reader_init(&r);
	fuzz_message(&r, data + 1, cut > 0 ? cut - 1 : 0);
	fuzz_message(&r, data + cut, size - cut);
	return 0;
}
