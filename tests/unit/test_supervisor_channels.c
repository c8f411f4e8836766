#define _GNU_SOURCE /* accept4 */
/*
 * What the supervisor hears and says: component notifications (parsed
 * strictly), the status report, systemd's notification socket and the status
 * socket, all over real sockets.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/component.h"
#include "supervisor/notify_message.h"
#include "supervisor/sd_notify.h"
#include "supervisor/status_report.h"
#include "supervisor/status_socket.h"

static int parse(const char *s, struct notify_message *m)
{
	char err[128];

	return notify_message_parse(s, strlen(s), m, err, sizeof(err));
}

static void test_notify_good(void **state __attribute__((unused)))
{
	struct notify_message m;

	assert_int_equal(parse("ready", &m), 0);
	assert_int_equal(m.kind, NOTIFY_READY);
	assert_int_equal(parse("ready\n", &m), 0);
	assert_int_equal(parse("ping", &m), 0);
	assert_int_equal(m.kind, NOTIFY_PING);
	assert_int_equal(parse("state tier=high frequency_hz=11 overhead_pct=0.42 unwind=fp", &m), 0);
	assert_int_equal(m.kind, NOTIFY_STATE);
	assert_int_equal(m.npairs, 4);
	assert_string_equal(m.pairs[0].key, "tier");
	assert_string_equal(m.pairs[0].value, "high");
	assert_string_equal(m.pairs[2].value, "0.42");
}

static void test_notify_refused(void **state __attribute__((unused)))
{
	static const char *const bad[] = {
		"", "\n", "readyx", "Ready", "hello", "state", "state ", "state tier",
		"state =x", "state tier=", "state TIER=x", "state tier=a\"b", "state tier=a b=",
		"state a=1  b=2", "state a=1\nb=2", "state k=\x01", "ping ping",
	};
	struct notify_message m;
	char big[700];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &m) == 0)
			fail_msg("accepted '%s'", bad[i]);
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "state a=", 8);
	assert_int_equal(parse(big, &m), -1);
	/* 17 pairs: one more than allowed. */
	strcpy(big, "state");
	for (i = 0; i < 17; i++)
		strcat(big, " k=v");
	assert_int_equal(parse(big, &m), -1);
}

