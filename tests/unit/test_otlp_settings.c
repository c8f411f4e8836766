/* The OTLP endpoint rule without libcurl: the URLs libcurl's parser gave for
 * the same endpoints (recorded), and the endpoints refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "settings/otlp_settings.h"

static void test_endpoint_urls(void **state)
{
	static const char *const cases[][2] = {
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318/v1development/profiles"},
		{"https://c.example/", "https://c.example/v1development/profiles"},
		{"http://c:9/custom/x", "http://c:9/custom/x"},
		{"HTTP://Host:80/", "http://Host:80/v1development/profiles"},
		{"http://host?x=1", "http://host/v1development/profiles?x=1"},
		{"http://host#frag", "http://host/v1development/profiles#frag"},
		{"http://user:pw@host/", "http://user:pw@host/v1development/profiles"},
		{"http://[::1]:4318", "http://[::1]:4318/v1development/profiles"},
		{"http://host:/", "http://host/v1development/profiles"},
		{"http://host/?", "http://host/v1development/profiles"},
		{"http://127.0.0.1:00080/", "http://127.0.0.1:80/v1development/profiles"},
		{"http://u:p@[::1]:0080?x#y", "http://u:p@[::1]:80/v1development/profiles?x#y"},
		{"http://host//", "http://host//"},
		{"http://h/p?q#", "http://h/p?q"},
	};
	static const char *const refused[][2] = {
		{"", "not a URL"},
		{"not a url", "not a URL"},
		{"ftp://x", "the scheme must be http or https"},
		{"http://", "no host"},
		{"http://:80/", "no host"},
		{"http://host:99999", "not a URL"},
		{"http://host:abc/", "not a URL"},
		{"http://ho st/", "not a URL"},
		{"http://[::1/", "not a URL"},
		{"//host", "not a URL"},
		{"http://host/a/../b", "'.' or '..' in the path"},
	};
	char url[256], err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(otlp_settings_endpoint_url(cases[i][0], url, sizeof(url), err,
							    sizeof(err)),
				 0);
		assert_string_equal(url, cases[i][1]);
	}
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(otlp_settings_endpoint_url(refused[i][0], url, sizeof(url), err,
							    sizeof(err)),
				 -EINVAL);
		if (strstr(err, refused[i][1]) == NULL || strstr(err, "--otlp-endpoint") == NULL)
			fail_msg("'%s': '%s' lacks '%s'", refused[i][0], err, refused[i][1]);
	}
	assert_int_equal(otlp_settings_endpoint_url("http://h", url, 10, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too long"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoint_urls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
