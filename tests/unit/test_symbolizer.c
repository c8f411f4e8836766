/*
 * symbolizer_: real processes, real files. Names a function of this test, a
 * libc function, a vDSO function, a kernel symbol; a child that has exited;
 * unmapped and unnamed addresses; the maps refresh and its rate limit; the
 * cache bound. Frames as (file, offset) by identity: this test's own binary
 * named without any maps read, a file the source does not know, the window's
 * expiry; vDSO offsets.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mono_clock.h"
#include "exporter/symbols/proc_maps.h"
#include "exporter/symbols/symbolizer.h"

/* Non-static so the linker keeps a symbol for it. */
__attribute__((noinline)) int lowprof_symbolizer_test_marker(int x)
{
	return x * 7;
}

static uint64_t marker_addr(void)
{
	return (uint64_t)(uintptr_t)&lowprof_symbolizer_test_marker;
}

/* The symbolizer does not own its source: the tests keep theirs here. */
static struct proc_source *sources[32];
static size_t nsources;

static struct proc_source *direct(const char *debug_root, const char *kallsyms)
{
	struct proc_source *src = proc_source_direct_new("/proc", debug_root, kallsyms);

	assert_non_null(src);
	assert_true(nsources < sizeof(sources) / sizeof(sources[0]));
	sources[nsources++] = src;
	return src;
}

static int free_sources(void **state)
{
	(void)state;
	while (nsources > 0)
		proc_source_free(sources[--nsources]);
	return 0;
}

static struct symbolizer *new_sym(void)
{
	char err[256] = "";
	struct symbolizer *s = symbolizer_new(direct("/usr/lib/debug", "/proc/kallsyms"), err, sizeof(err));

	if (!s)
		fail_msg("symbolizer_new: %s", err);
	return s;
}

static void self_exe(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	assert_true(n > 0);
	buf[n] = '\0';
}

/* "Build ID:" from readelf -n, or "" */
static void readelf_build_id(const char *path, char *out, size_t outlen)
{
	char cmd[4200], line[512];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *m = strstr(line, "Build ID: ");

		if (m) {
			/* The id up to the line's end, cut to the caller's buffer. */
			m += 10;
			m[strcspn(m, " \t\r\n")] = '\0';
			snprintf(out, outlen, "%s", m);
		}
	}
	pclose(p);
}

static void test_own_function(void **state)
{
	struct symbolizer *s = new_sym();
	struct frame f;
	char exe[4096], want_id[256];

	(void)state;
	self_exe(exe, sizeof(exe));
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)getpid(), marker_addr() + 3, &f), 0);
	assert_true(f.symbolized);
	assert_false(f.kernel);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	assert_string_equal(f.module, exe);
	assert_int_equal(f.address, marker_addr() + 3);
	assert_true(f.map_start <= f.address && f.address < f.map_end);
	assert_int_equal(f.module_offset, f.address - f.map_start + f.map_file_offset);
	readelf_build_id(exe, want_id, sizeof(want_id));
	if (want_id[0]) {
		assert_non_null(f.build_id);
		assert_string_equal(f.build_id, want_id);
	}
	symbolizer_free(s);
}

/* Rebuilding the string table frees every name a cached stack points to: the
 * stack generation must change for every pid, so none is reused. */
static void test_trim_invalidates_stacks(void **state)
{
	struct symbolizer *s = new_sym();
	uint32_t pid = (uint32_t)getpid();
	uint64_t before;
	struct frame f;

	(void)state;
	assert_int_equal(symbolizer_user_frame(s, pid, marker_addr() + 3, &f), 0);
	assert_true(symbolizer_load_kernel_symbols(s));
	before = symbolizer_stack_generation(s, pid);
	assert_true(before != 0);
	/* Under its cap, nothing is rebuilt and the generation stays. */
	assert_int_equal(symbolizer_trim_strings(s, (size_t)1 << 40), 0);
	assert_int_equal(symbolizer_stack_generation(s, pid), before);
	assert_int_equal(symbolizer_trim_strings(s, 0), 1);
	assert_true(symbolizer_stack_generation(s, pid) > before);
	/* Names still resolve after the rebuild. */
	assert_int_equal(symbolizer_user_frame(s, pid, marker_addr() + 3, &f), 0);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	symbolizer_free(s);
}

static void test_libc_function(void **state)
{
	struct symbolizer *s = new_sym();
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	struct frame f;
	char want_id[256];

	(void)state;
	assert_non_null(fn);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)getpid(), (uint64_t)(uintptr_t)fn, &f), 0);
	assert_true(f.symbolized);
	/* getpid and __getpid are aliases at one address. */
	assert_non_null(strstr(f.function, "getpid"));
	assert_non_null(strstr(f.module, "libc.so"));
	readelf_build_id(f.module, want_id, sizeof(want_id));
	assert_string_equal(f.build_id, want_id);
	symbolizer_free(s);
}

