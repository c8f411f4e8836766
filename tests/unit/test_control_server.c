/*
 * The loader's request table over a real socketpair: what a controller may
 * ask, what is refused with an error Reply, what cuts it off, and the
 * fail-safe after silence. The BPF side is a fake (control_ops).
 */
#include <errno.h>
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

#include "loader/control_server.h"

#define SEC 1000000000ULL

struct fake {
	struct throttle applied;
	int applies;
	int fail_apply; /* errno to fail the next apply with */
	struct control_counters counters;
};

static int fake_apply(void *arg, const struct throttle *t, char *err, size_t errlen)
{
	struct fake *f = arg;

	if (f->fail_apply != 0) {
		snprintf(err, errlen, "fake failure");
		return -f->fail_apply;
	}
	f->applied = *t;
	f->applies++;
	return 0;
}

static int fake_counters(void *arg, struct control_counters *out)
{
	struct fake *f = arg;

	*out = f->counters;
	return 0;
}

struct fixture {
	int peer; /* the controller's end (blocking) */
	struct control_server cs;
	struct fake fake;
	struct wire_reader rd;
	uint64_t now;
};

static const struct throttle healthy = {0, 19, LOWPROF_UNWIND_DWARF, 64, 1, false, 0, false};
static const struct throttle critical = {2, 5, LOWPROF_UNWIND_FP, 32, 1, false, 0, false};

static void fixture_start(struct fixture *fx, bool fixed)
{
	struct control_server_config cfg;
	struct control_ops ops = {fake_apply, fake_counters, NULL};
	int sv[2];

	memset(fx, 0, sizeof(*fx));
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	fx->peer = sv[1];
	memset(&cfg, 0, sizeof(cfg));
	cfg.limits.max_frequency_hz = 19;
	cfg.limits.max_divisor = 64;
	cfg.max_depth = 48; /* the user's --max-depth */
	cfg.interval_ns = SEC;
	cfg.fixed = fixed;
	cfg.failsafe = critical;
	cfg.failsafe.max_depth = 32;
	ops.arg = &fx->fake;
	fx->fake.applied = healthy;
	fx->fake.counters.online_cpus = 2;
	fx->fake.counters.ringbuf_size_bytes = 1 << 20;
	fx->now = 10 * SEC;
	control_server_init(&fx->cs, sv[0], &cfg, &ops, &healthy, fx->now);
	wire_reader_init(&fx->rd);
}

static int fixture_setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	fixture_start(fx, false);
	*state = fx;
	return 0;
}

static int fixture_setup_fixed(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	fixture_start(fx, true);
	*state = fx;
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *fx = *state;

	control_server_close(&fx->cs);
	close(fx->peer);
	free(fx);
	return 0;
}

/* Send env from the controller's side and let the server handle it. */
static int exchange(struct fixture *fx, const Lowprof__Ctl__Envelope *env)
{
	assert_int_equal(wire_send(fx->peer, env), 0);
	return control_server_handle(&fx->cs, fx->now);
}

/* The next envelope the server sent (the test's end blocks). */
static Lowprof__Ctl__Envelope *answer(struct fixture *fx)
{
	Lowprof__Ctl__Envelope *env = NULL;
	char err[160];

	assert_int_equal(wire_recv(fx->peer, &fx->rd, &env, err, sizeof(err)), WIRE_MESSAGE);
	return env;
}

static void expect_reply(struct fixture *fx, int errnum)
{
	Lowprof__Ctl__Envelope *env = answer(fx);

	assert_int_equal(env->payload_case, LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY);
	assert_int_equal(env->reply->errnum, errnum);
	assert_int_equal(env->reply->ok, errnum == 0);
	if (errnum != 0)
		assert_true(strlen(env->reply->error) > 0);
	wire_free(env);
}

static void say_hello(struct fixture *fx, unsigned version)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__Hello h = LOWPROF__CTL__HELLO__INIT;

	h.version = version;
	h.component = LOWPROF__CTL__COMPONENT__COMPONENT_CONTROLLER;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO;
	env.hello = &h;
	assert_int_equal(exchange(fx, &env), version == WIRE_PROTOCOL_VERSION ? 0 : -EPROTO);
}

