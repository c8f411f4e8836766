/* proc_maps_: parsing /proc/PID/maps text from a fixture and from /proc/self/maps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exporter/symbols/proc_maps.h"

static const char fixture[] =
	"00400000-00401000 r--p 00000000 fe:00 1234                               /usr/bin/app\n"
	"00401000-00402000 r-xp 00001000 fe:00 1234                               /usr/bin/app\n"
	"01000000-01021000 rw-p 00000000 00:00 0                                  [heap]\n"
	"7f0000000000-7f0000001000 r-xp 00002000 103:02 99                        /opt/my app/lib x.so\n"
	"7f0000002000-7f0000003000 r-xp 00000000 fe:00 555                        /tmp/gone (deleted)\n"
	"7f0000004000-7f0000005000 rw-p 00000000 00:00 0 \n"
	"7f0000006000-7f0000007000 rw-p 00000000 00:00 0\n"
	"this is not a maps line\n"
	"7f0000008000-7f0000007000 r-xp 00000000 fe:00 1 /backwards\n"
	"7f0000009000-7f000000a000 rwzp 00000000 fe:00 1 /badperms\n"
	"7f000000b000-7f000000c000 r-xp 00000000 fe:00 /noinode\n"
	"7f0000000800-7f0000000900 r-xp 00000000 fe:00 7 /overlaps\n"
	"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]";

static void test_fixture(void **state)
{
	struct proc_maps *m = NULL;
	const struct proc_maps_entry *e;
	char err[256] = "";

	(void)state;
	assert_int_equal(proc_maps_parse(fixture, strlen(fixture), &m, err, sizeof(err)), 0);
	assert_int_equal(m->count, 8);
	assert_int_equal(m->malformed, 5);

	e = proc_maps_find(m, 0x401234);
	assert_non_null(e);
	assert_int_equal(e->start, 0x401000);
	assert_int_equal(e->end, 0x402000);
	assert_int_equal(e->offset, 0x1000);
	assert_int_equal(e->dev_major, 0xfe);
	assert_int_equal(e->dev_minor, 0);
	assert_int_equal(e->inode, 1234);
	assert_string_equal(e->perms, "r-xp");
	assert_true(proc_maps_entry_exec(e));
	assert_string_equal(e->path, "/usr/bin/app");
	assert_false(e->deleted);

	e = proc_maps_find(m, 0x400fff);
	assert_non_null(e);
	assert_false(proc_maps_entry_exec(e));
	assert_null(proc_maps_find(m, 0x402000)); /* end is exclusive */
	assert_null(proc_maps_find(m, 0));
	assert_null(proc_maps_find(m, UINT64_MAX));

	e = proc_maps_find(m, 0x1000010);
	assert_string_equal(e->path, "[heap]");

	e = proc_maps_find(m, 0x7f0000000010);
	assert_string_equal(e->path, "/opt/my app/lib x.so"); /* spaces kept */
	assert_int_equal(e->dev_major, 0x103);
	assert_int_equal(e->dev_minor, 2);
	assert_int_equal(e->offset, 0x2000);

	e = proc_maps_find(m, 0x7f0000002abc);
	assert_string_equal(e->path, "/tmp/gone (deleted)");
	assert_true(e->deleted);

	assert_string_equal(proc_maps_find(m, 0x7f0000004000)->path, "");
	assert_string_equal(proc_maps_find(m, 0x7f0000006000)->path, "");
	/* Last line has no newline. */
	assert_string_equal(proc_maps_find(m, 0x7ffd00001000)->path, "[vdso]");
	/* Skipped lines map nothing. */
	assert_null(proc_maps_find(m, 0x7f0000009000));
	proc_maps_free(m);
}

