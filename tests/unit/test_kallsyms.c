/* kallsyms_: parsing kallsyms text from a fixture and from the live /proc/kallsyms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exporter/symbols/kallsyms.h"

static const char fixture[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t alias_local\n"
	"ffffffff81000100 T do_one\n"
	"ffffffff81000200 t do_two\n"
	"ffffffff81000300 D some_data\n"
	"ffffffff81000400 W weak_fn\n"
	"garbage line\n"
	"ffffffff8100zzzz T bad_hex\n"
	"ffffffff81000500\n"
	"ffffffff81000600 T\n"
	"ffffffff81000700 T name [unterminated\n"
	"ffffffffc0001000 t mod_fn_a\t[mymod]\n"
	"ffffffffc0001080 T mod_fn_b\t[mymod]\n"
	"ffffffffc0002000 t other_fn\t[other]\n"
	"ffffffffc0002010 d other_data\t[other]\n";

static struct kallsyms *parse_fixture(void)
{
	struct kallsyms *k = NULL;
	char err[256] = "";

	assert_int_equal(kallsyms_parse(fixture, strlen(fixture), &k, err, sizeof(err)), 0);
	assert_non_null(k);
	return k;
}

static void test_fixture_lookups(void **state)
{
	struct kallsyms *k = parse_fixture();
	struct kallsyms_result r;

	(void)state;
	assert_false(kallsyms_restricted(k));
	/* Five malformed lines, and only text symbols kept (aliases merged). */
	assert_int_equal(kallsyms_malformed(k), 5);
	assert_int_equal(kallsyms_count(k), 7);
	assert_int_equal(kallsyms_core_base(k), 0xffffffff81000000ULL);

	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000000ULL, &r), 0);
	assert_string_equal(r.name, "_stext"); /* global T preferred over the local alias */
	assert_int_equal(r.offset, 0);
	assert_null(r.module);

	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000150ULL, &r), 0);
	assert_string_equal(r.name, "do_one");
	assert_int_equal(r.offset, 0x50);

	assert_int_equal(kallsyms_lookup(k, 0xffffffff810002ffULL, &r), 0);
	assert_string_equal(r.name, "do_two");
	assert_int_equal(r.offset, 0xff);

	/* Inside the data symbol: no text symbol covers it. */
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000350ULL, &r), -ENOENT);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000410ULL, &r), 0);
	assert_string_equal(r.name, "weak_fn");
	/* Below the first symbol. */
	assert_int_equal(kallsyms_lookup(k, 0xffffffff80000000ULL, &r), -ENOENT);

	assert_int_equal(kallsyms_lookup(k, 0xffffffffc0001090ULL, &r), 0);
	assert_string_equal(r.name, "mod_fn_b");
	assert_string_equal(r.module, "mymod");
	assert_int_equal(r.offset, 0x10);
	assert_int_equal(r.module_base, 0xffffffffc0001000ULL);

	assert_int_equal(kallsyms_lookup(k, 0xffffffffc0002008ULL, &r), 0);
	assert_string_equal(r.name, "other_fn");
	assert_string_equal(r.module, "other");
	assert_int_equal(kallsyms_lookup(k, 0xffffffffc0002010ULL, &r), -ENOENT);
	/* The last symbol of a module does not swallow the address space after it. */
	assert_int_equal(kallsyms_lookup(k, 0xffffffffc0001080ULL + 0x100000, &r), -ENOENT);
	kallsyms_free(k);
}

static void test_restricted(void **state)
{
	static const char text[] =
		"0000000000000000 T _stext\n"
		"0000000000000000 t foo\n"
		"0000000000000000 t bar\t[mod]\n";
	struct kallsyms *k = NULL;
	struct kallsyms_result r;
	char err[256];

	(void)state;
	assert_int_equal(kallsyms_parse(text, strlen(text), &k, err, sizeof(err)), 0);
	assert_true(kallsyms_restricted(k));
	assert_int_equal(kallsyms_lookup(k, 0, &r), -ENOENT);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000000ULL, &r), -ENOENT);
	kallsyms_free(k);
}

/* A core text symbol at address 0 is the lowest: the core base, not the
 * next symbol's address (which would make its module offset wrap). */