static int set_throttle(struct fixture *fx, const struct throttle *t)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__SetThrottle st = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__ThrottleState ts;

	throttle_to_wire(t, &ts);
	st.state = &ts;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE;
	env.set_throttle = &st;
	return exchange(fx, &env);
}

static void test_hello_then_set_throttle(void **state)
{
	struct fixture *fx = *state;
	struct throttle t = critical;

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	assert_int_equal(set_throttle(fx, &t), 0);
	expect_reply(fx, 0);
	assert_int_equal(fx->fake.applies, 1);
	assert_int_equal(fx->fake.applied.frequency_hz, 5);
	assert_int_equal(fx->cs.applied.tier, 2);
	/* The same state again changes nothing. */
	assert_int_equal(set_throttle(fx, &t), 0);
	expect_reply(fx, 0);
	assert_int_equal(fx->fake.applies, 1);
	/* Deeper than the user's --max-depth (48): cut to it, not refused. */
	t = healthy;
	assert_int_equal(set_throttle(fx, &t), 0);
	expect_reply(fx, 0);
	assert_int_equal(fx->fake.applied.max_depth, 48);
}

static void test_before_hello_refused(void **state)
{
	struct fixture *fx = *state;
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__StatsRequest sr = LOWPROF__CTL__STATS_REQUEST__INIT;

	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST;
	env.stats_request = &sr;
	assert_int_equal(exchange(fx, &env), 0);
	expect_reply(fx, EPERM);
	assert_int_equal(set_throttle(fx, &critical), 0);
	expect_reply(fx, EPERM);
	assert_int_equal(fx->fake.applies, 0);
	/* Still connected: a hello now works. */
	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
}

static void test_out_of_range_refused(void **state)
{
	struct fixture *fx = *state;
	struct throttle bad[6];
	size_t i;

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	for (i = 0; i < 6; i++)
		bad[i] = critical;
	bad[0].frequency_hz = 20;       /* above the user's -F */
	bad[1].frequency_hz = 0;
	bad[2].sample_divisor = 3;      /* not a power of two */
	bad[3].sample_divisor = 128;    /* above the cap */
	bad[4].max_depth = 129;
	bad[5].max_depth = 0;
	for (i = 0; i < 6; i++) {
		assert_int_equal(set_throttle(fx, &bad[i]), 0);
		expect_reply(fx, EINVAL);
	}
	assert_int_equal(fx->fake.applies, 0);
	assert_int_equal(fx->cs.mon.st.refused, 6);
	assert_true(fx->cs.mon.fd >= 0);
}

static void test_bad_enums_refused(void **state)
{
	struct fixture *fx = *state;
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__SetThrottle st = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__ThrottleState ts;

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	throttle_to_wire(&critical, &ts);
	ts.tier = LOWPROF__CTL__TIER__TIER_UNSPECIFIED;
	st.state = &ts;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE;
	env.set_throttle = &st;
	assert_int_equal(exchange(fx, &env), 0);
	expect_reply(fx, EINVAL);
	throttle_to_wire(&critical, &ts);
	ts.unwind_mode = (Lowprof__Ctl__UnwindMode)7;
	assert_int_equal(exchange(fx, &env), 0);
	expect_reply(fx, EINVAL);
	/* A SetThrottle without a state. */
	st.state = NULL;
	assert_int_equal(exchange(fx, &env), 0);
	expect_reply(fx, EINVAL);
	assert_int_equal(fx->fake.applies, 0);
}

static void test_unknown_types_refused(void **state)
{
	struct fixture *fx = *state;
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__Reply reply = LOWPROF__CTL__REPLY__INIT;
	Lowprof__Ctl__Stats stats = LOWPROF__CTL__STATS__INIT;

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	/* Well-formed messages that are answers, not requests. */
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY;
	env.reply = &reply;
	assert_int_equal(exchange(fx, &env), 0);
	expect_reply(fx, EOPNOTSUPP);
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS;
	env.stats = &stats;
	assert_int_equal(exchange(fx, &env), 0);
	expect_reply(fx, EOPNOTSUPP);
	assert_true(fx->cs.mon.fd >= 0);
}