/* clock_gettime's address in our vDSO, from its .dynsym read here with libelf. */
static uint64_t vdso_symbol(const char *want)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	uint64_t found = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (!base)
		return 0;
	elf_version(EV_CURRENT);
	/* The ELF header, program and section tables of the vDSO fit its first pages. */
	elf = elf_memory((char *)base, 2 * (size_t)sysconf(_SC_PAGESIZE));
	assert_non_null(elf);
	for (scn = elf_nextscn(elf, NULL); scn && !found; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			gelf_getsym(d, (int)i, &sym);
			if (strcmp(elf_strptr(elf, sh.sh_link, sym.st_name), want) == 0)
				found = base + sym.st_value; /* the vDSO is linked at 0 */
		}
	}
	elf_end(elf);
	return found;
}

static void test_vdso_function(void **state)
{
	struct symbolizer *s = new_sym();
	uint64_t addr = vdso_symbol("__vdso_clock_gettime");
	struct frame f;

	(void)state;
	if (!addr) {
		symbolizer_free(s);
		skip();
	}
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)getpid(), addr + 1, &f), 0);
	assert_true(f.symbolized);
	assert_non_null(strstr(f.function, "clock_gettime"));
	assert_string_equal(f.module, "[vdso]");
	assert_int_equal(f.module_offset, addr + 1 - f.map_start);
	symbolizer_free(s);
}

/* The vDSO kind: an offset from the vDSO's start, named from the exporter's own. */
static void test_vdso_offset(void **state)
{
	struct symbolizer *s = new_sym();
	uint64_t addr = vdso_symbol("__vdso_clock_gettime"), base = getauxval(AT_SYSINFO_EHDR);
	struct symbolizer_stats st;
	struct frame f;

	(void)state;
	if (!addr || !base) {
		symbolizer_free(s);
		skip();
	}
	assert_int_equal(symbolizer_vdso_frame(s, addr - base + 1, &f), 0);
	assert_true(f.symbolized);
	assert_non_null(strstr(f.function, "clock_gettime"));
	assert_string_equal(f.module, "[vdso]");
	assert_int_equal(f.module_offset, addr - base + 1);
	assert_int_equal(f.map_start, 0);
	assert_true(f.map_end > f.module_offset);
	symbolizer_stats(s, &st);
	assert_int_equal(st.maps_reads, 0);
	symbolizer_free(s);
}

/* The file offset of addr in this process, from our own maps (not the symbolizer's). */
static uint64_t own_file_offset(uint64_t addr, char *path, size_t pathlen)
{
	struct proc_maps *m = NULL;
	const struct proc_maps_entry *e;
	char err[128];
	uint64_t off;

	assert_int_equal(proc_maps_read_path("/proc/self/maps", &m, err, sizeof(err)), 0);
	e = proc_maps_find(m, addr);
	assert_non_null(e);
	off = addr - e->start + e->offset;
	snprintf(path, pathlen, "%s", e->path);
	proc_maps_free(m);
	return off;
}

/*
 * This test's binary by identity, as a sample's file list names it: the
 * symbol at a file offset (mapped to its ELF address through PT_LOAD), the
 * module is the path the source found it by, the mapping is the whole file,
 * and no process's maps are read, whatever pid the sample was of.
 */
static void test_file_frame(void **state)
{
	struct proc_source *src = direct("/usr/lib/debug", "/proc/kallsyms");
	char err[256] = "", exe[4096], want_id[256];
	struct symbolizer *s = symbolizer_new(src, err, sizeof(err));
	struct lowprof_file_id id;
	struct symbolizer_stats st;
	struct stat sb;
	struct frame f;
	uint64_t off = own_file_offset(marker_addr(), exe, sizeof(exe));

	(void)state;
	assert_non_null(s);
	assert_int_equal(proc_source_direct_add_file(src, exe, &id), 0);
	assert_int_equal(symbolizer_file_frame(s, &id, off + 3, &f), 0);
	assert_true(f.symbolized);
	assert_false(f.kernel);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	assert_string_equal(f.module, exe);
	assert_int_equal(f.address, off + 3);
	assert_int_equal(f.module_offset, off + 3);
	assert_int_equal(f.map_start, 0);
	assert_int_equal(f.map_file_offset, 0);
	assert_int_equal(stat(exe, &sb), 0);
	assert_int_equal(f.map_end, (uint64_t)sb.st_size);
	readelf_build_id(exe, want_id, sizeof(want_id));
	if (want_id[0])
		assert_string_equal(f.build_id, want_id);
	/* An offset in the file but in no function: "basename+0xOFF". */
	assert_int_equal(symbolizer_file_frame(s, &id, 0x10, &f), 0);
	assert_false(f.symbolized);
	assert_non_null(strstr(f.function, "+0x10"));
	/* The file was asked for once, and no maps at all. */
	symbolizer_stats(s, &st);
	assert_int_equal(st.maps_reads, 0);
	assert_int_equal(st.files_cached, 1);
	assert_int_equal(st.file_errors, 0);
	symbolizer_free(s);
}

