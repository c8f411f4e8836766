/*
 * The control wire: every message round-trips through frames (in memory and
 * over a real socketpair); broken streams are refused with a clear error.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipc/wire.h"

static int make_pair(int sv[2], bool nonblocking_reader)
{
	int rc = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);

	assert_int_equal(rc, 0);
	if (nonblocking_reader)
		assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	return 0;
}

static void write_all(int fd, const void *buf, size_t len)
{
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
}

/* Decode exactly one frame held in buf through a fresh reader. */
static Lowprof__Ctl__Envelope *decode_one(const uint8_t *buf, size_t len)
{
	struct wire_reader r;
	Lowprof__Ctl__Envelope *env = NULL;
	char err[160];

	wire_reader_init(&r);
	assert_int_equal(wire_reader_feed(&r, buf, len), 0);
	assert_int_equal(wire_reader_next(&r, &env, err, sizeof(err)), WIRE_MESSAGE);
	assert_int_equal(r.len, 0);
	return env;
}

static Lowprof__Ctl__Envelope *roundtrip(const Lowprof__Ctl__Envelope *in)
{
	uint8_t buf[WIRE_HEADER_SIZE + WIRE_MAX_FRAME];
	ssize_t n = wire_encode(in, buf, sizeof(buf));
	Lowprof__Ctl__Envelope *out;

	assert_true(n > (ssize_t)WIRE_HEADER_SIZE);
	/* The prefix is little-endian and counts the payload only. */
	assert_int_equal((size_t)n - WIRE_HEADER_SIZE,
			 buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24);
	out = decode_one(buf, (size_t)n);
	assert_int_equal(out->payload_case, in->payload_case);
	return out;
}

static void fill_state(Lowprof__Ctl__ThrottleState *st)
{
	st->tier = LOWPROF__CTL__TIER__TIER_HIGH;
	st->frequency_hz = 11;
	st->unwind_mode = LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_FP;
	st->max_depth = 48;
	st->sample_divisor = 8;
	st->paused = 1;
}

static void assert_state_equal(const Lowprof__Ctl__ThrottleState *a,
			       const Lowprof__Ctl__ThrottleState *b)
{
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->tier, b->tier);
	assert_int_equal(a->frequency_hz, b->frequency_hz);
	assert_int_equal(a->unwind_mode, b->unwind_mode);
	assert_int_equal(a->max_depth, b->max_depth);
	assert_int_equal(a->sample_divisor, b->sample_divisor);
	assert_int_equal(a->paused, b->paused);
}

