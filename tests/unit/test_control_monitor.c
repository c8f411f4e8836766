/*
 * The loader's control socket as a monitor (loader/control_server.c through
 * loader/monitor.c): a rogue peer's malformed frame, unknown message type,
 * out-of-range value, flood of requests, wrong uid, an fd (SCM_RIGHTS) and
 * control data truncated (MSG_CTRUNC) are each refused or cut off, and each is
 * an audit record (one JSON line) with the peer's pid and uid from
 * SCM_CREDENTIALS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_audit_capture.h"
#include "test_fd_count.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader/audit_log.h"
#include "loader/control_server.h"

#define SEC 1000000000ULL

struct fx {
	struct control_server cs;
	int peer;
	int audit;
	unsigned applies;
};

static const struct throttle healthy = {0, 19, LOWPROF_UNWIND_DWARF, 64, 1, false, 0, false};
static const struct throttle critical = {2, 5, LOWPROF_UNWIND_FP, 32, 1, false, 0, false};

static int fake_apply(void *arg, const struct throttle *t, char *err, size_t errlen)
{
	struct fx *f = arg;

	(void)t;
	(void)err;
	(void)errlen;
	f->applies++;
	return 0;
}

static int fake_counters(void *arg, struct control_counters *out)
{
	(void)arg;
	memset(out, 0, sizeof(*out));
	out->online_cpus = 2;
	return 0;
}

/* The server, checking its sender's uid, parent (ppid) and (unless NULL) program. */
static void start_expecting_parent(struct fx *f, uid_t expected_uid, unsigned rate,
				   const char *exe, pid_t ppid)
{
	struct control_server_config cfg;
	struct control_ops ops = {fake_apply, fake_counters, NULL};
	int sv[2], one = 1;

	memset(f, 0, sizeof(*f));
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	/* As the supervisor does: before any byte is written. */
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
	f->peer = sv[1];
	f->audit = memfd_create("audit", MFD_CLOEXEC);
	assert_true(f->audit >= 0);
	audit_log_open(dup(f->audit));
	memset(&cfg, 0, sizeof(cfg));
	cfg.limits.max_frequency_hz = 19;
	cfg.limits.max_divisor = 64;
	cfg.max_depth = 64;
	cfg.interval_ns = SEC;
	cfg.failsafe = critical;
	cfg.check_peer = true;
	cfg.expected_uid = expected_uid;
	cfg.expected_ppid = ppid;
	cfg.expected_exe = exe;
	cfg.rate_per_s = rate;
	cfg.rate_burst = rate;
	ops.arg = f;
	control_server_init(&f->cs, sv[0], &cfg, &ops, &healthy, 10 * SEC);
}

/* The test itself is the "controller": its parent, the "supervisor". */
static void start_expecting(struct fx *f, uid_t expected_uid, unsigned rate, const char *exe)
{
	start_expecting_parent(f, expected_uid, rate, exe, getppid());
}

static void start(struct fx *f, uid_t expected_uid, unsigned rate)
{
	start_expecting(f, expected_uid, rate, NULL);
}

static void stop(struct fx *f)
{
	control_server_close(&f->cs);
	audit_log_close();
	close(f->peer);
	close(f->audit);
}

static void send_env(struct fx *f, Lowprof__Ctl__Envelope *env)
{
	assert_int_equal(wire_send(f->peer, env), 0);
}

static void send_hello(struct fx *f)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__Hello h = LOWPROF__CTL__HELLO__INIT;

	h.version = WIRE_PROTOCOL_VERSION;
	h.component = LOWPROF__CTL__COMPONENT__COMPONENT_CONTROLLER;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO;
	env.hello = &h;
	send_env(f, &env);
}

static void send_set(struct fx *f, unsigned freq)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__SetThrottle st = LOWPROF__CTL__SET_THROTTLE__INIT;
	Lowprof__Ctl__ThrottleState s;
	struct throttle t = critical;

	t.frequency_hz = freq;
	throttle_to_wire(&t, &s);
	st.state = &s;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE;
	env.set_throttle = &st;
	send_env(f, &env);
}