/* A file the source does not know: named by its identity, and reported as
 * provisional (1: not to be cached). Entries unused since a time expire. */
static void test_file_unknown_and_expire(void **state)
{
	struct proc_source *src = direct("/usr/lib/debug", "/proc/kallsyms");
	char err[256] = "", exe[4096];
	struct symbolizer *s = symbolizer_new(src, err, sizeof(err));
	struct lowprof_file_id id, ghost = {.ino = 424242, .dev = (8u << 20) | 2, .gen = 1};
	struct symbolizer_stats st;
	struct frame f;
	uint64_t off = own_file_offset(marker_addr(), exe, sizeof(exe)), t;

	(void)state;
	assert_non_null(s);
	symbolizer_set_keep_file_bytes(s, 0); /* idleness alone (the floor: test_expiry_floor) */
	assert_int_equal(symbolizer_file_frame(s, &ghost, 0x1136, &f), 1);
	assert_string_equal(f.module, "[file 8:2 inode 424242]");
	assert_string_equal(f.function, "[file 8:2 inode 424242]+0x1136");
	assert_false(f.symbolized);
	assert_null(f.build_id);
	assert_int_equal(proc_source_direct_add_file(src, exe, &id), 0);
	t = mono_ns();
	assert_int_equal(symbolizer_file_frame(s, &id, off, &f), 0);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)getpid(), marker_addr(), &f), 0);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 3); /* the ghost, by identity, through the maps */
	assert_int_equal(st.pids_cached, 1);
	/* Only what was not used since t goes: the ghost. */
	assert_int_equal(symbolizer_expire(s, t), 1);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 2);
	assert_int_equal(st.expired, 1);
	/* Nothing used after now: all goes, and comes back on demand. */
	assert_int_equal(symbolizer_expire(s, mono_ns() + 1), 3);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached + st.pids_cached, 0);
	assert_int_equal(symbolizer_file_frame(s, &id, off, &f), 0);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	/* Unused for the idle time: gone, however long the window (before_ns 0). */
	assert_int_equal(symbolizer_expire(s, 0), 0);
	symbolizer_set_idle_ns(s, 0); /* raised to 1 ms */
	usleep(5000);
	assert_int_equal(symbolizer_expire(s, 0), 1);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 0);
	assert_int_equal(st.expired, 5);
	symbolizer_free(s);
}

/* The test binary (exe: its path) and libc, registered with a direct source
 * by identity; returns the marker function's offset in the test binary. */
static uint64_t add_own_and_libc(struct proc_source *src, struct lowprof_file_id *own,
				 struct lowprof_file_id *libc, char *exe, size_t exelen)
{
	uint64_t off = own_file_offset(marker_addr(), exe, exelen);
	Dl_info info;

	assert_true(dladdr(dlsym(RTLD_DEFAULT, "getpid"), &info) != 0);
	assert_int_equal(proc_source_direct_add_file(src, exe, own), 0);
	assert_int_equal(proc_source_direct_add_file(src, info.dli_fname, libc), 0);
	return off;
}

/*
 * The floor of expiry: tables unused for the idle time stay while all that
 * is held fits the floor (an idle host's few files, named a sample now and
 * then, are not read again each minute); past it the oldest go first, down
 * to the floor.
 */