static void test_roundtrip_every_message(void **unused)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__Envelope *out;
	Lowprof__Ctl__Hello hello = LOWPROF__CTL__HELLO__INIT;
	Lowprof__Ctl__StatsRequest sreq = LOWPROF__CTL__STATS_REQUEST__INIT;
	Lowprof__Ctl__Stats stats = LOWPROF__CTL__STATS__INIT;
	Lowprof__Ctl__ThrottleState state = LOWPROF__CTL__THROTTLE_STATE__INIT;
	Lowprof__Ctl__SetThrottle set = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__GetState get = LOWPROF__CTL__GET_STATE__INIT;
	Lowprof__Ctl__Reply reply = LOWPROF__CTL__REPLY__INIT;

	fill_state(&state);

	hello.version = WIRE_PROTOCOL_VERSION;
	hello.component = LOWPROF__CTL__COMPONENT__COMPONENT_CONTROLLER;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO;
	env.hello = &hello;
	out = roundtrip(&env);
	assert_int_equal(out->hello->version, WIRE_PROTOCOL_VERSION);
	assert_int_equal(out->hello->component, LOWPROF__CTL__COMPONENT__COMPONENT_CONTROLLER);
	wire_free(out);

	/* Empty messages still travel: the oneof tag says which one. */
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST;
	env.stats_request = &sreq;
	out = roundtrip(&env);
	assert_non_null(out->stats_request);
	wire_free(out);

	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_GET_STATE;
	env.get_state = &get;
	out = roundtrip(&env);
	assert_non_null(out->get_state);
	wire_free(out);

	stats.monotonic_ns = 123456789012345ULL;
	stats.interval_ns = 1000000000ULL;
	stats.samples_submitted = 38;
	stats.reserve_failures = 2;
	stats.ringbuf_used_bytes = 4096;
	stats.ringbuf_size_bytes = 8u << 20;
	stats.bpf_run_time_ns = 987654;
	stats.bpf_run_count = 40;
	stats.agent_cpu_ns = UINT64_MAX; /* extremes survive varint coding */
	stats.online_cpus = 2;
	stats.applied = &state;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS;
	env.stats = &stats;
	out = roundtrip(&env);
	assert_int_equal(out->stats->monotonic_ns, stats.monotonic_ns);
	assert_int_equal(out->stats->interval_ns, stats.interval_ns);
	assert_int_equal(out->stats->samples_submitted, 38);
	assert_int_equal(out->stats->reserve_failures, 2);
	assert_int_equal(out->stats->ringbuf_used_bytes, 4096);
	assert_int_equal(out->stats->ringbuf_size_bytes, 8u << 20);
	assert_int_equal(out->stats->bpf_run_time_ns, 987654);
	assert_int_equal(out->stats->bpf_run_count, 40);
	assert_true(out->stats->agent_cpu_ns == UINT64_MAX);
	assert_int_equal(out->stats->online_cpus, 2);
	assert_state_equal(out->stats->applied, &state);
	wire_free(out);

	set.state = &state;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE;
	env.set_throttle = &set;
	out = roundtrip(&env);
	assert_state_equal(out->set_throttle->state, &state);
	wire_free(out);

	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE;
	env.state = &state;
	out = roundtrip(&env);
	assert_state_equal(out->state, &state);
	wire_free(out);

	reply.ok = 0;
	reply.error = "frequency 99 Hz outside [1, 19]";
	reply.errnum = EINVAL;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY;
	env.reply = &reply;
	out = roundtrip(&env);
	assert_false(out->reply->ok);
	assert_string_equal(out->reply->error, reply.error);
	assert_int_equal(out->reply->errnum, EINVAL);
	wire_free(out);
}

static void test_encode_refuses(void **unused)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__Reply reply = LOWPROF__CTL__REPLY__INIT;
	uint8_t buf[WIRE_HEADER_SIZE + WIRE_MAX_FRAME];
	char *big = malloc(WIRE_MAX_FRAME + 1);

	/* No payload, and a payload case whose pointer is NULL. */
	assert_int_equal(wire_encode(&env, buf, sizeof(buf)), -EINVAL);
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY;
	assert_int_equal(wire_encode(&env, buf, sizeof(buf)), -EINVAL);

	/* Bigger than a frame may be. */
	assert_non_null(big);
	memset(big, 'x', WIRE_MAX_FRAME);
	big[WIRE_MAX_FRAME] = '\0';
	reply.error = big;
	env.reply = &reply;
	assert_int_equal(wire_encode(&env, buf, sizeof(buf)), -EMSGSIZE);
	/* A frame that fits the protocol but not the caller's buffer. */
	reply.error = "short";
	assert_int_equal(wire_encode(&env, buf, 6), -EMSGSIZE);
	assert_int_equal(wire_encode(&env, buf, 2), -EMSGSIZE);
	assert_true(wire_encode(&env, buf, sizeof(buf)) > 0);
	free(big);
}

static void make_set_throttle_env(Lowprof__Ctl__Envelope *env, Lowprof__Ctl__SetThrottle *set,
				  Lowprof__Ctl__ThrottleState *state)
{
	fill_state(state);
	set->state = state;
	env->payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE;
	env->set_throttle = set;
}