static void test_unknown_and_out_of_range(void **state)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__ThrottleState s;
	struct fx f;
	char needle[64];

	(void)state;
	start(&f, getuid(), 0);
	send_hello(&f);
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), 0);
	/* A message type the loader sends, never answers. */
	throttle_to_wire(&healthy, &s);
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE;
	env.state = &s;
	send_env(&f, &env);
	send_set(&f, 1000); /* above the user's -F */
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), 0);
	assert_true(f.cs.mon.fd >= 0);
	assert_int_equal(f.applies, 0);
	assert_int_equal(test_audit_count(f.audit, "\"event\":\"request_refused\""), 2);
	snprintf(needle, sizeof(needle), "\"pid\":%d,\"uid\":%u", (int)getpid(), (unsigned)getuid());
	assert_int_equal(test_audit_count(f.audit, needle), 2);
	assert_int_equal(test_audit_count(f.audit, "\"errno\":95"), 1); /* EOPNOTSUPP */
	assert_int_equal(test_audit_count(f.audit, "\"errno\":22"), 1); /* EINVAL */
	stop(&f);
}

static void test_malformed_cut_off(void **state)
{
	static const uint8_t garbage[8] = {4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
	struct fx f;

	(void)state;
	start(&f, getuid(), 0);
	assert_int_equal(write(f.peer, garbage, sizeof(garbage)), 8);
	assert_true(control_server_handle(&f.cs, 10 * SEC) < 0);
	assert_int_equal(f.cs.mon.fd, -1);
	assert_int_equal(test_audit_count(f.audit, "\"event\":\"peer_cut_off\""), 1);
	/* The fail-safe applied itself: sampling goes on at the critical tier. */
	assert_true(f.cs.failsafe);
	assert_int_equal(test_audit_count(f.audit, "\"result\":\"ok\""), 0);
	stop(&f);
}

static void test_flood_rate_limited(void **state)
{
	struct fx f;
	int i;

	(void)state;
	start(&f, getuid(), 5);
	send_hello(&f);
	for (i = 0; i < 20; i++)
		send_set(&f, 5);
	/* One wake-up, no time passing: the bucket (5) runs dry. */
	for (i = 0; i < 4; i++)
		control_server_handle(&f.cs, 10 * SEC);
	assert_true(f.cs.mon.fd >= 0);
	assert_true(f.cs.mon.st.rate_limited >= 15);
	assert_true(f.applies <= 1);
	/* Audited, but at most one line per second of flood. */
	assert_int_equal(test_audit_count(f.audit, "rate limit exceeded"), 1);
	/* A second later the bucket has refilled: requests are served again. */
	send_set(&f, 5);
	control_server_handle(&f.cs, 12 * SEC);
	assert_int_equal(test_audit_count(f.audit, "rate limit exceeded"), 1);
	stop(&f);
}

static void test_wrong_uid_cut_off(void **state)
{
	struct fx f;
	char needle[64];
	int status;
	pid_t pid;

	(void)state;
	if (getuid() != 0)
		skip(); /* a second uid needs root to switch to */
	start(&f, 4242, 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
			_exit(2);
		send_hello(&f);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), -EACCES);
	assert_int_equal(f.cs.mon.fd, -1);
	assert_int_equal(test_audit_count(f.audit, "\"event\":\"peer_cut_off\""), 1);
	snprintf(needle, sizeof(needle), "\"pid\":%d,\"uid\":65534", (int)pid);
	assert_int_equal(test_audit_count(f.audit, needle), 1);
	assert_int_equal(test_audit_count(f.audit, "is not the controller's uid 4242"), 1);
	stop(&f);
}

/* Right uid, but not a child of our supervisor (here: a grandchild of the
 * test), alive while its message is judged: cut off. */
