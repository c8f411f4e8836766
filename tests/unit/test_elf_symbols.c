/*
 * elf_symbols_: on a program compiled here (PIE, non-PIE, stripped), checked
 * against nm and readelf; truncated, garbage and corrupted images refused
 * without crashing; the vDSO read from memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporter/symbols/elf_symbols.h"

static const char *const functions[] = { "lowprof_alpha", "lowprof_beta", "lowprof_gamma",
					 "lowprof_hidden", "main" };
#define NFUNCS (sizeof(functions) / sizeof(functions[0]))

struct fixture {
	char dir[256];
	char pie[300], nopie[300], stripped[300];
};

__attribute__((format(printf, 1, 2))) static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int setup(void **state)
{
	static const char *src = LOWPROF_SOURCE_DIR "/tests/programs/symbols/elf_target.c";
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "%s/elfsym-XXXXXX", LOWPROF_BINARY_DIR);
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->pie, sizeof(f->pie), "%s/target-pie", f->dir);
	snprintf(f->nopie, sizeof(f->nopie), "%s/target-nopie", f->dir);
	snprintf(f->stripped, sizeof(f->stripped), "%s/target-stripped", f->dir);
	/* -rdynamic exports the global functions to .dynsym, as a shared library would. */
	if (sh("cc -O0 -fPIE -pie -rdynamic -Wl,--build-id -o %s %s", f->pie, src) ||
	    sh("cc -O0 -fno-pie -no-pie -Wl,--build-id -o %s %s", f->nopie, src) ||
	    sh("cp %s %s && strip --strip-all %s", f->pie, f->stripped, f->stripped))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sh("rm -rf %s", f->dir);
	free(f);
	return 0;
}

static bool nm_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[512], line[512];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char type, sym[256];

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %255s", addr, size, &type, sym) == 4 &&
		    (type == 'T' || type == 't') && strcmp(sym, name) == 0) {
			found = true;
			break;
		}
	}
	pclose(p);
	return found;
}

/* Run cmd and return the first whitespace-delimited word after marker in its output. */
static bool command_word(const char *cmd, const char *marker, char *out, size_t outlen)
{
	char line[1024];
	bool found = false;
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *m = strstr(line, marker);

		if (m && sscanf(m + strlen(marker), " %255s", out) == 1 && strlen(out) < outlen) {
			found = true;
			break;
		}
	}
	pclose(p);
	return found;
}

static struct elf_symbols *open_path(const char *path)
{
	struct elf_symbols *e = NULL;
	char err[256] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	if (elf_symbols_open_fd(fd, &e, err, sizeof(err)) != 0)
		fail_msg("%s: %s", path, err);
	close(fd);
	return e;
}

/* Every function's nm address names it, inside its size and not beyond. */
static void check_functions(const char *path, struct elf_symbols *e, bool stripped)
{
	size_t i;

	for (i = 0; i < NFUNCS; i++) {
		uint64_t addr, size, off = 99;
		const char *name;

		assert_true(nm_symbol(path, functions[i], &addr, &size));
		assert_true(size > 1);
		name = elf_symbols_lookup(e, addr, &off);
		if (stripped && strcmp(functions[i], "lowprof_hidden") == 0) {
			/* Only .symtab knew it. */
			assert_true(name == NULL || strcmp(name, "lowprof_hidden") != 0);
			continue;
		}
		assert_non_null(name);
		assert_string_equal(name, functions[i]);
		assert_int_equal(off, 0);
		name = elf_symbols_lookup(e, addr + size - 1, &off);
		assert_string_equal(name, functions[i]);
		assert_int_equal(off, size - 1);
		name = elf_symbols_lookup(e, addr + size, &off);
		assert_true(name == NULL || strcmp(name, functions[i]) != 0);
	}
	assert_null(elf_symbols_lookup(e, 0, NULL));
}

