/* notify: the ping interval follows the liveness timeout, and pings are
 * rate-limited to it, over a real socket on the notification fd. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipc/lowprof_fds.h"
#include "ipc/notify.h"

/* Messages waiting on our end, each checked to be a ping. */
static int pings_waiting(int fd)
{
	char buf[64];
	ssize_t n;
	int count = 0;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		assert_int_equal(n, 4);
		assert_memory_equal(buf, "ping", 4);
		count++;
	}
	return count;
}

static void test_interval(void **state)
{
	(void)state;
	assert_int_equal(notify_ping_interval_ms(), 1000); /* until told */
	notify_set_liveness_timeout(5);
	assert_int_equal(notify_ping_interval_ms(), 2000);
	notify_set_liveness_timeout(1);
	assert_int_equal(notify_ping_interval_ms(), 400);
	notify_set_liveness_timeout(3600);
	assert_int_equal(notify_ping_interval_ms(), 1440000);
	notify_set_liveness_timeout(0); /* not a timeout: unchanged */
	assert_int_equal(notify_ping_interval_ms(), 1440000);
}

static void test_rate_limited(void **state)
{
	struct timespec pause = {0, 250 * 1000000L};
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(dup2(sv[0], LOWPROF_FD_NOTIFY), LOWPROF_FD_NOTIFY);
	notify_set_liveness_timeout(1); /* a ping per 400 ms, 360 with the slack */
	notify_ping();
	notify_ping();
	notify_ping();
	assert_int_equal(pings_waiting(sv[1]), 1);
	nanosleep(&pause, NULL); /* 250 ms: still too soon */
	notify_ping();
	assert_int_equal(pings_waiting(sv[1]), 0);
	nanosleep(&pause, NULL); /* 500 ms since the first */
	notify_ping();
	notify_ping();
	assert_int_equal(pings_waiting(sv[1]), 1);
	close(LOWPROF_FD_NOTIFY);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_rate_limited),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