static void test_status_report(void **state __attribute__((unused)))
{
	struct restart_settings rs;
	struct component comps[2];
	struct status_meta meta = {.pid = 42, .now_ms = 10000, .started_ms = 0,
				   .output_dir = "/tmp/x", .version = "9.9"};
	struct notify_message m;
	char buf[4096];
	int n;

	restart_settings_default(&rs);
	component_init(&comps[0], "loader", &rs);
	component_init(&comps[1], "controller", &rs);
	comps[0].state = COMPONENT_RUNNING;
	comps[0].pid = 100;
	comps[0].started_ms = 4000;
	comps[0].restart.total_restarts = 2;
	snprintf(comps[0].last_exit, sizeof(comps[0].last_exit), "killed by signal 9 (Killed)");
	comps[1].state = COMPONENT_FAILED;
	assert_int_equal(parse("state tier=critical frequency_hz=5 unwind=fp overhead_pct=0.3 drop_pct=7.5", &m), 0);
	memcpy(comps[1].state_pairs, m.pairs, sizeof(m.pairs));
	comps[1].nstate_pairs = m.npairs;

	n = status_report_json(&meta, comps, 2, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "\"name\": \"loader\", \"state\": \"running\", \"pid\": 100, \"restarts\": 2, \"uptime_s\": 6.0"));
	assert_non_null(strstr(buf, "\"state\": \"failed\""));
	assert_non_null(strstr(buf, "\"tier\": \"critical\", \"frequency_hz\": 5"));
	{
		/* The JSON must parse: check with python3. */
		FILE *p = popen("python3 -c 'import json,sys; d=json.load(sys.stdin); "
				"assert d[\"components\"][1][\"reported\"][\"drop_pct\"] == 7.5'", "w");

		assert_non_null(p);
		fputs(buf, p);
		assert_int_equal(pclose(p), 0);
	}
	n = status_report_text(&meta, comps, 2, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "throttle: tier critical, 5 Hz, fp unwinding, overhead 0.3%, drops 7.5%"));
	assert_non_null(strstr(buf, "killed by signal 9"));
	/* With the CPUs sampled (cpus=N): said after the frequency. */
	assert_int_equal(parse("state tier=high frequency_hz=11 unwind=fp overhead_pct=0.1 drop_pct=0.00 "
			       "cpus=1", &m), 0);
	memcpy(comps[1].state_pairs, m.pairs, sizeof(m.pairs));
	comps[1].nstate_pairs = m.npairs;
	n = status_report_text(&meta, comps, 2, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "throttle: tier high, 11 Hz on 1 CPU, fp unwinding"));
	assert_int_equal(status_report_json(&meta, comps, 2, buf, 64), -1);
	/* The loader's off-CPU counters (--off-cpu): a line of their own. */
	assert_int_equal(parse("state tier=healthy frequency_hz=19 unwind=dwarf max_depth=64 "
			       "sample_divisor=1 paused=0 failsafe=0 offcpu_records=120 offcpu_short=4000 "
			       "offcpu_sampled_out=90000 offcpu_drops=0 offcpu_probability_pct=6.2500 "
			       "offcpu_attached=0", &m), 0);
	memcpy(comps[0].state_pairs, m.pairs, sizeof(m.pairs));
	comps[0].nstate_pairs = m.npairs;
	n = status_report_text(&meta, comps, 2, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "off-CPU: probability 6.2500% (detached by the throttle), 120 records, "
				    "4000 below the threshold, 90000 switches sampled out, 0 dropped"));
	{
		/* With an audit log: its counters, suppressed = refused + failed. */
		static struct audit_sink sink;

		sink.records = 40;
		sink.refused = 1;
		sink.failed = 2;
		sink.rotations = 3;
		sink.reopens = 1;
		meta.audit = &sink;
		assert_true(status_report_text(&meta, comps, 2, buf, sizeof(buf)) > 0);
		assert_non_null(strstr(buf, "audit log: 40 records, 3 suppressed, 3 rotations, 1 reopens"));
		assert_true(status_report_json(&meta, comps, 2, buf, sizeof(buf)) > 0);
		assert_non_null(strstr(buf, "\"audit\": {\"records\": 40, \"suppressed\": 3, \"rotations\": 3, \"reopens\": 1}"));
	}
}

static void test_sd_notify(void **state __attribute__((unused)))
{
	static const char *const paths[] = {"/tmp/lowprof-test-notify.sock", "@lowprof-test-notify"};
	struct sockaddr_un sa;
	struct sd_notify n;
	char buf[128];
	socklen_t len;
	ssize_t got;
	size_t i;
	int fd;

	for (i = 0; i < 2; i++) {
		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		strcpy(sa.sun_path, paths[i]);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(paths[i]));
		if (paths[i][0] == '@')
			sa.sun_path[0] = '\0';
		else
			unlink(paths[i]);
		fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		assert_true(fd >= 0);
		assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
		setenv("NOTIFY_SOCKET", paths[i], 1);
		setenv("WATCHDOG_USEC", "4000000", 1);
		unsetenv("WATCHDOG_PID");
		assert_int_equal(sd_notify_open(&n), 0);
		assert_int_equal(n.watchdog_ms, 2000);
		assert_int_equal(sd_notify_send(&n, "READY=1"), 0);
		got = recv(fd, buf, sizeof(buf) - 1, 0);
		assert_int_equal(got, 7);
		buf[got] = '\0';
		assert_string_equal(buf, "READY=1");
		sd_notify_close(&n);
		close(fd);
		if (paths[i][0] == '/')
			unlink(paths[i]);
	}
	/* A watchdog meant for another process is not ours. */
	setenv("NOTIFY_SOCKET", "@lowprof-test-notify", 1);
	setenv("WATCHDOG_PID", "1", 1);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path + 1, "lowprof-test-notify");
	assert_int_equal(bind(fd, (struct sockaddr *)&sa,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 20)), 0);
	assert_int_equal(sd_notify_open(&n), 0);
	assert_int_equal(n.watchdog_ms, 0);
	sd_notify_close(&n);
	close(fd);
	/* Unusable values are refused, and no NOTIFY_SOCKET means no-op. */
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	assert_int_equal(sd_notify_open(&n), -1);
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sd_notify_open(&n), 0);
	assert_int_equal(n.fd, -1);
	assert_int_equal(sd_notify_send(&n, "READY=1"), 0);
}

