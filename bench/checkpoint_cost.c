/*
 * lowprof-checkpoint-cost: what one checkpoint of the interval being
 * collected costs at rest (exporter/exporter_checkpoint.h): the same small
 * profile written again and again with a pause between writes, as an idle
 * host's exporter does (its caches cold, its heap as heap_bound leaves it).
 * Each mode writes WRITES times through the exporter's own pprof_write_file:
 *   durable   fsync of the file and of the directory (the profile files)
 *   process   OUTPUT_FILE_PROCESS_SAFE (no fsync: the views, the window split)
 *   held      into a memfd (pprof_write_held: the checkpoint, held by the
 *             supervisor; no file system at all)
 * and prints the CPU (this thread, user + system) and the page faults per
 * write, the first write left out. --trim BYTES sets glibc's trim threshold
 * after heap_bound() (HEAP_BOUND_TRIM_THRESHOLD otherwise): what the heap's
 * top keeps between writes.
 *   usage: lowprof-checkpoint-cost [--trim BYTES] [STACKS [WRITES [GAP_MS [DIR]]]]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/heap_bound.h"
#include "common/mono_clock.h"
#include "exporter/formats/output_file.h"
#include "exporter/formats/pprof_writer.h"
#include "exporter/profile/profile.h"

#define CC_DEPTH 20
#define CC_FUNCTIONS 400

static long cc_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static char cc_fn[CC_FUNCTIONS][32];

/* heldfd >= 0: into that memfd, else a file in dirfd written with flags. */
static int cc_mode(const char *label, int dirfd, int heldfd, const struct profile *p,
		   unsigned flags, unsigned writes, unsigned gap_ms)
{
	uint64_t cpu = 0, c;
	long faults = 0, f;
	char err[256];
	unsigned i;

	for (i = 0; i < writes; i++) {
		usleep(gap_ms * 1000);
		f = cc_faults();
		c = thread_cpu_ns();
		if ((heldfd >= 0 ? pprof_write_held(heldfd, p, err, sizeof(err))
				 : pprof_write_file(dirfd, "checkpoint.pb.gz", p, flags, err,
						    sizeof(err))) != 0) {
			fprintf(stderr, "lowprof-checkpoint-cost: %s\n", err);
			return 1;
		}
		if (i > 0) {
			cpu += thread_cpu_ns() - c;
			faults += cc_faults() - f;
		}
	}
	printf("%-8s %.3f ms a write, %.1f page faults a write (%u writes, %u ms apart)\n", label,
	       (double)cpu / 1e6 / (writes - 1), (double)faults / (writes - 1), writes, gap_ms);
	return 0;
}

int main(int argc, char **argv)
{
	long trim = -1;
	int a = 1;
	unsigned stacks, writes, gap_ms;
	const char *dir;
	struct frame f[CC_DEPTH];
	struct profile *p;
	char tmpl[4096];
	unsigned s, d;
	int dirfd, heldfd, rc;

	if (argc > 2 && strcmp(argv[1], "--trim") == 0) {
		trim = atol(argv[2]);
		a = 3;
	}
	stacks = argc > a ? (unsigned)atoi(argv[a]) : 300;
	writes = argc > a + 1 ? (unsigned)atoi(argv[a + 1]) : 30;
	gap_ms = argc > a + 2 ? (unsigned)atoi(argv[a + 2]) : 200;
	dir = argc > a + 3 ? argv[a + 3] : ".";
	if (stacks == 0 || writes < 2) {
		fprintf(stderr, "usage: lowprof-checkpoint-cost [--trim BYTES] [STACKS [WRITES(>=2) [GAP_MS [DIR]]]]\n");
		return 2;
	}
	heap_bound();
	if (trim >= 0)
		(void)mallopt(M_TRIM_THRESHOLD, (int)trim);
	for (s = 0; s < CC_FUNCTIONS; s++)
		snprintf(cc_fn[s], sizeof(cc_fn[s]), "function_%u", s);
	snprintf(tmpl, sizeof(tmpl), "%s/lowprof-checkpoint-cost.XXXXXX", dir);
	if (mkdtemp(tmpl) == NULL || (dirfd = open(tmpl, O_RDONLY | O_DIRECTORY)) < 0) {
		perror(tmpl);
		return 1;
	}
	p = profile_new();
	if (p == NULL)
		return 1;
	for (s = 0; s < stacks; s++) {
		for (d = 0; d < CC_DEPTH; d++) {
			unsigned k = (s * 7 + d * 13) % CC_FUNCTIONS;

			memset(&f[d], 0, sizeof(f[d]));
			f[d].function = cc_fn[k];
			f[d].module = "/usr/bin/daemon";
			f[d].address = 0x1000 + (uint64_t)k * 16;
			f[d].module_offset = f[d].address;
			f[d].map_end = 0x100000;
			f[d].symbolized = true;
		}
		profile_add_sample(p, 100 + s % 7, 100 + s % 7, "daemon", f, CC_DEPTH, false, 1,
				   10101010);
	}
	printf("stacks %u, %u frames each; heap trim threshold %ld\n", stacks, CC_DEPTH,
	       trim >= 0 ? trim : (long)HEAP_BOUND_TRIM_THRESHOLD);
	heldfd = memfd_create("lowprof-checkpoint-cost", MFD_CLOEXEC);
	rc = cc_mode("durable", dirfd, -1, p, 0, writes, gap_ms) ||
	     cc_mode("process", dirfd, -1, p, OUTPUT_FILE_PROCESS_SAFE, writes, gap_ms) ||
	     (heldfd >= 0 && cc_mode("held", -1, heldfd, p, 0, writes, gap_ms));
	if (heldfd >= 0)
		close(heldfd);
	unlinkat(dirfd, "checkpoint.pb.gz", 0);
	close(dirfd);
	rmdir(tmpl);
	profile_free(p);
	return rc;
}