static void test_stats_are_deltas(void **state)
{
	struct fixture *fx = *state;
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT, *ans;
	Lowprof__Ctl__StatsRequest sr = LOWPROF__CTL__STATS_REQUEST__INIT;
	Lowprof__Ctl__GetState gs = LOWPROF__CTL__GET_STATE__INIT;

	fx->fake.counters.monotonic_ns = 5 * SEC;
	fx->fake.counters.submitted = 1000;
	fx->fake.counters.reserve_failures = 7;
	fx->fake.counters.agent_cpu_ns = 50000000;
	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	fx->fake.counters.monotonic_ns = 6 * SEC;
	fx->fake.counters.submitted = 1038;
	fx->fake.counters.reserve_failures = 9;
	fx->fake.counters.bpf_run_time_ns = 123456;
	fx->fake.counters.bpf_run_count = 40;
	fx->fake.counters.agent_cpu_ns = 60000000;
	fx->fake.counters.ringbuf_used_bytes = 4096;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST;
	env.stats_request = &sr;
	assert_int_equal(exchange(fx, &env), 0);
	ans = answer(fx);
	assert_int_equal(ans->payload_case, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS);
	assert_int_equal(ans->stats->interval_ns, SEC);
	assert_int_equal(ans->stats->samples_submitted, 38);
	assert_int_equal(ans->stats->reserve_failures, 2);
	assert_int_equal(ans->stats->bpf_run_time_ns, 123456);
	assert_int_equal(ans->stats->bpf_run_count, 40);
	assert_int_equal(ans->stats->agent_cpu_ns, 10000000);
	assert_int_equal(ans->stats->ringbuf_used_bytes, 4096);
	assert_int_equal(ans->stats->online_cpus, 2);
	assert_int_equal(ans->stats->applied->tier, LOWPROF__CTL__TIER__TIER_HEALTHY);
	wire_free(ans);
	/* GetState: what is in force. */
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_GET_STATE;
	env.get_state = &gs;
	assert_int_equal(exchange(fx, &env), 0);
	ans = answer(fx);
	assert_int_equal(ans->payload_case, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE);
	assert_int_equal(ans->state->frequency_hz, 19);
	assert_int_equal(ans->state->unwind_mode, LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_DWARF);
	wire_free(ans);
}

/* The host's /proc/stat ticks at second `at` (0 ticks: unreadable). */
static void fake_host(struct fixture *fx, uint64_t at, uint64_t busy, uint64_t total, uint64_t ctxt)
{
	fx->fake.counters.monotonic_ns = at * SEC;
	fx->fake.counters.host_busy_ticks = busy;
	fx->fake.counters.host_total_ticks = total;
	fx->fake.counters.host_ctxt = ctxt;
	fx->fake.counters.host_have_ctxt = ctxt != 0;
}

/* A Stats asked for (every_interval: and every interval's from now on, the
 * controller's subscription); the caller checks and frees it. */
static Lowprof__Ctl__Envelope *ask_stats(struct fixture *fx, bool every_interval)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT, *ans;
	Lowprof__Ctl__StatsRequest sr = LOWPROF__CTL__STATS_REQUEST__INIT;

	sr.every_interval = every_interval;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST;
	env.stats_request = &sr;
	assert_int_equal(exchange(fx, &env), 0);
	ans = answer(fx);
	assert_int_equal(ans->payload_case, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS);
	return ans;
}

/* The host's ticks go to the controller as deltas too (it reads no
 * /proc/stat of its own); an interval with an unreadable end or start is
 * unknown (0 ticks), never a delta from 0. */
static void test_stats_host_ticks(void **state)
{
	struct fixture *fx = *state;
	Lowprof__Ctl__Envelope *ans;

	fake_host(fx, 5, 5000, 20000, 900000);
	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	fake_host(fx, 6, 5150, 20200, 903000);
	ans = ask_stats(fx, false);
	assert_int_equal(ans->stats->host_busy_ticks, 150);
	assert_int_equal(ans->stats->host_total_ticks, 200);
	assert_int_equal(ans->stats->host_context_switches, 3000);
	assert_true(ans->stats->host_have_switches);
	wire_free(ans);
	fake_host(fx, 7, 0, 0, 0);
	ans = ask_stats(fx, false);
	assert_int_equal(ans->stats->host_busy_ticks, 0);
	assert_int_equal(ans->stats->host_total_ticks, 0);
	assert_false(ans->stats->host_have_switches);
	wire_free(ans);
	fake_host(fx, 8, 5300, 20400, 906000);
	ans = ask_stats(fx, false);
	assert_int_equal(ans->stats->host_total_ticks, 0);
	assert_false(ans->stats->host_have_switches);
	wire_free(ans);
}