static void test_socketpair_send_recv(void **unused)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__SetThrottle set = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__ThrottleState state = LOWPROF__CTL__THROTTLE_STATE__INIT;
	Lowprof__Ctl__Envelope *out = NULL;
	struct wire_reader r;
	char err[160];
	int sv[2];
	int i;

	make_pair(sv, true);
	make_set_throttle_env(&env, &set, &state);
	wire_reader_init(&r);

	/* Nothing sent yet: a non-blocking reader is told to wait. */
	assert_int_equal(wire_recv(sv[1], &r, &out, err, sizeof(err)), WIRE_AGAIN);
	assert_null(out);

	/* Three frames in one burst come out one by one, in order. */
	for (i = 0; i < 3; i++) {
		state.frequency_hz = (uint32_t)(i + 1);
		assert_int_equal(wire_send(sv[0], &env), 0);
	}
	for (i = 0; i < 3; i++) {
		assert_int_equal(wire_recv(sv[1], &r, &out, err, sizeof(err)), WIRE_MESSAGE);
		assert_int_equal(out->set_throttle->state->frequency_hz, (uint32_t)(i + 1));
		wire_free(out);
	}
	assert_int_equal(wire_recv(sv[1], &r, &out, err, sizeof(err)), WIRE_AGAIN);

	/* A clean close between frames is not an error. */
	close(sv[0]);
	assert_int_equal(wire_recv(sv[1], &r, &out, err, sizeof(err)), WIRE_CLOSED);

	/* Sending to a closed peer fails with EPIPE and raises no SIGPIPE. */
	assert_int_equal(wire_send(sv[1], &env), -EPIPE);
	close(sv[1]);
}

static void test_byte_by_byte(void **unused)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__SetThrottle set = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__ThrottleState state = LOWPROF__CTL__THROTTLE_STATE__INIT;
	Lowprof__Ctl__Envelope *out = NULL;
	uint8_t frame[WIRE_HEADER_SIZE + WIRE_MAX_FRAME];
	struct wire_reader r;
	char err[160];
	ssize_t len;
	int sv[2];

	make_pair(sv, true);
	make_set_throttle_env(&env, &set, &state);
	len = wire_encode(&env, frame, sizeof(frame));
	assert_true(len > 0);
	wire_reader_init(&r);
	for (ssize_t i = 0; i < len; i++) {
		write_all(sv[0], frame + i, 1);
		if (i < len - 1) {
			assert_int_equal(wire_recv(sv[1], &r, &out, err, sizeof(err)), WIRE_AGAIN);
			assert_null(out);
		}
	}
	assert_int_equal(wire_recv(sv[1], &r, &out, err, sizeof(err)), WIRE_MESSAGE);
	assert_state_equal(out->set_throttle->state, &state);
	wire_free(out);
	close(sv[0]);
	close(sv[1]);
}

/* Deliver bytes then close the writer; return what the reader finally says. */
static int recv_after(const void *bytes, size_t len, bool close_writer, char *err, size_t errlen)
{
	Lowprof__Ctl__Envelope *out = NULL;
	struct wire_reader r;
	int sv[2];
	int rc;

	make_pair(sv, true);
	wire_reader_init(&r);
	write_all(sv[0], bytes, len);
	if (close_writer)
		close(sv[0]);
	do {
		rc = wire_recv(sv[1], &r, &out, err, errlen);
	} while (rc == WIRE_AGAIN && close_writer);
	assert_null(out);
	/* Errors are sticky: the stream is never trusted again. */
	if (rc < 0)
		assert_int_equal(wire_recv(sv[1], &r, &out, NULL, 0), rc);
	if (!close_writer)
		close(sv[0]);
	close(sv[1]);
	return rc;
}

static void test_cut_mid_frame(void **unused)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__SetThrottle set = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__ThrottleState state = LOWPROF__CTL__THROTTLE_STATE__INIT;
	uint8_t frame[WIRE_HEADER_SIZE + WIRE_MAX_FRAME];
	char err[160];
	ssize_t len;

	make_set_throttle_env(&env, &set, &state);
	len = wire_encode(&env, frame, sizeof(frame));
	assert_true(len > 6);

	assert_int_equal(recv_after(frame, (size_t)len - 1, true, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "closed inside a frame"));
	assert_int_equal(recv_after(frame, 2, true, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "frame header"));
	/* The whole frame then EOF: one message, then a clean close. */
	{
		struct wire_reader r;
		Lowprof__Ctl__Envelope *out = NULL;

		wire_reader_init(&r);
		assert_int_equal(wire_reader_feed(&r, frame, (size_t)len), 0);
		wire_reader_set_eof(&r);
		assert_int_equal(wire_reader_next(&r, &out, err, sizeof(err)), WIRE_MESSAGE);
		wire_free(out);
		assert_int_equal(wire_reader_next(&r, &out, err, sizeof(err)), WIRE_CLOSED);
	}
}