static void test_expiry_floor(void **state)
{
	struct proc_source *src = direct("/usr/lib/debug", "/proc/kallsyms");
	char err[256] = "", exe[4096];
	struct symbolizer *s = symbolizer_new(src, err, sizeof(err));
	struct lowprof_file_id own, libc;
	struct proc_source_stats ps0, ps1;
	struct symbolizer_stats st;
	size_t own_bytes, both_bytes;
	struct frame f;
	uint64_t off = add_own_and_libc(src, &own, &libc, exe, sizeof(exe));

	(void)state;
	assert_non_null(s);
	assert_int_equal(symbolizer_file_frame(s, &own, off, &f), 0);
	symbolizer_stats(s, &st);
	own_bytes = st.file_bytes;
	assert_int_equal(symbolizer_file_frame(s, &libc, 0x10, &f), 0);
	symbolizer_stats(s, &st);
	both_bytes = st.file_bytes;
	assert_true(own_bytes > 0 && both_bytes > own_bytes);
	assert_true(both_bytes <= SYMBOLIZER_DEFAULT_KEEP_FILE_BYTES);
	/* Everything unused since: at the default floor both files stay, and
	 * are named again without asking the source. */
	assert_int_equal(symbolizer_expire(s, mono_ns() + 1), 0);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 2);
	proc_source_get_stats(src, &ps0);
	assert_int_equal(symbolizer_file_frame(s, &libc, 0x10, &f), 0);
	assert_int_equal(symbolizer_file_frame(s, &own, off, &f), 0);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	proc_source_get_stats(src, &ps1);
	assert_int_equal(ps1.requests, ps0.requests);
	/* A floor that holds the newest alone: the older one (libc) goes. */
	symbolizer_set_keep_file_bytes(s, both_bytes - 1);
	assert_int_equal(symbolizer_expire(s, mono_ns() + 1), 1);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 1);
	assert_int_equal(st.file_bytes, own_bytes);
	assert_int_equal(symbolizer_file_frame(s, &own, off, &f), 0);
	proc_source_get_stats(src, &ps1);
	assert_int_equal(ps1.requests, ps0.requests);
	/* Used within the idle time: kept whatever the floor. */
	symbolizer_set_keep_file_bytes(s, 0);
	assert_int_equal(symbolizer_expire(s, 0), 0);
	/* No floor: unused since now, it goes, and is asked for again. */
	assert_int_equal(symbolizer_expire(s, mono_ns() + 1), 1);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 0);
	assert_int_equal(symbolizer_file_frame(s, &own, off, &f), 0);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	proc_source_get_stats(src, &ps1);
	assert_true(ps1.requests > ps0.requests);
	symbolizer_free(s);
}

static uint64_t kallsyms_addr(const char *name)
{
	FILE *k = fopen("/proc/kallsyms", "r");
	char line[1024];
	uint64_t found = 0;

	while (k && fgets(line, sizeof(line), k)) {
		char type, sym[512];
		uint64_t addr;

		if (sscanf(line, "%" SCNx64 " %c %511s", &addr, &type, sym) == 3 &&
		    strcmp(sym, name) == 0 && !strchr(line, '[')) {
			found = addr;
			break;
		}
	}
	if (k)
		fclose(k);
	return found;
}

static void test_kernel(void **state)
{
	struct symbolizer *s = new_sym();
	uint64_t addr = kallsyms_addr("schedule");
	struct symbolizer_stats st;
	struct frame f;

	(void)state;
	symbolizer_set_kernel_addresses(s, true); /* --kernel-addresses */
	assert_int_equal(symbolizer_kernel_frame(s, 0x10, &f), 0);
	assert_false(f.symbolized);
	assert_true(f.kernel);
	assert_string_equal(f.function, "[kernel]+0x10");
	assert_string_equal(f.module, "[kernel.kallsyms]");
	if (addr == 0) {
		assert_non_null(symbolizer_kernel_note(s));
		symbolizer_free(s);
		skip();
	}
	assert_null(symbolizer_kernel_note(s));
	assert_int_equal(symbolizer_kernel_frame(s, addr + 8, &f), 0);
	assert_true(f.symbolized);
	assert_true(f.kernel);
	assert_string_equal(f.function, "schedule");
	assert_string_equal(f.module, "[kernel.kallsyms]");
	assert_int_equal(f.address, addr + 8);
	assert_int_equal(f.module_offset, addr + 8 - kallsyms_addr("_stext"));
	symbolizer_stats(s, &st);
	assert_true(st.kernel_symbols > 1000);
	assert_false(st.kernel_restricted);
	assert_int_equal(st.lookups, 2);
	assert_int_equal(st.misses, 1);
	symbolizer_free(s);
}

/* By default no raw kernel address leaves the symbolizer: named frames carry
 * their offset in the module, unnamed ones are "[kernel]" (KASLR stays). */
static void test_kernel_addresses_hidden(void **state)
{
	struct symbolizer *s = new_sym();
	uint64_t addr = kallsyms_addr("schedule");
	struct frame f;

	(void)state;
	/* Below any kernel symbol: unnamed. */
	assert_int_equal(symbolizer_kernel_frame(s, 0x10, &f), 0);
	assert_false(f.symbolized);
	assert_string_equal(f.function, "[kernel]");
	assert_int_equal(f.address, 0); /* below the core kernel: no offset either */
	if (addr == 0) {
		symbolizer_free(s);
		skip();
	}
	assert_int_equal(symbolizer_kernel_frame(s, addr + 8, &f), 0);
	assert_string_equal(f.function, "schedule");
	assert_int_equal(f.address, addr + 8 - kallsyms_addr("_stext"));
	assert_int_equal(f.module_offset, f.address);
	symbolizer_free(s);
}

