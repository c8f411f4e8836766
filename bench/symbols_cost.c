/*
 * lowprof-symbols-cost: the exporter's CPU to read one file's symbols
 * (exporter/symbols/elf_symbols.h) and the kernel's (kallsyms.h), the
 * one-off cost of a process's first frame in a file it has not named before.
 * Each FILE is read REPS times through elf_symbols_open_fd, kallsyms through
 * kallsyms_load; prints the median and the least CPU (this thread, user +
 * system) per read, with the symbols kept. With no FILE: this program's libc,
 * and libc's debug file by build id when installed (what the exporter reads
 * for libc's local symbols).
 *   usage: lowprof-symbols-cost [--reps N] [--no-kallsyms] [FILE...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exporter/symbols/elf_symbols.h"
#include "exporter/symbols/kallsyms.h"

#define SC_REPS_DEFAULT 50
#define SC_REPS_MAX 100000

static double sc_thread_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int sc_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void sc_report(const char *what, double *ms, int reps, size_t symbols)
{
	qsort(ms, (size_t)reps, sizeof(*ms), sc_cmp_double);
	printf("%-72s median %.3f ms  least %.3f ms  (%d reads, %zu symbols kept)\n", what,
	       ms[reps / 2], ms[0], reps, symbols);
}

static int sc_elf(const char *path, int reps, double *ms)
{
	size_t symbols = 0;

	for (int i = 0; i < reps; i++) {
		struct elf_symbols *e = NULL;
		char err[256] = "";
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		double t0;
		int ret;

		if (fd < 0) {
			fprintf(stderr, "lowprof-symbols-cost: %s: %s\n", path, strerror(errno));
			return -1;
		}
		t0 = sc_thread_ms();
		ret = elf_symbols_open_fd(fd, &e, err, sizeof(err));
		ms[i] = sc_thread_ms() - t0;
		close(fd);
		if (ret) {
			fprintf(stderr, "lowprof-symbols-cost: %s: %s\n", path, err);
			return -1;
		}
		symbols = elf_symbols_count(e);
		elf_symbols_free(e);
	}
	sc_report(path, ms, reps, symbols);
	return 0;
}

static int sc_kallsyms(int reps, double *ms)
{
	size_t symbols = 0;

	for (int i = 0; i < reps; i++) {
		struct kallsyms *k = NULL;
		char err[256] = "";
		double t0 = sc_thread_ms();
		int ret = kallsyms_load("/proc/kallsyms", &k, err, sizeof(err));

		ms[i] = sc_thread_ms() - t0;
		if (ret) {
			fprintf(stderr, "lowprof-symbols-cost: /proc/kallsyms: %s\n", err);
			return -1;
		}
		symbols = kallsyms_count(k);
		kallsyms_free(k);
	}
	sc_report("/proc/kallsyms (the kernel writing it is most of this)", ms, reps, symbols);
	return 0;
}

/* This program's libc, by the address of a function in it. */
static int sc_find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (strstr(info->dlpi_name, "/libc.so") != NULL) {
		snprintf(data, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static void sc_usage(FILE *out)
{
	fprintf(out,
		"usage: lowprof-symbols-cost [--reps N] [--no-kallsyms] [FILE...]\n"
		"  CPU to read an ELF file's symbols as the exporter does, and kallsyms.\n"
		"  --reps N        reads of each (default %d, at most %d)\n"
		"  --no-kallsyms   leave /proc/kallsyms out\n"
		"  FILE            ELF files (default: this program's libc and its debug\n"
		"                  file by build id, when installed)\n",
		SC_REPS_DEFAULT, SC_REPS_MAX);
}

int main(int argc, char **argv)
{
	int reps = SC_REPS_DEFAULT, first = 1, failed = 0;
	bool kallsyms = true;
	char libc[PATH_MAX] = "";
	double *ms;

	while (first < argc && strncmp(argv[first], "--", 2) == 0) {
		if (strcmp(argv[first], "--help") == 0) {
			sc_usage(stdout);
			return 0;
		} else if (strcmp(argv[first], "--no-kallsyms") == 0) {
			kallsyms = false;
			first++;
		} else if (strcmp(argv[first], "--reps") == 0 && first + 1 < argc) {
			char *end;
			long v = strtol(argv[first + 1], &end, 10);

			if (*end != '\0' || v < 1 || v > SC_REPS_MAX) {
				fprintf(stderr, "lowprof-symbols-cost: --reps wants 1 to %d, not '%s'\n",
					SC_REPS_MAX, argv[first + 1]);
				return 2;
			}
			reps = (int)v;
			first += 2;
		} else {
			fprintf(stderr, "lowprof-symbols-cost: unknown option '%s'\n", argv[first]);
			sc_usage(stderr);
			return 2;
		}
	}
	ms = calloc((size_t)reps, sizeof(*ms));
	if (!ms) {
		fprintf(stderr, "lowprof-symbols-cost: out of memory\n");
		return 1;
	}
	if (first < argc) {
		for (int i = first; i < argc; i++)
			failed |= sc_elf(argv[i], reps, ms) != 0;
	} else {
		struct elf_symbols *e = NULL;
		char err[256];
		int fd;

		dl_iterate_phdr(sc_find_libc, libc);
		if (libc[0] == '\0') {
			fprintf(stderr, "lowprof-symbols-cost: this program's libc not found\n");
			return 1;
		}
		failed |= sc_elf(libc, reps, ms) != 0;
		fd = open(libc, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && elf_symbols_open_fd(fd, &e, err, sizeof(err)) == 0 &&
		    elf_symbols_build_id(e) != NULL) {
			const char *id = elf_symbols_build_id(e);
			char debug[PATH_MAX];

			snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", id,
				 id + 2);
			if (access(debug, R_OK) == 0)
				failed |= sc_elf(debug, reps, ms) != 0;
			else
				printf("%-72s not installed (libc6-dbg)\n", debug);
		}
		elf_symbols_free(e);
		if (fd >= 0)
			close(fd);
	}
	if (kallsyms)
		failed |= sc_kallsyms(reps < 10 ? reps : 10, ms) != 0;
	free(ms);
	return failed ? 1 : 0;
}