static void test_bad_lengths(void **unused)
{
	uint8_t oversized[4] = { 0x01, 0x10, 0x00, 0x00 }; /* 4097 */
	uint8_t huge[4] = { 0xff, 0xff, 0xff, 0xff };
	uint8_t zero[4] = { 0, 0, 0, 0 };
	char err[160];

	/* Refused as soon as the prefix is in, without waiting for a body. */
	assert_int_equal(recv_after(oversized, 4, false, err, sizeof(err)), -EMSGSIZE);
	assert_non_null(strstr(err, "4097 exceeds the maximum 4096"));
	assert_int_equal(recv_after(huge, 4, false, err, sizeof(err)), -EMSGSIZE);
	assert_int_equal(recv_after(zero, 4, false, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "length zero"));
}

static void test_bad_payloads(void **unused)
{
	/* Field 1 (hello) claims 16 bytes that are not there. */
	uint8_t overrun[] = { 2, 0, 0, 0, 0x0a, 0x10 };
	/* Wire type 7 does not exist. */
	uint8_t badtype[] = { 2, 0, 0, 0, 0x0f, 0x00 };
	/* Only an unknown field (99, varint 1): no payload this version knows. */
	uint8_t unknown[] = { 3, 0, 0, 0, 0x98, 0x06, 0x01 };
	/* hello whose version field is a truncated varint. */
	uint8_t badsub[] = { 4, 0, 0, 0, 0x0a, 0x02, 0x08, 0xff };
	char err[160];

	assert_int_equal(recv_after(overrun, sizeof(overrun), false, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "not a valid Envelope"));
	assert_int_equal(recv_after(badtype, sizeof(badtype), false, err, sizeof(err)), -EBADMSG);
	assert_int_equal(recv_after(badsub, sizeof(badsub), false, err, sizeof(err)), -EBADMSG);
	assert_int_equal(recv_after(unknown, sizeof(unknown), false, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "no known payload"));
}

static void test_feed_overflow(void **unused)
{
	static uint8_t junk[WIRE_HEADER_SIZE + WIRE_MAX_FRAME + 1];
	struct wire_reader r;

	wire_reader_init(&r);
	assert_int_equal(wire_reader_feed(&r, junk, sizeof(junk)), -ENOBUFS);
	assert_int_equal(wire_reader_feed(&r, junk, sizeof(junk) - 1), 0);
}

static void expect_invalid(const Lowprof__Ctl__SetThrottle *set, const struct wire_limits *lim,
			   const char *needle)
{
	char err[160] = "";

	assert_int_equal(wire_validate_set_throttle(set, lim, err, sizeof(err)), -EINVAL);
	if (strstr(err, needle) == NULL)
		fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
}

static void test_validate_set_throttle(void **unused)
{
	const struct wire_limits lim = { .max_frequency_hz = 19, .max_divisor = 64 };
	Lowprof__Ctl__ThrottleState st = LOWPROF__CTL__THROTTLE_STATE__INIT;
	Lowprof__Ctl__SetThrottle set = LOWPROF__CTL__SET_THROTTLE__INIT;
	char err[160] = "";

	expect_invalid(&set, &lim, "no state");
	set.state = &st;
	/* An all-default (empty) state is refused: every field is required. */
	expect_invalid(&set, &lim, "tier 0");

	fill_state(&st);
	assert_int_equal(wire_validate_set_throttle(&set, &lim, err, sizeof(err)), 0);

	st.tier = (Lowprof__Ctl__Tier)4;
	expect_invalid(&set, &lim, "tier 4");
	st.tier = (Lowprof__Ctl__Tier)-1;
	expect_invalid(&set, &lim, "tier -1");
	st.tier = LOWPROF__CTL__TIER__TIER_CRITICAL;

	st.unwind_mode = LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_UNSPECIFIED;
	expect_invalid(&set, &lim, "unwind mode 0");
	st.unwind_mode = (Lowprof__Ctl__UnwindMode)3;
	expect_invalid(&set, &lim, "unwind mode 3");
	st.unwind_mode = LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_DWARF;

	st.frequency_hz = 0;
	expect_invalid(&set, &lim, "frequency 0 Hz");
	st.frequency_hz = 20;
	expect_invalid(&set, &lim, "frequency 20 Hz outside [1, 19]");
	st.frequency_hz = 19;
	assert_int_equal(wire_validate_set_throttle(&set, &lim, err, sizeof(err)), 0);
	st.frequency_hz = 1;

	st.max_depth = 0;
	expect_invalid(&set, &lim, "max depth 0");
	st.max_depth = LOWPROF_MAX_USER_DEPTH + 1;
	expect_invalid(&set, &lim, "max depth 129");
	st.max_depth = LOWPROF_MAX_USER_DEPTH;
	assert_int_equal(wire_validate_set_throttle(&set, &lim, err, sizeof(err)), 0);

	st.sample_divisor = 0;
	expect_invalid(&set, &lim, "divisor 0");
	st.sample_divisor = 3;
	expect_invalid(&set, &lim, "divisor 3 is not a power of two");
	st.sample_divisor = 128;
	expect_invalid(&set, &lim, "divisor 128");
	st.sample_divisor = 64;
	assert_int_equal(wire_validate_set_throttle(&set, &lim, err, sizeof(err)), 0);
	st.sample_divisor = 1;

	st.paused = 2;
	expect_invalid(&set, &lim, "paused is 2");
	st.paused = 0;
	assert_int_equal(wire_validate_set_throttle(&set, &lim, err, sizeof(err)), 0);

	/* The off-CPU probability: 0 (keep) to one million ppm. */
	st.offcpu_prob_ppm = 1000001;
	expect_invalid(&set, &lim, "off-CPU probability 1000001 ppm");
	st.offcpu_prob_ppm = 1000000;
	assert_int_equal(wire_validate_set_throttle(&set, &lim, err, sizeof(err)), 0);
	st.offcpu_prob_ppm = 0;
	assert_int_equal(wire_validate_set_throttle(&set, &lim, err, sizeof(err)), 0);
}