static void test_kernel_restricted(void **state)
{
	char path[] = "/tmp/lowprof-ksyms-XXXXXX", err[256];
	static const char text[] = "0000000000000000 T _stext\n0000000000000000 T schedule\n";
	struct symbolizer *s;
	struct symbolizer_stats st;
	struct frame f;
	int fd = mkstemp(path);

	(void)state;
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	s = symbolizer_new(direct(NULL, path), err, sizeof(err));
	assert_non_null(s);
	symbolizer_set_kernel_addresses(s, true);
	/* kallsyms is asked for at the first kernel frame, not before. */
	assert_null(symbolizer_kernel_note(s));
	assert_int_equal(symbolizer_kernel_frame(s, 0xffffffff81000000ULL, &f), 0);
	unlink(path);
	assert_string_equal(f.function, "[kernel]+0xffffffff81000000");
	assert_non_null(strstr(symbolizer_kernel_note(s), "kptr_restrict"));
	symbolizer_stats(s, &st);
	assert_true(st.kernel_restricted);
	symbolizer_free(s);

	s = symbolizer_new(direct(NULL, "/nonexistent/kallsyms"), err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(symbolizer_kernel_frame(s, 0xffffffff81000000ULL, &f), 0);
	assert_false(f.symbolized);
	assert_non_null(strstr(symbolizer_kernel_note(s), "kallsyms unreadable"));
	symbolizer_free(s);
}

static void test_unmapped_and_unnamed(void **state)
{
	struct symbolizer *s = new_sym();
	struct symbolizer_stats st;
	struct frame f;
	char exe[4096];
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096 + 128];
	uint64_t ro_start = 0, ro_off = 0;

	(void)state;
	self_exe(exe, sizeof(exe));
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)getpid(), 0x10, &f), 0);
	assert_string_equal(f.function, "[unknown]");
	assert_null(f.module);
	assert_false(f.symbolized);
	assert_int_equal(f.map_start, 0);
	/* A pid that never existed. */
	assert_int_equal(symbolizer_user_frame(s, 0x7ffffff0u, marker_addr(), &f), 0);
	assert_string_equal(f.function, "[unknown]");

	/* A non-executable mapping of our own binary: named by file offset. */
	while (fgets(line, sizeof(line), maps)) {
		char perms[8], path[4096];

		if (sscanf(line, "%" SCNx64 "-%*x %7s %" SCNx64 " %*s %*u %4095s", &ro_start, perms,
			   &ro_off, path) == 4 &&
		    strcmp(path, exe) == 0 && perms[2] != 'x')
			break;
		ro_start = 0;
	}
	fclose(maps);
	assert_true(ro_start != 0);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)getpid(), ro_start + 0x10, &f), 0);
	assert_false(f.symbolized);
	{
		char want[4200];

		snprintf(want, sizeof(want), "%s+0x%" PRIx64, strrchr(exe, '/') + 1, ro_off + 0x10);
		assert_string_equal(f.function, want);
	}
	assert_string_equal(f.module, exe);
	assert_int_equal(f.module_offset, ro_off + 0x10);
	symbolizer_stats(s, &st);
	assert_int_equal(st.lookups, 3);
	assert_int_equal(st.misses, 3);
	assert_int_equal(st.pids_cached, 2);
	symbolizer_free(s);
}

/* New mappings are found by a re-read, but not more than once a second. */
static void test_refresh(void **state)
{
	struct symbolizer *s = new_sym();
	struct symbolizer_stats st;
	struct frame f;
	uint64_t before;
	char *page;

	(void)state;
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)getpid(), marker_addr(), &f), 0);
	symbolizer_stats(s, &st);
	before = st.maps_reads;
	page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)getpid(), (uintptr_t)page + 0x10, &f), 0);
	assert_string_equal(f.function, "[unknown]");
	symbolizer_stats(s, &st);
	assert_int_equal(st.maps_reads, before);
	usleep(1100 * 1000);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)getpid(), (uintptr_t)page + 0x10, &f), 0);
	assert_string_equal(f.function, "[anon]+0x10");
	assert_string_equal(f.module, "[anon]");
	symbolizer_stats(s, &st);
	assert_int_equal(st.maps_reads, before + 1);
	munmap(page, 4096);
	symbolizer_free(s);
}

static void reap(pid_t pid)
{
	char path[64];
	struct stat sb;
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	assert_int_equal(stat(path, &sb), -1); /* really gone */
}

/* A child that waits until *release (a pipe's write end) is closed, then
 * execs /bin/sleep 5 (exec_sleep) or exits through the marker. */
static pid_t fork_held(int *release, bool exec_sleep)
{
	int pipefd[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pipefd[1]);
		while (read(pipefd[0], &c, 1) > 0)
			;
		if (exec_sleep)
			execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(exec_sleep ? 127 : lowprof_symbolizer_test_marker(0));
	}
	close(pipefd[0]);
	*release = pipefd[1];
	return pid;
}