static void test_core_symbol_at_zero(void **state)
{
	static const char text[] =
		"0000000000000000 T at_zero\n"
		"0000000000001000 T above\n";
	struct kallsyms *k = NULL;
	struct kallsyms_result r;
	char err[256];

	(void)state;
	assert_int_equal(kallsyms_parse(text, strlen(text), &k, err, sizeof(err)), 0);
	assert_false(kallsyms_restricted(k));
	assert_int_equal(kallsyms_core_base(k), 0);
	assert_int_equal(kallsyms_lookup(k, 0x10, &r), 0);
	assert_string_equal(r.name, "at_zero");
	assert_true(r.module_base <= 0x10);
	kallsyms_free(k);
}

static void test_bad_inputs(void **state)
{
	static const char junk[] = "hello world\n\n\x01\x02\x03\nffff\n";
	struct kallsyms *k = (struct kallsyms *)1;
	char err[256] = "";

	(void)state;
	assert_int_equal(kallsyms_parse("", 0, &k, err, sizeof(err)), -EINVAL);
	assert_null(k);
	assert_true(strlen(err) > 0);
	err[0] = '\0';
	assert_int_equal(kallsyms_parse(junk, sizeof(junk) - 1, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "well-formed"));
	/* No trailing newline, NUL bytes, very long names: parsed or skipped, never a crash. */
	{
		char buf[2048];

		memset(buf, 'x', sizeof(buf));
		memcpy(buf, "ffffffff81000000 T ", 19);
		buf[100] = '\0';
		assert_int_equal(kallsyms_parse(buf, sizeof(buf), &k, err, sizeof(err)), 0);
		kallsyms_free(k);
	}
	assert_int_equal(kallsyms_load("/nonexistent/kallsyms", &k, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/kallsyms"));
}

static void test_load_from_path(void **state)
{
	char path[] = "/tmp/lowprof-kallsyms-XXXXXX";
	struct kallsyms *k = NULL;
	struct kallsyms_result r;
	char err[256];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, fixture, strlen(fixture)), (ssize_t)strlen(fixture));
	close(fd);
	assert_int_equal(kallsyms_load(path, &k, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000101ULL, &r), 0);
	assert_string_equal(r.name, "do_one");
	kallsyms_free(k);
}