/* The file offset of a function, from readelf's .text header: it maps back to nm's vaddr. */
static void check_offsets(const char *path, struct elf_symbols *e)
{
	char cmd[512], line[512];
	uint64_t text_addr = 0, text_off = 0, addr, size, vaddr = 0;
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW %s", path);
	p = popen(cmd, "r");
	while (fgets(line, sizeof(line), p)) {
		char *t = strstr(line, " .text ");

		if (t && sscanf(t, " .text %*s %" SCNx64 " %" SCNx64, &text_addr, &text_off) == 2)
			found = true;
	}
	pclose(p);
	assert_true(found);
	assert_true(nm_symbol(path, "lowprof_gamma", &addr, &size));
	assert_int_equal(elf_symbols_file_offset_to_vaddr(e, addr - text_addr + text_off, &vaddr), 0);
	assert_int_equal(vaddr, addr);
	assert_string_equal(elf_symbols_lookup(e, vaddr, NULL), "lowprof_gamma");
	assert_int_equal(elf_symbols_file_offset_to_vaddr(e, UINT64_MAX - 4, &vaddr), -ENOENT);
}

static void check_build_id(const char *path, struct elf_symbols *e)
{
	char cmd[512], want[256];

	snprintf(cmd, sizeof(cmd), "readelf -n %s", path);
	assert_true(command_word(cmd, "Build ID:", want, sizeof(want)));
	assert_non_null(elf_symbols_build_id(e));
	assert_string_equal(elf_symbols_build_id(e), want);
}

static void test_pie(void **state)
{
	struct fixture *f = *state;
	struct elf_symbols *e = open_path(f->pie);

	assert_true(elf_symbols_has_symtab(e));
	check_functions(f->pie, e, false);
	check_offsets(f->pie, e);
	check_build_id(f->pie, e);
	elf_symbols_free(e);
}

static void test_nopie(void **state)
{
	struct fixture *f = *state;
	struct elf_symbols *e = open_path(f->nopie);
	uint64_t addr, size;

	/* A fixed-address executable: nm's addresses are the 0x400000-based ones. */
	assert_true(nm_symbol(f->nopie, "main", &addr, &size));
	assert_true(addr >= 0x400000);
	check_functions(f->nopie, e, false);
	check_offsets(f->nopie, e);
	check_build_id(f->nopie, e);
	elf_symbols_free(e);
}

static void test_stripped(void **state)
{
	struct fixture *f = *state;
	struct elf_symbols *full = open_path(f->pie);
	struct elf_symbols *e = open_path(f->stripped);
	uint64_t addr, size;
	const char *name;

	assert_false(elf_symbols_has_symtab(e));
	assert_true(elf_symbols_count(e) < elf_symbols_count(full));
	/* nm cannot read a stripped file; the unstripped twin has the same layout. */
	check_functions(f->pie, e, true);
	assert_true(nm_symbol(f->pie, "lowprof_alpha", &addr, &size));
	name = elf_symbols_lookup(e, addr + 2, NULL);
	assert_string_equal(name, "lowprof_alpha");
	assert_string_equal(elf_symbols_build_id(e), elf_symbols_build_id(full));
	elf_symbols_free(e);
	elf_symbols_free(full);
}

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static int open_bytes(struct fixture *f, const void *buf, size_t len, char *err, size_t errlen)
{
	struct elf_symbols *e = NULL;
	char path[400];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/bytes", f->dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	ret = elf_symbols_open_fd(fd, &e, err, errlen);
	close(fd);
	if (ret == 0) {
		/* Whatever was accepted must be safe to query. */
		elf_symbols_lookup(e, 0x1000, NULL);
		elf_symbols_build_id(e);
		elf_symbols_free(e);
	} else {
		assert_null(e);
	}
	return ret;
}