/* The off-CPU probability: cut to --off-cpu-probability, 0 keeps it, above
 * one million refused, always 0 without --off-cpu; the fail-safe keeps it. */
static void test_offcpu_probability(void **state)
{
	struct fixture *fx = *state;
	struct throttle t = healthy, bad = healthy;

	fx->cs.cfg.offcpu_max_ppm = 500000; /* --off-cpu-probability 50 */
	fx->cs.applied.offcpu_prob_ppm = 500000;
	fx->cs.applied.max_depth = 48;
	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	t.max_depth = 48;
	t.offcpu_prob_ppm = 800000;
	assert_int_equal(set_throttle(fx, &t), 0);
	expect_reply(fx, 0);
	/* Cut to 50%: the same as in force, nothing applied. */
	assert_int_equal(fx->fake.applies, 0);
	t.offcpu_prob_ppm = 31250;
	assert_int_equal(set_throttle(fx, &t), 0);
	expect_reply(fx, 0);
	assert_int_equal(fx->fake.applies, 1);
	assert_int_equal(fx->fake.applied.offcpu_prob_ppm, 31250);
	/* 0: keep; a depth change carries the probability in force. */
	t.offcpu_prob_ppm = 0;
	t.max_depth = 32;
	assert_int_equal(set_throttle(fx, &t), 0);
	expect_reply(fx, 0);
	assert_int_equal(fx->fake.applied.offcpu_prob_ppm, 31250);
	assert_int_equal(fx->fake.applied.max_depth, 32);
	bad.offcpu_prob_ppm = 1000001;
	assert_int_equal(set_throttle(fx, &bad), 0);
	expect_reply(fx, EINVAL);
	assert_int_equal(fx->fake.applies, 2);
	/* The fail-safe applies the critical tier with the probability in force. */
	fx->now += 4 * SEC;
	assert_true(control_server_tick(&fx->cs, fx->now));
	assert_int_equal(fx->fake.applied.tier, 2);
	assert_int_equal(fx->fake.applied.offcpu_prob_ppm, 31250);
	/* Without --off-cpu the field is always 0. */
	fx->cs.cfg.offcpu_max_ppm = 0;
	fx->cs.applied = healthy;
	fx->cs.applied.max_depth = 48;
	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	t = critical;
	t.offcpu_prob_ppm = 1000;
	assert_int_equal(set_throttle(fx, &t), 0);
	expect_reply(fx, 0);
	assert_int_equal(fx->fake.applied.offcpu_prob_ppm, 0);
}

static void test_bad_hello_cuts_off(void **state)
{
	struct fixture *fx = *state;

	say_hello(fx, WIRE_PROTOCOL_VERSION + 1);
	expect_reply(fx, EPROTO);
	assert_int_equal(fx->cs.mon.fd, -1);
	/* Cut off means controller gone: the fail-safe is in force. */
	assert_true(fx->cs.failsafe);
	assert_int_equal(fx->fake.applied.tier, 2);
}

static void test_malformed_frames_cut_off(void **state)
{
	struct fixture *fx = *state;
	static const uint8_t zero_len[4] = {0, 0, 0, 0};
	char buf[1];

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	assert_int_equal(write(fx->peer, zero_len, sizeof(zero_len)), 4);
	assert_true(control_server_handle(&fx->cs, fx->now) < 0);
	assert_int_equal(fx->cs.mon.fd, -1);
	assert_true(fx->cs.failsafe);
	/* The loader closed its end. */
	assert_int_equal(read(fx->peer, buf, sizeof(buf)), 0);
}