/* Out-of-range values survive the codec: refusing them is the validator's job. */
static void test_out_of_range_through_frames(void **unused)
{
	const struct wire_limits lim = { .max_frequency_hz = 7, .max_divisor = 64 };
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__SetThrottle set = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__ThrottleState state = LOWPROF__CTL__THROTTLE_STATE__INIT;
	Lowprof__Ctl__Envelope *out;
	char err[160];

	make_set_throttle_env(&env, &set, &state);
	state.tier = (Lowprof__Ctl__Tier)42;
	out = roundtrip(&env);
	assert_int_equal(wire_validate_set_throttle(out->set_throttle, &lim, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "tier 42"));
	wire_free(out);

	state.tier = LOWPROF__CTL__TIER__TIER_HEALTHY;
	state.frequency_hz = 11; /* above this loader's -F 7 */
	out = roundtrip(&env);
	assert_int_equal(wire_validate_set_throttle(out->set_throttle, &lim, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "frequency 11 Hz outside [1, 7]"));
	wire_free(out);

	/* A SetThrottle whose state was left out entirely. */
	set.state = NULL;
	out = roundtrip(&env);
	assert_null(out->set_throttle->state);
	assert_int_equal(wire_validate_set_throttle(out->set_throttle, &lim, err, sizeof(err)),
			 -EINVAL);
	wire_free(out);
}

static void test_helpers(void **unused)
{
	assert_int_equal(wire_unwind_to_lowprof(LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_FP),
			 LOWPROF_UNWIND_FP);
	assert_int_equal(wire_unwind_to_lowprof(LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_DWARF),
			 LOWPROF_UNWIND_DWARF);
	assert_int_equal(wire_unwind_to_lowprof(LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_UNSPECIFIED),
			 -EINVAL);
	assert_int_equal(wire_unwind_from_lowprof(LOWPROF_UNWIND_DWARF),
			 LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_DWARF);
	assert_int_equal(wire_unwind_from_lowprof(7),
			 LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_UNSPECIFIED);
	assert_string_equal(wire_payload_name(LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE),
			    "set_throttle");
	assert_string_equal(wire_payload_name(LOWPROF__CTL__ENVELOPE__PAYLOAD__NOT_SET), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_every_message),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_socketpair_send_recv),
		cmocka_unit_test(test_byte_by_byte),
		cmocka_unit_test(test_cut_mid_frame),
		cmocka_unit_test(test_bad_lengths),
		cmocka_unit_test(test_bad_payloads),
		cmocka_unit_test(test_feed_overflow),
		cmocka_unit_test(test_validate_set_throttle),
		cmocka_unit_test(test_out_of_range_through_frames),
		cmocka_unit_test(test_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