static void test_wrong_parent_cut_off(void **state)
{
	struct fx f;
	int status, gate[2];
	char go = 0;
	pid_t pid;

	(void)state;
	start(&f, getuid(), 0);
	assert_int_equal(pipe(gate), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(gate[1]);
		send_hello(&f);
		/* Stay until the server has looked at our parent. */
		_exit(read(gate[0], &go, 1) < 0);
	}
	close(gate[0]);
	assert_int_equal(poll(&(struct pollfd){.fd = f.cs.mon.fd, .events = POLLIN}, 1, 5000), 1);
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), -EACCES);
	assert_int_equal(test_audit_count(f.audit, "is not a child of the supervisor"), 1);
	assert_int_equal(f.cs.mon.fd, -1);
	close(gate[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	stop(&f);
}

/* Right uid and parent (the test is its own "supervisor"'s child), but not
 * lowprof-controller: a sibling component that got the socket is cut off. */
static void test_wrong_program_cut_off(void **state)
{
	struct fx f;

	(void)state;
	start_expecting(&f, getuid(), 0, "lowprof-controller");
	send_hello(&f);
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), -EACCES);
	assert_int_equal(test_audit_count(f.audit, ", not lowprof-controller"), 1);
	assert_int_equal(f.cs.mon.fd, -1);
	stop(&f);

	/* The same sender passes once its program is the one expected. */
	start_expecting(&f, getuid(), 0, "test_control_monitor");
	send_hello(&f);
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), 0);
	assert_int_not_equal(f.cs.mon.fd, -1);
	stop(&f);
}

/* A killed controller's last message, read after it was reaped (a slow
 * loader start): dropped on the record, the channel kept for the next. */
static void test_exited_sender_dropped(void **state)
{
	struct fx f;
	int status;
	pid_t pid;

	(void)state;
	start(&f, getuid(), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		send_hello(&f);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), 0);
	assert_int_equal(test_audit_count(f.audit, "has exited: its message is dropped"), 1);
	assert_int_equal(test_audit_count(f.audit, "\"event\":\"peer_cut_off\""), 0);
	assert_true(f.cs.mon.fd >= 0);
	assert_false(f.cs.failsafe);
	/* The real controller (this process) is served on the same socket. */
	send_hello(&f);
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), 0);
	assert_true(f.cs.mon.fd >= 0);
	assert_false(f.cs.failsafe);
	stop(&f);
}

/*
 * A checked sender's next messages are not read from /proc again (the loader
 * holds the process by a pidfd), but a process that takes its pid once it
 * has exited is: here a grandchild of the test, made to get the exited
 * child's pid (clone3's set_tid), is no child of the "supervisor" (the test)
 * and is cut off, as it would have been had the pid been new.
 */
static pid_t clone_with_pid(pid_t want)
{
	struct clone_args args;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	args.set_tid = (uint64_t)(uintptr_t)&want;
	args.set_tid_size = 1;
	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

static void test_sender_pid_reused(void **state)
{
	int status, gate[2], ready[2];
	char go = 0;
	struct fx f;
	pid_t first, middle, second;

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: choosing a pid (clone3 set_tid) needs root\n");
		skip();
	}
	start_expecting_parent(&f, getuid(), 0, "test_control_monitor", getpid());
	assert_int_equal(pipe(gate), 0);
	first = fork();
	assert_true(first >= 0);
	if (first == 0) {
		close(gate[1]);
		send_hello(&f);
		send_set(&f, 11);
		send_set(&f, 5);
		_exit(read(gate[0], &go, 1) < 0);
	}
	close(gate[0]);
	assert_int_equal(poll(&(struct pollfd){.fd = f.cs.mon.fd, .events = POLLIN}, 1, 5000), 1);
	usleep(100000); /* all three sent */
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), 0);
	assert_true(f.cs.mon.fd >= 0);
	/* Three messages, one read of the sender. */
	assert_int_equal(f.cs.mon.st.sender_reads, 1);
	close(gate[1]);
	assert_int_equal(waitpid(first, &status, 0), first);

	/* Its pid, taken by a process that is not a child of the test. */
	assert_int_equal(pipe(gate), 0);
	assert_int_equal(pipe(ready), 0);
	middle = fork();
	assert_true(middle >= 0);
	if (middle == 0) {
		close(gate[1]);
		close(ready[0]);
		second = clone_with_pid(first);
		if (second == 0) {
			send_hello(&f);
			(void)!write(ready[1], "s", 1);
			_exit(read(gate[0], &go, 1) < 0);
		}
		_exit(second == first && waitpid(second, &status, 0) == second ? 0 : 3);
	}
	close(gate[0]);
	close(ready[1]);
	if (read(ready[0], &go, 1) != 1) {
		/* No message: the pid was taken meanwhile (a busy host), or refused. */
		close(gate[1]);
		assert_int_equal(waitpid(middle, &status, 0), middle);
		fail_msg("no process got pid %d again (clone3 set_tid: status %d)", (int)first,
			 WEXITSTATUS(status));
	}
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), -EACCES);
	assert_int_equal(test_audit_count(f.audit, "is not a child of the supervisor"), 1);
	assert_int_equal(f.cs.mon.st.sender_reads, 2);
	assert_int_equal(f.cs.mon.fd, -1);
	close(gate[1]);
	close(ready[0]);
	assert_int_equal(waitpid(middle, &status, 0), middle);
	assert_int_equal(WEXITSTATUS(status), 0);
	stop(&f);
}