static void test_malformed(void **state)
{
	static const char junk[] = "garbage\n12345\n0-0 r-xp 0 0:0 0\n";
	struct proc_maps *m = (struct proc_maps *)1;
	char err[256] = "";

	(void)state;
	assert_int_equal(proc_maps_parse(junk, strlen(junk), &m, err, sizeof(err)), -EINVAL);
	assert_null(m);
	assert_non_null(strstr(err, "well-formed"));
	/* Empty maps (a kernel thread) is valid and maps nothing. */
	assert_int_equal(proc_maps_parse("", 0, &m, err, sizeof(err)), 0);
	assert_int_equal(m->count, 0);
	assert_null(proc_maps_find(m, 0x1000));
	proc_maps_free(m);
	/* Overlong numbers are refused, not wrapped. */
	{
		static const char big[] = "11112222333344445-11112222333344446 r-xp 0 0:0 0 /x\n"
					  "1000-2000 r-xp 0 0:0 99999999999999999999999 /y\n"
					  "1000-2000 r-xp 0 0:0 1 /ok\n";

		assert_int_equal(proc_maps_parse(big, strlen(big), &m, err, sizeof(err)), 0);
		assert_int_equal(m->count, 1);
		assert_int_equal(m->malformed, 2);
		proc_maps_free(m);
	}
	assert_int_equal(proc_maps_read_pid(999999999, &m, err, sizeof(err)), -ENOENT);
}

/* A function of this test; it must lie in an executable mapping of our binary. */
void proc_maps_test_marker(void)
{
}

static void test_self(void **state)
{
	struct proc_maps *m = NULL, *m2 = NULL;
	const struct proc_maps_entry *e;
	char err[256], exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int v = 0;

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(proc_maps_read_path("/proc/self/maps", &m, err, sizeof(err)), 0);
	assert_int_equal(m->malformed, 0);
	assert_true(m->count > 5);
	e = proc_maps_find(m, (uint64_t)(uintptr_t)&proc_maps_test_marker);
	assert_non_null(e);
	assert_true(proc_maps_entry_exec(e));
	assert_string_equal(e->path, exe);
	assert_true(e->inode != 0);
	e = proc_maps_find(m, (uint64_t)(uintptr_t)&v);
	assert_non_null(e);
	assert_string_equal(e->path, "[stack]");

	assert_int_equal(proc_maps_read_pid(getpid(), &m2, err, sizeof(err)), 0);
	assert_non_null(proc_maps_find(m2, (uint64_t)(uintptr_t)&proc_maps_test_marker));
	proc_maps_free(m2);
	proc_maps_free(m);
}

/* Cached maps keep each path once (a file's adjacent mappings share it), not
 * the text read: less than the entries plus every line's path. */
static void test_compact(void **state)
{
	static const char text[] =
		"55d0c0000000-55d0c0001000 r--p 00000000 08:01 100 /usr/bin/app\n"
		"55d0c0001000-55d0c0002000 r-xp 00001000 08:01 100 /usr/bin/app\n"
		"55d0c0002000-55d0c0003000 rw-p 00002000 08:01 100 /usr/bin/app\n"
		"55d0c0003000-55d0c0004000 rw-p 00000000 00:00 0 \n"
		"7f0000000000-7f0000001000 r--p 00000000 08:01 200 /usr/lib/libc.so.6\n"
		"7f0000001000-7f0000002000 r-xp 00001000 08:01 200 /usr/lib/libc.so.6\n";
	struct proc_maps *m = NULL;
	const struct proc_maps_entry *e;
	char err[256];

	(void)state;
	assert_int_equal(proc_maps_parse(text, strlen(text), &m, err, sizeof(err)), 0);
	assert_int_equal(m->count, 6);
	assert_ptr_equal(m->entries[0].path, m->entries[2].path);
	assert_ptr_equal(m->entries[4].path, m->entries[5].path);
	assert_string_equal(m->entries[3].path, "");
	e = proc_maps_find(m, 0x7f0000001800ULL);
	assert_non_null(e);
	assert_string_equal(e->path, "/usr/lib/libc.so.6");
	assert_int_equal(e->offset, 0x1000);
	assert_int_equal(proc_maps_memory(m), sizeof(*m) + 6 * sizeof(*m->entries) +
			 sizeof("/usr/bin/app") + sizeof("") + sizeof("/usr/lib/libc.so.6"));
	proc_maps_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_compact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