static void test_oversized_and_garbage_cut_off(void **state)
{
	struct fixture *fx = *state;
	static const uint8_t huge[4] = {0x01, 0x10, 0, 0}; /* 4097 bytes */
	static const uint8_t garbage[8] = {4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};

	assert_int_equal(write(fx->peer, huge, sizeof(huge)), 4);
	assert_int_equal(control_server_handle(&fx->cs, fx->now), -EMSGSIZE);
	assert_int_equal(fx->cs.mon.fd, -1);

	/* A second server on a new pair: a frame that does not unpack. */
	close(fx->peer);
	control_server_close(&fx->cs);
	fixture_start(fx, false);
	assert_int_equal(write(fx->peer, garbage, sizeof(garbage)), 8);
	assert_int_equal(control_server_handle(&fx->cs, fx->now), -EBADMSG);
	assert_int_equal(fx->cs.mon.fd, -1);
}

static void test_silence_failsafe_until_hello(void **state)
{
	struct fixture *fx = *state;
	struct throttle t = healthy;

	t.max_depth = 48;
	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	fx->now += 2 * SEC;
	assert_false(control_server_tick(&fx->cs, fx->now));
	/* The third interval's tick, even a little early (its quarter of slack). */
	fx->now += SEC * 3 / 4 + 1;
	assert_true(control_server_tick(&fx->cs, fx->now));
	assert_int_equal(fx->fake.applied.tier, 2);
	assert_int_equal(fx->fake.applied.frequency_hz, 5);
	/* Kept: a late SetThrottle from the silent controller is refused. */
	assert_int_equal(set_throttle(fx, &t), 0);
	expect_reply(fx, EPERM);
	assert_int_equal(fx->fake.applied.tier, 2);
	/* A hello lifts it: the controller decides again. */
	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	assert_false(fx->cs.failsafe);
	assert_int_equal(set_throttle(fx, &t), 0);
	expect_reply(fx, 0);
	assert_int_equal(fx->fake.applied.tier, 0);
}

static void test_peer_close_failsafe(void **state)
{
	struct fixture *fx = *state;

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	close(fx->peer);
	fx->peer = -1;
	assert_int_equal(control_server_handle(&fx->cs, fx->now), -EPIPE);
	assert_true(fx->cs.failsafe);
	assert_int_equal(fx->fake.applied.tier, 2);
}

static void test_fixed_refuses_changes(void **state)
{
	struct fixture *fx = *state;

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	assert_int_equal(set_throttle(fx, &critical), 0);
	expect_reply(fx, EPERM);
	fx->now += 10 * SEC;
	assert_false(control_server_tick(&fx->cs, fx->now));
	assert_int_equal(fx->fake.applies, 0);
}

static void test_apply_failure_reported(void **state)
{
	struct fixture *fx = *state;

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	fx->fake.fail_apply = EIO;
	assert_int_equal(set_throttle(fx, &critical), 0);
	expect_reply(fx, EIO);
	assert_int_equal(fx->cs.applied.tier, 0);
}

/* The controller subscribes (StatsRequest with every_interval): the answer
 * to that request, a Stats, which the caller checks and frees. */
static Lowprof__Ctl__Envelope *subscribe(struct fixture *fx)
{
	return ask_stats(fx, true);
}

/*
 * The push: after a StatsRequest with every_interval the Stats of each
 * interval come unasked, each a delta since the previous one. Reading them is
 * the controller's sign of life; one left unread stops the pushes (no pile
 * of stale Stats) and its silence leads to the fail-safe as before. A new
 * Hello (a restarted controller) is not subscribed until it asks.
 */
