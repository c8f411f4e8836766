/*
 * The loader's monitor core (loader/monitor.c) on its own, with a toy
 * protocol over a real SOCK_SEQPACKET socketpair: the strict receive (the
 * sender's credentials, a message too long, an empty one, the peer gone), the
 * sender check, the rate limit audited once a second with a summary, the
 * audit budget, and the request table (unknown kind, state, validator,
 * handler, the entry's audit fields). The servers' own tests
 * (test_control_server.c, test_control_monitor.c, test_symbol_broker.c) cover
 * the same refusals through each server.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_audit_capture.h"
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loader/monitor.h"

#define SEC 1000000000ULL
#define T0 (10 * SEC)

/* The toy protocol: a message is {kind, value}. */
struct toy_msg {
	int kind;
	int value;
};

struct toy_server {
	struct monitor mon;
	int peer;
	int audit;
	int handled;
	int answers;
	int last_errno;
};

static int toy_kind_of(const void *msg)
{
	return ((const struct toy_msg *)msg)->kind;
}

static const char *toy_kind_name(int kind)
{
	return kind == 1 ? "one" : kind == 2 ? "two" : "unknown";
}

static int toy_answer(void *server, const void *msg, int errnum, const char *why)
{
	struct toy_server *t = server;

	(void)msg;
	(void)why;
	t->answers++;
	t->last_errno = errnum;
	return 0;
}

static int toy_validate(void *server, const void *msg, char *why, size_t whylen)
{
	(void)server;
	if (((const struct toy_msg *)msg)->value < 0) {
		snprintf(why, whylen, "value below zero");
		return -ERANGE;
	}
	return 0;
}

static int toy_handle(void *server, const void *msg, uint64_t now_ns)
{
	(void)msg;
	(void)now_ns;
	((struct toy_server *)server)->handled++;
	return 0;
}

static void toy_audit(struct audit_rec *r, const void *msg)
{
	audit_rec_i64(r, "value", ((const struct toy_msg *)msg)->value);
}

static const struct monitor_request toy_requests[] = {
	{1, 1u << 0, toy_validate, toy_handle, toy_audit},
	{2, 0, NULL, toy_handle, NULL},
};

static const struct monitor_protocol toy_protocol = {
	.requests = toy_requests,
	.nrequests = 2,
	.kind_of = toy_kind_of,
	.kind_name = toy_kind_name,
	.answer = toy_answer,
	.state_refusal = "not in this state",
};

static void start(struct toy_server *t, const struct monitor_config *cfg)
{
	int sv[2];

	memset(t, 0, sizeof(*t));
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	t->peer = sv[1];
	t->audit = memfd_create("audit", MFD_CLOEXEC);
	assert_true(t->audit >= 0);
	audit_log_open(dup(t->audit));
	monitor_init(&t->mon, sv[0], cfg, T0);
}

static void stop(struct toy_server *t)
{
	monitor_close(&t->mon);
	audit_log_close();
	if (t->peer >= 0)
		close(t->peer);
	close(t->audit);
}

static const struct monitor_config plain = {"tester", "toy", false, 0, 0, 0, 0, 0, 0, NULL};

static void test_recv(void **state)
{
	struct toy_server t;
	uint8_t buf[8], big[64];
	char why[128];
	size_t got;

	(void)state;
	start(&t, &plain);
	assert_int_equal(monitor_recv(&t.mon, buf, sizeof(buf), &got, why, sizeof(why)), MONITOR_RECV_NONE);
	assert_int_equal(send(t.peer, "abc", 3, 0), 3);
	assert_int_equal(monitor_recv(&t.mon, buf, sizeof(buf), &got, why, sizeof(why)),
			 MONITOR_RECV_MESSAGE);
	assert_int_equal(got, 3);
	/* SO_PASSCRED was set by monitor_init: the kernel names the sender. */
	assert_true(t.mon.have_cred);
	assert_int_equal(t.mon.peer_pid, getpid());
	assert_int_equal(t.mon.peer_uid, getuid());
	memset(big, 1, sizeof(big));
	assert_int_equal(send(t.peer, big, sizeof(big), 0), (ssize_t)sizeof(big));
	assert_int_equal(monitor_recv(&t.mon, buf, sizeof(buf), &got, why, sizeof(why)),
			 MONITOR_RECV_REFUSED);
	assert_non_null(strstr(why, "MSG_TRUNC"));
	assert_int_equal(send(t.peer, "", 0, 0), 0);
	assert_int_equal(monitor_recv(&t.mon, buf, sizeof(buf), &got, why, sizeof(why)),
			 MONITOR_RECV_REFUSED);
	assert_string_equal(why, "empty message");
	close(t.peer);
	t.peer = -1;
	assert_int_equal(monitor_recv(&t.mon, buf, sizeof(buf), &got, why, sizeof(why)),
			 MONITOR_RECV_CLOSED);
	stop(&t);
}