/* Find "ADDR T name" for a core-kernel symbol by reading the file ourselves. */
static uint64_t find_in_proc_kallsyms(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[1024];
	uint64_t found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char type, sym[512];
		uint64_t addr;

		if (sscanf(line, "%" SCNx64 " %c %511s", &addr, &type, sym) != 3)
			continue;
		if ((type == 'T' || type == 't') && strcmp(sym, name) == 0 && !strchr(line, '[')) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

static void test_real_kallsyms(void **state)
{
	struct kallsyms *k = NULL;
	struct kallsyms_result r;
	char err[256];
	uint64_t addr = find_in_proc_kallsyms("schedule");

	(void)state;
	assert_int_equal(kallsyms_load("/proc/kallsyms", &k, err, sizeof(err)), 0);
	if (addr == 0) {
		/* kptr_restrict hides addresses from us: the module must say so. */
		assert_true(kallsyms_restricted(k));
		kallsyms_free(k);
		skip();
	}
	assert_false(kallsyms_restricted(k));
	assert_true(kallsyms_count(k) > 1000);
	assert_int_equal(kallsyms_lookup(k, addr, &r), 0);
	assert_string_equal(r.name, "schedule");
	assert_null(r.module);
	assert_int_equal(kallsyms_lookup(k, addr + 4, &r), 0);
	assert_string_equal(r.name, "schedule");
	assert_int_equal(r.offset, 4);
	/* Compact for the exporter's whole life: 16 bytes a symbol, names once. */
	printf("kallsyms: %zu text symbols, %zu bytes held\n", kallsyms_count(k), kallsyms_memory(k));
	assert_true(kallsyms_memory(k) < kallsyms_count(k) * 48);
	kallsyms_free(k);
}

/*
 * __pfx_NAME (the padding before NAME, 6.x kernels) then NAME: NAME's string
 * is the end of the padding's, stored once; both name right, and the table
 * holds 16 bytes a symbol plus the names it could not share.
 */
static void test_shared_names(void **state)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T __pfx_do_one\n"
		"ffffffff81000110 T do_one\n"
		"ffffffff81000200 t __pfx_do_two\n"
		"ffffffff81000210 t do_two\n"
		"ffffffff81000300 t two\n"
		"ffffffffc0001000 t __pfx_mod_fn\t[mymod]\n"
		"ffffffffc0001010 t mod_fn\t[mymod]\n";
	static const char unshared[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T __pfx_do_one\n"
		"ffffffff81000110 T dX_one\n"
		"ffffffff81000200 t __pfx_do_two\n"
		"ffffffff81000210 t dX_two\n"
		"ffffffff81000300 t twX\n"
		"ffffffffc0001000 t __pfx_mod_fn\t[mymod]\n"
		"ffffffffc0001010 t mXd_fn\t[mymod]\n";
	struct kallsyms *k = NULL, *u = NULL;
	struct kallsyms_result r;
	char err[256];

	(void)state;
	assert_int_equal(kallsyms_parse(text, strlen(text), &k, err, sizeof(err)), 0);
	assert_int_equal(kallsyms_count(k), 8);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000108ULL, &r), 0);
	assert_string_equal(r.name, "__pfx_do_one");
	assert_int_equal(r.offset, 8);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000110ULL, &r), 0);
	assert_string_equal(r.name, "do_one");
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000214ULL, &r), 0);
	assert_string_equal(r.name, "do_two");
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000300ULL, &r), 0);
	assert_string_equal(r.name, "two"); /* "two" ends "do_two": shared too */
	assert_int_equal(kallsyms_lookup(k, 0xffffffffc0001010ULL, &r), 0);
	assert_string_equal(r.name, "mod_fn");
	assert_string_equal(r.module, "mymod");
	assert_int_equal(r.module_base, 0xffffffffc0001000ULL);
	/* The same table with names that share nothing holds exactly their bytes more. */
	assert_int_equal(kallsyms_parse(unshared, strlen(unshared), &u, err, sizeof(err)), 0);
	assert_int_equal(kallsyms_count(u), 8);
	assert_int_equal(kallsyms_memory(u) - kallsyms_memory(k),
			 sizeof("do_one") + sizeof("do_two") + sizeof("two") + sizeof("mod_fn"));
	assert_true(kallsyms_memory(u) < 256 + 8 * 16 + sizeof(unshared));
	kallsyms_free(u);
	kallsyms_free(k);
}

/* Module indices are 16 bits: lines past the last index are skipped, counted. */
static void test_module_cap(void **state)
{
	size_t n = 65536 + 10, i, len = 0;
	char *text = malloc(n * 48);
	struct kallsyms *k = NULL;
	struct kallsyms_result r;
	char err[256];

	(void)state;
	assert_non_null(text);
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "%016" PRIx64 " t f%zu\t[m%zu]\n",
				       (uint64_t)(0xffffffffc0000000ULL + i * 0x100), i, i);
	assert_int_equal(kallsyms_parse(text, len, &k, err, sizeof(err)), 0);
	assert_int_equal(kallsyms_count(k), 65534);
	assert_int_equal(kallsyms_malformed(k), n - 65534);
	assert_int_equal(kallsyms_lookup(k, 0xffffffffc0000000ULL + 65533 * 0x100, &r), 0);
	assert_string_equal(r.name, "f65533");
	assert_string_equal(r.module, "m65533");
	assert_int_equal(kallsyms_lookup(k, 0xffffffffc0000000ULL + 65534 * 0x100, &r), 0);
	assert_string_equal(r.name, "f65533"); /* the skipped line names nothing */
	assert_int_equal(r.offset, 0x100);
	kallsyms_free(k);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_lookups),
		cmocka_unit_test(test_restricted),
		cmocka_unit_test(test_core_symbol_at_zero),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_load_from_path),
		cmocka_unit_test(test_real_kallsyms),
		cmocka_unit_test(test_shared_names),
		cmocka_unit_test(test_module_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