static void test_stats_pushed_every_interval(void **state)
{
	struct fixture *fx = *state;
	Lowprof__Ctl__Envelope *ans;
	int i;

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	/* Not subscribed: nothing unasked. */
	fx->now += SEC;
	assert_false(control_server_push(&fx->cs, fx->now, 1));
	fx->fake.counters.monotonic_ns = 1 * SEC;
	fx->fake.counters.submitted = 100;
	/* An answer does not say when the next comes (the controller then
	 * stands by for an interval). */
	ans = subscribe(fx);
	assert_int_equal(ans->payload_case, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS);
	assert_int_equal(ans->stats->next_push_intervals, 0);
	wire_free(ans);
	/* Three intervals, each read at once: a Stats each, the silence clock reset. */
	for (i = 0; i < 3; i++) {
		fx->now += SEC;
		fx->fake.counters.monotonic_ns += SEC;
		fx->fake.counters.submitted += 19;
		assert_false(control_server_tick(&fx->cs, fx->now));
		/* Each says when the next comes, as the loader decided. */
		assert_true(control_server_push(&fx->cs, fx->now, 1 + (unsigned)i));
		ans = answer(fx);
		assert_int_equal(ans->payload_case, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS);
		assert_int_equal(ans->stats->interval_ns, SEC);
		assert_int_equal(ans->stats->samples_submitted, 19);
		assert_int_equal(ans->stats->next_push_intervals, 1 + i);
		wire_free(ans);
	}
	/* Now the controller stops reading: one more push, then none. */
	fx->now += SEC;
	assert_true(control_server_push(&fx->cs, fx->now, 1));
	fx->now += SEC;
	assert_false(control_server_tick(&fx->cs, fx->now));
	assert_false(control_server_push(&fx->cs, fx->now, 1));
	fx->now += SEC;
	assert_false(control_server_tick(&fx->cs, fx->now));
	assert_false(control_server_push(&fx->cs, fx->now, 1));
	/* Three intervals since it last read anything: the fail-safe. */
	fx->now += SEC;
	assert_true(control_server_tick(&fx->cs, fx->now));
	assert_int_equal(fx->fake.applied.tier, 2);
	/* The unread push is still there; a new controller says hello, is not subscribed. */
	ans = answer(fx);
	assert_int_equal(ans->payload_case, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS);
	wire_free(ans);
	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	fx->now += SEC;
	assert_false(control_server_push(&fx->cs, fx->now, 1));
}

/*
 * A quiet interval lasts several control intervals, with one push at each
 * end: a controller that read the push at the start was listening, however
 * long ago that was (no fail-safe at the end), and one that left it unread
 * is silent past the bound at the next tick.
 */
static void test_long_quiet_interval_not_silence(void **state)
{
	struct fixture *fx = *state;
	Lowprof__Ctl__Envelope *ans;
	int i;

	say_hello(fx, WIRE_PROTOCOL_VERSION);
	expect_reply(fx, 0);
	wire_free(subscribe(fx));
	/* Three quiet intervals of six seconds, each push read at once. */
	for (i = 0; i < 3; i++) {
		fx->now += 6 * SEC;
		fx->fake.counters.monotonic_ns += 6 * SEC;
		assert_false(control_server_tick(&fx->cs, fx->now));
		assert_true(control_server_push(&fx->cs, fx->now, 1));
		ans = answer(fx);
		assert_int_equal(ans->payload_case, LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS);
		assert_int_equal(ans->stats->interval_ns, 6 * SEC);
		wire_free(ans);
	}
	assert_int_equal(fx->fake.applied.tier, 0);
	/* This push is left unread: at the end of the next quiet interval the
	 * controller has been silent for it, six seconds. */
	fx->now += 6 * SEC;
	assert_false(control_server_tick(&fx->cs, fx->now));
	assert_true(control_server_push(&fx->cs, fx->now, 1));
	fx->now += 6 * SEC;
	assert_true(control_server_tick(&fx->cs, fx->now));
	assert_int_equal(fx->fake.applied.tier, 2);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, fixture_setup, fixture_teardown)
	const struct CMUnitTest tests[] = {
		T(test_hello_then_set_throttle),
		T(test_before_hello_refused),
		T(test_out_of_range_refused),
		T(test_bad_enums_refused),
		T(test_unknown_types_refused),
		T(test_stats_are_deltas),
		T(test_stats_host_ticks),
		T(test_stats_pushed_every_interval),
		T(test_long_quiet_interval_not_silence),
		T(test_offcpu_probability),
		T(test_bad_hello_cuts_off),
		T(test_malformed_frames_cut_off),
		T(test_oversized_and_garbage_cut_off),
		T(test_silence_failsafe_until_hello),
		T(test_peer_close_failsafe),
		cmocka_unit_test_setup_teardown(test_fixed_refuses_changes, fixture_setup_fixed,
						fixture_teardown),
		T(test_apply_failure_reported),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