/* Until pid's executable path holds name (at most 2 s): the path into exe. */
static void wait_exe(pid_t pid, const char *name, char *exe, size_t len)
{
	char link[64];
	ssize_t n;
	int i;

	exe[0] = '\0';
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	for (i = 0; i < 200 && !strstr(exe, name); i++) {
		usleep(10 * 1000);
		n = readlink(link, exe, len - 1);
		exe[n > 0 ? n : 0] = '\0';
	}
	assert_non_null(strstr(exe, name));
}

/* The start of pid's first executable mapping of the file exe. */
static uint64_t text_start(pid_t pid, const char *exe)
{
	char path[64], line[4096 + 128];
	uint64_t text = 0;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "r");
	while (maps && fgets(line, sizeof(line), maps) && !text) {
		if (strstr(line, " r-xp ") && strstr(line, exe))
			sscanf(line, "%" SCNx64, &text);
	}
	if (maps)
		fclose(maps);
	assert_true(text != 0);
	return text;
}

/*
 * A process whose maps were read before its exec (a wrapper such as nice, a
 * shell's child): its new program's addresses are named once a sample with
 * another image_id says it runs another program, not a refresh a second
 * later. The same image_id reads nothing.
 */
static void test_image_change_reads_again(void **state)
{
	struct symbolizer *s = new_sym();
	struct symbolizer_stats st;
	char exe[4096];
	uint64_t text, gen, reads;
	struct frame f;
	int release;
	pid_t pid;

	(void)state;
	pid = fork_held(&release, true);
	/* kallsyms read: stack generations are settled from here on. */
	assert_int_equal(symbolizer_kernel_frame(s, 0xffffffff81000000ull, &f), 0);
	/* Before its exec: our own program. */
	symbolizer_note_image(s, (uint32_t)pid, 41);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, marker_addr(), &f), 0);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	gen = symbolizer_stack_generation(s, (uint32_t)pid);
	assert_true(gen != 0);
	symbolizer_stats(s, &st);
	reads = st.maps_reads;
	close(release);
	wait_exe(pid, "sleep", exe, sizeof(exe));
	text = text_start(pid, exe);
	/* The old maps, read less than a second ago: not sleep's code. */
	symbolizer_note_image(s, (uint32_t)pid, 41);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, text + 0x20, &f), 0);
	assert_true(f.module == NULL || strcmp(f.module, exe) != 0);
	assert_int_equal(symbolizer_stack_generation(s, (uint32_t)pid), gen);
	symbolizer_stats(s, &st);
	assert_int_equal(st.maps_reads, reads);
	/* A sample past the exec. */
	symbolizer_note_image(s, (uint32_t)pid, 42);
	assert_int_equal(symbolizer_stack_generation(s, (uint32_t)pid), 0); /* maps unread */
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, text + 0x20, &f), 0);
	assert_non_null(f.module);
	assert_string_equal(f.module, exe);
	assert_true(symbolizer_stack_generation(s, (uint32_t)pid) > gen);
	gen = symbolizer_stack_generation(s, (uint32_t)pid);
	symbolizer_stats(s, &st);
	assert_int_equal(st.image_changes, 1);
	assert_int_equal(st.maps_reads, reads + 1);
	/* More of the new program: nothing changes. */
	symbolizer_note_image(s, (uint32_t)pid, 42);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, text + 0x20, &f), 0);
	assert_string_equal(f.module, exe);
	assert_int_equal(symbolizer_stack_generation(s, (uint32_t)pid), gen);
	symbolizer_stats(s, &st);
	assert_int_equal(st.image_changes, 1);
	assert_int_equal(st.maps_reads, reads + 1);
	kill(pid, SIGKILL);
	reap(pid);
	symbolizer_free(s);
}

/* A child symbolized while alive is still named after it has exited. */
static void test_exited_child(void **state)
{
	struct symbolizer *s = new_sym();
	const char *first;
	struct frame f;
	int release;
	pid_t pid;

	(void)state;
	pid = fork_held(&release, false);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, marker_addr(), &f), 0);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	first = f.function;
	close(release);
	reap(pid);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, marker_addr() + 1, &f), 0);
	assert_true(f.symbolized);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	assert_ptr_equal(f.function, first); /* interned */
	/* Unmapped in a dead process: the failed re-read keeps the maps. */
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, 0x10, &f), 0);
	assert_string_equal(f.function, "[unknown]");
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, marker_addr(), &f), 0);
	assert_true(f.symbolized);
	symbolizer_free(s);
}

/*
 * A short-lived program whose maps were read while it ran but whose file was
 * first needed after it exited: the file is found by path and inode.
 */