static void test_malformed(void **state)
{
	struct fixture *f = *state;
	char err[256];
	size_t len, i;
	char *img = slurp(f->pie, &len);
	char *garbage = malloc(len);
	unsigned seed = 12345;
	int accepted = 0;

	for (i = 0; i < len; i++)
		garbage[i] = (char)rand_r(&seed);
	err[0] = '\0';
	assert_int_equal(open_bytes(f, garbage, len, err, sizeof(err)), -EINVAL);
	assert_true(strlen(err) > 0);
	assert_int_equal(open_bytes(f, img, 0, err, sizeof(err)), -EINVAL);
	assert_int_equal(open_bytes(f, img, 40, err, sizeof(err)), -EINVAL);
	assert_int_equal(open_bytes(f, img, len / 2, err, sizeof(err)), -EINVAL);
	assert_int_equal(open_bytes(f, img, len - 1, err, sizeof(err)), -EINVAL);
	/* ELF magic followed by garbage. */
	memcpy(garbage, img, 16);
	assert_int_equal(open_bytes(f, garbage, len, err, sizeof(err)), -EINVAL);
	assert_int_equal(open_bytes(f, img, len, err, sizeof(err)), 0);

	/* Random corruption of headers and tables: refused or accepted, never a crash. */
	for (i = 0; i < 300; i++) {
		char *copy = malloc(len);
		int j;

		memcpy(copy, img, len);
		for (j = 0; j < 8; j++) {
			size_t at = (size_t)rand_r(&seed) % (j < 4 ? 64 : len);

			copy[at] = (char)rand_r(&seed);
		}
		accepted += open_bytes(f, copy, len, err, sizeof(err)) == 0;
		{
			struct elf_symbols *e = NULL;

			if (elf_symbols_open_mem(copy, len, &e, err, sizeof(err)) == 0)
				elf_symbols_free(e);
		}
		free(copy);
	}
	print_message("corrupted images accepted: %d of 300\n", accepted);
	free(garbage);
	free(img);
}

static void test_memory_image(void **state)
{
	struct fixture *f = *state;
	struct elf_symbols *e = NULL;
	char err[256];
	size_t len;
	char *img = slurp(f->pie, &len);

	assert_int_equal(elf_symbols_open_mem(img, len, &e, err, sizeof(err)), 0);
	check_functions(f->pie, e, false);
	check_build_id(f->pie, e);
	elf_symbols_free(e);
	assert_int_equal(elf_symbols_open_mem(img, 64, &e, err, sizeof(err)), -EINVAL);
	free(img);
}

/* The vDSO: an ELF image in our own memory, sized from /proc/self/maps. */
static void test_vdso(void **state)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	struct elf_symbols *e = NULL;
	uint64_t start, end, vaddr;
	char line[512], err[256];
	bool found = false;
	FILE *maps;
	const char *name;

	(void)state;
	if (!base)
		skip();
	maps = fopen("/proc/self/maps", "r");
	while (fgets(line, sizeof(line), maps)) {
		if (strstr(line, "[vdso]") && sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2)
			found = true;
	}
	fclose(maps);
	assert_true(found);
	assert_int_equal(start, base);
	assert_int_equal(elf_symbols_open_mem((void *)base, end - start, &e, err, sizeof(err)), 0);
	assert_true(elf_symbols_count(e) > 2);
	assert_int_equal(elf_symbols_file_offset_to_vaddr(e, 0x800, &vaddr), 0);
	/* Whichever alias wins, clock_gettime is named. */
	name = NULL;
	for (vaddr = 0; vaddr < end - start && !name; vaddr++) {
		const char *n = elf_symbols_lookup(e, vaddr, NULL);

		if (n && strstr(n, "clock_gettime") && !strstr(n, "64"))
			name = n;
	}
	assert_non_null(name);
	elf_symbols_free(e);
}

/*
 * The table a file keeps while the window uses it: 16 bytes a symbol and the
 * kept names, not the reading's 40-byte entries, aliases and slack. Checked
 * on the libc this test runs with (thousands of symbols, many aliases).
 */
static void test_compact(void **state)
{
	char line[1024], path[512] = "";
	struct elf_symbols *e;
	FILE *maps = fopen("/proc/self/maps", "r");
	size_t bytes, n;

	(void)state;
	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s", p);
			break;
		}
	}
	fclose(maps);
	if (path[0] == '\0')
		skip();
	e = open_path(path);
	n = elf_symbols_count(e);
	bytes = elf_symbols_memory(e);
	printf("%s: %zu symbols, %zu bytes held (%.1f a symbol)\n", path, n, bytes,
	       (double)bytes / (double)n);
	assert_true(n > 1000);
	assert_true(bytes < n * 48);
	elf_symbols_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_memory_image),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_compact),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