/* A run directory made in advance by someone else, or writable by others, or
 * a symlink: refused, nothing created in it. */
static void test_hostile_run_dir(void **state __attribute__((unused)))
{
	char top[] = "/tmp/lowprof-rundir.XXXXXX", dir[96], sock[128], err[256];
	struct stat st;

	assert_non_null(mkdtemp(top));
	snprintf(dir, sizeof(dir), "%s/run", top);
	snprintf(sock, sizeof(sock), "%s/%s", dir, STATUS_SOCKET_NAME);
	assert_int_equal(mkdir(dir, 0700), 0);
	if (geteuid() == 0) {
		/* Owned by another user (nobody: what an attacker running as it made). */
		assert_int_equal(chown(dir, 65534, 65534), 0);
		assert_int_equal(status_socket_listen(dir, err, sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "owned by uid 65534"));
		assert_int_equal(chown(dir, 0, 0), 0);
	}
	/* Ours, but world-writable. */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(status_socket_listen(dir, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by others"));
	assert_int_not_equal(lstat(sock, &st), 0);
	assert_int_equal(rmdir(dir), 0);
	/* A symlink to a directory of ours. */
	assert_int_equal(symlink(top, dir), 0);
	assert_int_equal(status_socket_listen(dir, err, sizeof(err)), -ENOTDIR);
	assert_int_equal(unlink(dir), 0);
	assert_int_equal(rmdir(top), 0);
}

static void test_status_socket(void **state __attribute__((unused)))
{
	char dir[] = "/tmp/lowprof-status.XXXXXX", req[STATUS_REQUEST_MAX], out[256], err[256];
	uid_t uid;
	int lfd, cfd, second;
	pid_t child;

	assert_non_null(mkdtemp(dir));
	lfd = status_socket_listen(dir, err, sizeof(err));
	assert_true(lfd >= 0);
	/* A second instance finds the socket alive and backs off. */
	second = status_socket_listen(dir, err, sizeof(err));
	assert_int_equal(second, -EADDRINUSE);
	assert_non_null(strstr(err, "another lowprof is running"));

	child = fork();
	if (child == 0) {
		int rc = status_socket_query(dir, "status", out, sizeof(out), err, sizeof(err));

		_exit(rc == 0 && strcmp(out, "all good\n") == 0 ? 0 : 1);
	}
	/* The second instance's liveness probe is queued first: a connection that
	 * says nothing, which the server drops. */
	for (;;) {
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0) {
			usleep(10000);
			continue;
		}
		if (status_socket_read_request(cfd, 2000, req, sizeof(req), &uid) == 0)
			break;
		close(cfd);
	}
	assert_string_equal(req, "status");
	assert_int_equal(uid, getuid());
	send(cfd, "all good\n", 9, 0);
	close(cfd);
	{
		int st;

		waitpid(child, &st, 0);
		assert_int_equal(st, 0);
	}
	close(lfd);
	/* The listener is gone: its socket file is stale and a new instance takes it over. */
	lfd = status_socket_listen(dir, err, sizeof(err));
	assert_true(lfd >= 0);
	close(lfd);
	/* No instance at all: a clear error. */
	snprintf(out, sizeof(out), "%s/none", dir);
	assert_true(status_socket_query(out, "status", req, sizeof(req), err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "no lowprof running"));
	snprintf(out, sizeof(out), "rm -rf %s", dir);
	assert_int_equal(system(out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_good),
		cmocka_unit_test(test_notify_refused),
		cmocka_unit_test(test_status_report),
		cmocka_unit_test(test_sd_notify),
		cmocka_unit_test(test_status_socket),
		cmocka_unit_test(test_hostile_run_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