static void test_exited_exec(void **state)
{
	struct symbolizer *s = new_sym();
	char exe[4096] = "", want_id[256], prefix[64];
	uint64_t text;
	struct frame f;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/sleep", "sleep", "1", (char *)NULL);
		_exit(127);
	}
	wait_exe(pid, "sleep", exe, sizeof(exe));
	/* An unmapped address: reads the maps, opens no file. */
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, 0x10, &f), 0);
	text = text_start(pid, exe);
	kill(pid, SIGKILL);
	reap(pid);
	assert_int_equal(symbolizer_user_frame(s, (uint32_t)pid, text + 0x20, &f), 0);
	assert_string_equal(f.module, exe);
	readelf_build_id(exe, want_id, sizeof(want_id));
	assert_non_null(f.build_id); /* the file was read after the process died */
	assert_string_equal(f.build_id, want_id);
	if (!f.symbolized) {
		snprintf(prefix, sizeof(prefix), "%s+0x", strrchr(exe, '/') + 1);
		assert_memory_equal(f.function, prefix, strlen(prefix));
	}
	symbolizer_free(s);
}

/*
 * A stripped binary whose full symbol table lives in a separate debug file
 * under DEBUG_ROOT/.build-id/xx/rest.debug (as Debian's -dbgsym packages
 * install them): a static function only the debug file names.
 */
static void test_separate_debug_file(void **state)
{
	static const char prog_src[] =
		"static volatile unsigned long x;\n"
		"static void __attribute__((noinline)) lowprof_hidden_worker(void) { for (;;) x++; }\n"
		"int main(void) { lowprof_hidden_worker(); return 0; }\n";
	char dir[] = "/tmp/lowprof-debugfile.XXXXXX", cmd[1024], path[512], id[128], sub[600];
	char err[256], unnamed[256];
	struct symbolizer *plain, *with_debug;
	struct frame f;
	unsigned long long vaddr = 0;
	pid_t child;
	FILE *p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/prog.c", dir);
	p = fopen(path, "w");
	assert_non_null(p);
	fputs(prog_src, p);
	fclose(p);
	/* -no-pie: the function's run-time address is its link-time address. */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && cc -O1 -g -no-pie -Wl,--build-id -o prog prog.c && "
		 "objcopy --only-keep-debug prog prog.debug && strip --strip-all prog", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "nm %s/prog.debug | awk '$3 == \"lowprof_hidden_worker\" { print $1 }'", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%llx", &vaddr), 1);
	pclose(p);
	snprintf(path, sizeof(path), "%s/prog", dir);
	readelf_build_id(path, id, sizeof(id));
	assert_true(strlen(id) > 8);

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* It spins forever: it must not outlive a failed assertion. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(path, "prog", (char *)NULL);
		_exit(127);
	}
	usleep(200000);

	/* Without a debug file: the stripped binary cannot name it. */
	plain = symbolizer_new(direct("", "/proc/kallsyms"), err, sizeof(err));
	assert_non_null(plain);
	assert_int_equal(symbolizer_user_frame(plain, (uint32_t)child, vaddr, &f), 0);
	assert_false(f.symbolized);
	snprintf(unnamed, sizeof(unnamed), "%s", f.function);
	assert_non_null(strstr(unnamed, "prog+0x"));
	assert_string_equal(f.build_id, id);

	/* With the debug file where -dbgsym packages put it: named. */
	snprintf(sub, sizeof(sub), "mkdir -p %s/root/.build-id/%.2s && cp %s/prog.debug %s/root/.build-id/%.2s/%s.debug",
		 dir, id, dir, dir, id, id + 2);
	assert_int_equal(system(sub), 0);
	snprintf(sub, sizeof(sub), "%s/root", dir);
	with_debug = symbolizer_new(direct(sub, "/proc/kallsyms"), err, sizeof(err));
	assert_non_null(with_debug);
	assert_int_equal(symbolizer_user_frame(with_debug, (uint32_t)child, vaddr, &f), 0);
	assert_true(f.symbolized);
	assert_string_equal(f.function, "lowprof_hidden_worker");
	symbolizer_free(with_debug);

	/* A debug file whose build id differs (another build) is not used. */
	snprintf(sub, sizeof(sub), "cd %s && cc -O2 -g -no-pie -Wl,--build-id -o other prog.c && "
		 "objcopy --only-keep-debug other other.debug && cp other.debug root/.build-id/%.2s/%s.debug",
		 dir, id, id + 2);
	assert_int_equal(system(sub), 0);
	snprintf(sub, sizeof(sub), "%s/root", dir);
	with_debug = symbolizer_new(direct(sub, "/proc/kallsyms"), err, sizeof(err));
	assert_non_null(with_debug);
	assert_int_equal(symbolizer_user_frame(with_debug, (uint32_t)child, vaddr, &f), 0);
	assert_false(f.symbolized);
	symbolizer_free(with_debug);
	symbolizer_free(plain);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_bounds_and_forget(void **state)
{
	struct symbolizer *s = new_sym();
	void *libc_fn = dlsym(RTLD_DEFAULT, "getpid");
	struct symbolizer_stats st;
	const char *own, *libc;
	struct frame f;
	uint32_t self = (uint32_t)getpid();

	(void)state;
	symbolizer_set_limits(s, 1, 1);
	assert_int_equal(symbolizer_user_frame(s, self, marker_addr(), &f), 0);
	own = f.function;
	assert_int_equal(symbolizer_user_frame(s, self, (uintptr_t)libc_fn, &f), 0);
	libc = f.function;
	assert_true(f.symbolized);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 1);
	assert_true(st.evictions >= 1);
	/* Evicted tables leave returned strings intact, and are re-read on demand. */
	assert_string_equal(own, "lowprof_symbolizer_test_marker");
	assert_int_equal(symbolizer_user_frame(s, 1, 0x10, &f), 0);
	symbolizer_stats(s, &st);
	assert_int_equal(st.pids_cached, 1);
	assert_int_equal(symbolizer_user_frame(s, self, marker_addr(), &f), 0);
	assert_ptr_equal(f.function, own);
	assert_non_null(strstr(libc, "getpid"));

	symbolizer_forget_pid(s, self);
	symbolizer_forget_pid(s, 12345678); /* unknown pid: nothing to do */
	symbolizer_stats(s, &st);
	assert_int_equal(st.pids_cached, 0);
	symbolizer_free(s);
}