static void test_check_sender(void **state)
{
	struct monitor_config cfg = plain;
	struct toy_server t;
	uint8_t buf[8];
	char why[160];
	size_t got;

	(void)state;
	cfg.check_peer = true;
	cfg.expected_uid = getuid() + 1;
	start(&t, &cfg);
	/* Nothing read yet: no credentials. */
	assert_int_equal(monitor_check_sender(&t.mon, why, sizeof(why)), -EACCES);
	assert_string_equal(why, "no sender credentials on the toy socket");
	assert_int_equal(send(t.peer, "x", 1, 0), 1);
	assert_int_equal(monitor_recv(&t.mon, buf, sizeof(buf), &got, why, sizeof(why)),
			 MONITOR_RECV_MESSAGE);
	assert_int_equal(monitor_check_sender(&t.mon, why, sizeof(why)), -EACCES);
	assert_non_null(strstr(why, "is not the tester's uid"));
	t.mon.cfg.expected_uid = getuid();
	assert_int_equal(monitor_check_sender(&t.mon, why, sizeof(why)), 0);
	/* The sender is this process: its parent is ours, not pid 1's child. */
	t.mon.cfg.expected_ppid = getppid();
	assert_int_equal(monitor_check_sender(&t.mon, why, sizeof(why)), 0);
	stop(&t);
	/* A server expecting another parent (a sender once checked stays so for
	 * its server: its parent and program do not change while it runs). */
	cfg.expected_uid = getuid();
	cfg.expected_ppid = getpid();
	start(&t, &cfg);
	assert_int_equal(send(t.peer, "x", 1, 0), 1);
	assert_int_equal(monitor_recv(&t.mon, buf, sizeof(buf), &got, why, sizeof(why)),
			 MONITOR_RECV_MESSAGE);
	assert_int_equal(monitor_check_sender(&t.mon, why, sizeof(why)), -EACCES);
	assert_non_null(strstr(why, "is not a child of the supervisor"));
	stop(&t);
}

static void test_flood(void **state)
{
	struct monitor_config cfg = plain;
	struct toy_msg m = {2, 0};
	struct toy_server t;
	int i, admitted = 0;

	(void)state;
	cfg.rate_per_s = 3;
	cfg.rate_burst = 3;
	start(&t, &cfg);
	for (i = 0; i < 10; i++)
		admitted += monitor_admit(&t.mon, &toy_protocol, &t, &m, T0) == 1;
	assert_int_equal(admitted, 3);
	assert_int_equal(t.answers, 7);
	assert_int_equal(t.last_errno, EBUSY);
	assert_int_equal(t.mon.st.rate_limited, 7);
	/* One record for the second of flood; the rest counted. */
	assert_int_equal(test_audit_count(t.audit, MONITOR_RATE_WHY), 1);
	monitor_tick(&t.mon, T0 + SEC / 2);
	assert_int_equal(test_audit_count(t.audit, MONITOR_RATE_WHY), 1);
	/* The flood stopped: the summary once the second is over. */
	monitor_tick(&t.mon, T0 + SEC);
	assert_int_equal(test_audit_count(t.audit, MONITOR_RATE_WHY), 2);
	assert_int_equal(test_audit_count(t.audit, "\"request\":\"summary\""), 1);
	assert_int_equal(test_audit_count(t.audit, "\"rate_refusals_not_audited\":6"), 1);
	/* A message that is no request takes a token too, and gets no answer. */
	assert_int_equal(monitor_admit(&t.mon, &toy_protocol, &t, NULL, T0 + SEC), 1);
	stop(&t);
}

static void test_dispatch(void **state)
{
	struct toy_msg unknown = {9, 0}, one = {1, 5}, bad = {1, -1}, two = {2, 0};
	struct toy_server t;

	(void)state;
	start(&t, &plain);
	assert_int_equal(monitor_dispatch(&t.mon, &toy_protocol, &t, &unknown, 1, T0), 0);
	assert_int_equal(t.last_errno, EOPNOTSUPP);
	assert_int_equal(test_audit_count(t.audit, "unknown is not a request the loader answers"), 1);
	assert_int_equal(monitor_dispatch(&t.mon, &toy_protocol, &t, &one, 2, T0), 0);
	assert_int_equal(t.last_errno, EPERM);
	assert_int_equal(test_audit_count(t.audit, "not in this state"), 1);
	assert_int_equal(monitor_dispatch(&t.mon, &toy_protocol, &t, &bad, 1, T0), 0);
	assert_int_equal(t.last_errno, ERANGE);
	/* The entry's own fields are on its refusal's record. */
	assert_int_equal(test_audit_count(t.audit, "\"reason\":\"value below zero\",\"value\":-1"), 1);
	assert_int_equal(t.handled, 0);
	assert_int_equal(monitor_dispatch(&t.mon, &toy_protocol, &t, &one, 1, T0), 0);
	assert_int_equal(monitor_dispatch(&t.mon, &toy_protocol, &t, &two, 2, T0), 0);
	assert_int_equal(t.handled, 2);
	assert_int_equal(t.answers, 3);
	assert_int_equal(t.mon.st.refused, 3);
	assert_int_equal(test_audit_count(t.audit, "\"component\":\"tester\""), 3);
	stop(&t);
}

static void test_audit_budget(void **state)
{
	struct monitor_config cfg = plain;
	struct toy_msg unknown = {9, 0};
	struct toy_server t;
	int i;

	(void)state;
	cfg.audit_per_s = 1;
	cfg.audit_burst = 2;
	start(&t, &cfg);
	for (i = 0; i < 5; i++)
		monitor_dispatch(&t.mon, &toy_protocol, &t, &unknown, 1, T0);
	assert_int_equal(t.answers, 5);
	assert_int_equal(test_audit_count(t.audit, "request_refused"), 2);
	assert_int_equal(t.mon.st.audit_suppressed, 3);
	/* A second later the budget has a token: the summary of the three. */
	monitor_tick(&t.mon, T0 + SEC);
	assert_int_equal(test_audit_count(t.audit, "\"refusals_not_audited\":3"), 1);
	assert_int_equal(test_audit_count(t.audit, "refusals over the audit budget"), 1);
	stop(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recv),
		cmocka_unit_test(test_check_sender),
		cmocka_unit_test(test_flood),
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_audit_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