/* A Hello frame as the controller would send it. */
static size_t hello_frame(uint8_t *buf, size_t len)
{
	Lowprof__Ctl__Envelope env = LOWPROF__CTL__ENVELOPE__INIT;
	Lowprof__Ctl__Hello h = LOWPROF__CTL__HELLO__INIT;
	ssize_t n;

	h.version = WIRE_PROTOCOL_VERSION;
	h.component = LOWPROF__CTL__COMPONENT__COMPONENT_CONTROLLER;
	env.payload_case = LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO;
	env.hello = &h;
	n = wire_encode(&env, buf, len);
	assert_true(n > 0);
	return (size_t)n;
}

/* A valid Hello with fds attached: copies 1 is an fd the control protocol
 * never carries, copies 16 more than the loader has room for (MSG_CTRUNC).
 * Either way: cut off, audited, the fail-safe applied, every fd closed. */
static void check_fds_cut_off(int copies, const char *reason)
{
	uint8_t frame[64];
	struct fx f;
	size_t len;
	int fd, before;

	start(&f, getuid(), 0);
	len = hello_frame(frame, sizeof(frame));
	fd = memfd_create("stray", MFD_CLOEXEC);
	assert_true(fd >= 0);
	before = test_fd_count();
	assert_int_equal(test_send_fds(f.peer, frame, len, fd, copies), (ssize_t)len);
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), -EPROTO);
	assert_int_equal(f.cs.mon.fd, -1);
	assert_true(f.cs.failsafe);
	/* The server's end is closed, and nothing that came with the message is left open. */
	assert_int_equal(test_fd_count(), before - 1);
	assert_int_equal(test_audit_count(f.audit, "\"event\":\"peer_cut_off\""), 1);
	assert_int_equal(test_audit_count(f.audit, reason), 1);
	close(fd);
	stop(&f);
}

static void test_fd_cut_off(void **state)
{
	(void)state;
	check_fds_cut_off(1, "a message carrying a file descriptor");
}

static void test_ctrunc_cut_off(void **state)
{
	(void)state;
	check_fds_cut_off(16, "control data truncated (MSG_CTRUNC)");
}

/* A message that is more than one frame, or less: the framing holds on SEQPACKET. */
static void test_not_one_frame_cut_off(void **state)
{
	uint8_t frame[128];
	struct fx f;
	size_t len;

	(void)state;
	start(&f, getuid(), 0);
	len = hello_frame(frame, sizeof(frame));
	memcpy(frame + len, frame, len);
	assert_int_equal(send(f.peer, frame, 2 * len, 0), (ssize_t)(2 * len));
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), -EPROTO);
	assert_int_equal(test_audit_count(f.audit, "is not exactly one frame"), 1);
	stop(&f);

	start(&f, getuid(), 0);
	assert_int_equal(send(f.peer, frame, len - 1, 0), (ssize_t)(len - 1));
	assert_int_equal(control_server_handle(&f.cs, 10 * SEC), -EPROTO);
	assert_int_equal(test_audit_count(f.audit, "is not exactly one frame"), 1);
	stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_and_out_of_range),
		cmocka_unit_test(test_malformed_cut_off),
		cmocka_unit_test(test_flood_rate_limited),
		cmocka_unit_test(test_wrong_uid_cut_off),
		cmocka_unit_test(test_wrong_parent_cut_off),
		cmocka_unit_test(test_wrong_program_cut_off),
		cmocka_unit_test(test_exited_sender_dropped),
		cmocka_unit_test(test_sender_pid_reused),
		cmocka_unit_test(test_fd_cut_off),
		cmocka_unit_test(test_ctrunc_cut_off),
		cmocka_unit_test(test_not_one_frame_cut_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