/*
 * The symbol tables' byte cap: past it the least recently used table goes
 * first (the newest always stays), counted; a table under the cap stays.
 */
static void test_file_bytes_cap(void **state)
{
	struct proc_source *src = direct("/usr/lib/debug", "/proc/kallsyms");
	char err[256] = "", exe[4096];
	struct symbolizer *s = symbolizer_new(src, err, sizeof(err));
	struct lowprof_file_id own, libc;
	struct proc_source_stats ps0, ps1;
	struct symbolizer_stats st;
	size_t before, both;
	struct frame f;
	uint64_t off = add_own_and_libc(src, &own, &libc, exe, sizeof(exe));

	(void)state;
	assert_non_null(s);
	before = symbolizer_memory(s);
	assert_int_equal(symbolizer_file_frame(s, &own, off, &f), 0);
	assert_int_equal(symbolizer_file_frame(s, &libc, 0x10, &f), 0);
	both = symbolizer_memory(s);
	/* Under the cap: both stay. */
	symbolizer_set_max_file_bytes(s, both);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 2);
	assert_int_equal(st.evictions, 0);
	/* The own binary is used again: libc is now the least recently used. */
	assert_int_equal(symbolizer_file_frame(s, &own, off, &f), 0);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	symbolizer_set_max_file_bytes(s, 1);
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 1);
	assert_int_equal(st.evictions, 1);
	assert_true(symbolizer_memory(s) < both);
	assert_true(symbolizer_memory(s) > before);
	/* The own binary stayed (named without asking the source); libc is asked again. */
	proc_source_get_stats(src, &ps0);
	assert_int_equal(symbolizer_file_frame(s, &own, off, &f), 0);
	assert_string_equal(f.function, "lowprof_symbolizer_test_marker");
	proc_source_get_stats(src, &ps1);
	assert_int_equal(ps1.requests, ps0.requests);
	assert_int_equal(symbolizer_file_frame(s, &libc, 0x10, &f), 0);
	proc_source_get_stats(src, &ps1);
	assert_true(ps1.requests > ps0.requests);
	/* ... and, the newest now, it evicted the own binary: one more eviction. */
	symbolizer_stats(s, &st);
	assert_int_equal(st.files_cached, 1);
	assert_int_equal(st.evictions, 2);
	symbolizer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_function),
		cmocka_unit_test(test_trim_invalidates_stacks),
		cmocka_unit_test(test_libc_function),
		cmocka_unit_test(test_vdso_function),
		cmocka_unit_test(test_vdso_offset),
		cmocka_unit_test(test_file_frame),
		cmocka_unit_test(test_file_bytes_cap),
		cmocka_unit_test(test_file_unknown_and_expire),
		cmocka_unit_test(test_expiry_floor),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_kernel_restricted),
		cmocka_unit_test(test_kernel_addresses_hidden),
		cmocka_unit_test(test_unmapped_and_unnamed),
		cmocka_unit_test(test_refresh),
		cmocka_unit_test(test_exited_child),
		cmocka_unit_test(test_image_change_reads_again),
		cmocka_unit_test(test_exited_exec),
		cmocka_unit_test(test_separate_debug_file),
		cmocka_unit_test(test_bounds_and_forget),
	};

	return cmocka_run_group_tests(tests, NULL, free_sources);
}
