/*
 * lowprof-write-cost: the CPU one rewrite of the output files costs at a
 * given window size, each part on its own (the merge of the window's
 * intervals, profile.pb.gz, profile.folded, flamegraph.svg, summary.json),
 * through the exporter's real code (profile_window, outputs_write_file). The
 * window holds STACKS distinct stacks of DEPTH frames spread over INTERVALS
 * interval profiles, as a churning host gives them (many processes, a shared
 * pool of functions); the files go to a temporary directory under DIR (the
 * output directory's file system matters: fsync is part of a write).
 *   usage: lowprof-write-cost [STACKS [DEPTH [INTERVALS [DIR [REPEAT]]]]]
 * With REPEAT > 1 the window is written REPEAT times as the exporter does at
 * each interval's end: a new sample, the merge, every file replacing the one
 * before (its rename frees the old inode); the figures are then the medians
 * of the writes after the first (warm: memory reused, files replaced).
 * Prints one line per part: CPU ms (this thread, user + system), and for
 * the files the longest stretch of CPU between two of the points where the
 * exporter's pacing may pause a write (outputs_context.progress: each 64 KiB
 * written), the start and the end included: what one control interval may
 * have to take whole.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mono_clock.h"
#include "exporter/formats/outputs.h"
#include "exporter/ingest.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_window.h"
#include "exporter/profile/timeline.h"

#define WC_FUNCTIONS 4000
#define WC_MODULES 40

/* The stretches between pause points of the write in progress. */
static uint64_t wc_last_ns, wc_longest_ns;

static void wc_progress(void *arg)
{
	uint64_t now = thread_cpu_ns();

	(void)arg;
	if (now - wc_last_ns > wc_longest_ns)
		wc_longest_ns = now - wc_last_ns;
	wc_last_ns = now;
}

#define WC_REPEAT_MAX 1000

static int wc_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[1..n-1] (the first, cold write left out), or v[0] alone. */
static double wc_median(uint64_t *v, unsigned n)
{
	if (n == 1)
		return (double)v[0];
	qsort(v + 1, n - 1, sizeof(v[0]), wc_cmp);
	return (double)v[1 + (n - 1) / 2];
}

static char wc_fn[WC_FUNCTIONS][48];
static char wc_mod[WC_MODULES][64];

/* Stack s: DEPTH frames from the pool, the leaf side varying with s. */
static void wc_stack(unsigned s, unsigned depth, struct frame *f)
{
	unsigned i, k;

	for (i = 0; i < depth; i++) {
		/* Root side shared (main, start), leaf side distinct. */
		k = i < depth / 2 ? (s * 2654435761u + i * 40503u) % WC_FUNCTIONS : (i * 97u) % WC_FUNCTIONS;
		memset(&f[i], 0, sizeof(f[i]));
		f[i].function = wc_fn[k];
		f[i].module = wc_mod[k % WC_MODULES];
		f[i].address = 0x400000 + (uint64_t)k * 64;
		f[i].module_offset = (uint64_t)k * 64;
		f[i].map_start = 0x400000;
		f[i].map_end = 0x400000 + WC_FUNCTIONS * 64;
		f[i].symbolized = true;
	}
}

int main(int argc, char **argv)
{
	unsigned stacks = argc > 1 ? (unsigned)atoi(argv[1]) : 50000;
	unsigned depth = argc > 2 ? (unsigned)atoi(argv[2]) : 30;
	unsigned intervals = argc > 3 ? (unsigned)atoi(argv[3]) : 60;
	const char *dir = argc > 4 ? argv[4] : ".";
	unsigned repeat = argc > 5 ? (unsigned)atoi(argv[5]) : 1;
	static const char *const names[OUTPUTS_N] = {"profile.pb.gz", "profile.folded",
						     "flamegraph.svg", "summary.json"};
	struct frame f[256];
	struct outputs_context ctx;
	struct ingest_stats ingest;
	struct profile_window *pw;
	struct profile *merged;
	struct timeline *tl;
	uint64_t t0 = 1700000000ULL * NSEC_PER_SEC, now, c;
	uint64_t cost[1 + OUTPUTS_N][WC_REPEAT_MAX], longest[OUTPUTS_N][WC_REPEAT_MAX];
	char tmpl[4096];
	unsigned i, s, r;
	int dirfd;

	if (depth == 0 || depth > 256 || intervals == 0 || stacks == 0 || repeat == 0 ||
	    repeat > WC_REPEAT_MAX) {
		fprintf(stderr, "usage: lowprof-write-cost [STACKS [DEPTH(1-256) [INTERVALS [DIR "
				"[REPEAT(1-%u)]]]]]\n", WC_REPEAT_MAX);
		return 2;
	}
	for (i = 0; i < WC_FUNCTIONS; i++)
		snprintf(wc_fn[i], sizeof(wc_fn[i]), "subsystem_%u::handle_request_%u", i % 37, i);
	for (i = 0; i < WC_MODULES; i++)
		snprintf(wc_mod[i], sizeof(wc_mod[i]), "/usr/lib/x86_64-linux-gnu/libmodule%u.so.1", i);
	snprintf(tmpl, sizeof(tmpl), "%s/lowprof-write-cost.XXXXXX", dir);
	if (mkdtemp(tmpl) == NULL || (dirfd = open(tmpl, O_RDONLY | O_DIRECTORY)) < 0) {
		perror(tmpl);
		return 1;
	}
	pw = profile_window_new((uint64_t)intervals * 10 * NSEC_PER_SEC, 10 * NSEC_PER_SEC, 0, t0);
	tl = timeline_new(TIMELINE_MAX_ENTRIES);
	if (pw == NULL || tl == NULL)
		return 1;
	now = t0;
	for (i = 0; i < intervals; i++) {
		for (s = i; s < stacks; s += intervals) {
			char comm[16];

			snprintf(comm, sizeof(comm), "proc%u", s % 997);
			wc_stack(s, depth, f);
			profile_add_sample(profile_window_current(pw), 1000 + s / 8, 1000 + s / 8, comm, f,
					   depth, false, 1 + s % 5, 10101010);
		}
		now += 10 * NSEC_PER_SEC;
		profile_window_roll(pw, now);
	}
	memset(&ctx, 0, sizeof(ctx));
	memset(&ingest, 0, sizeof(ingest));
	ctx.dirfd = dirfd;
	ctx.frequency_hz = 99;
	ctx.duration_s = (double)(now - t0) / 1e9;
	ctx.ingest = &ingest;
	ctx.timeline = tl;
	ctx.progress = wc_progress;
	for (r = 0; r < repeat; r++) {
		/* Each write a little different, as an interval's end is: the
		 * writer's memo would keep an unchanged file. */
		if (r > 0) {
			wc_stack(r % stacks, depth, f);
			profile_add_sample(profile_window_current(pw), 1000, 1000, "proc0", f, depth,
					   false, 1, 10101010);
		}
		c = thread_cpu_ns();
		merged = profile_window_merged(pw, now);
		cost[0][r] = thread_cpu_ns() - c;
		if (merged == NULL)
			return 1;
		for (i = 0; i < OUTPUTS_N; i++) {
			c = thread_cpu_ns();
			wc_last_ns = c;
			wc_longest_ns = 0;
			outputs_write_file(merged, &ctx, (enum outputs_file)i);
			wc_progress(NULL);
			cost[1 + i][r] = thread_cpu_ns() - c;
			longest[i][r] = wc_longest_ns;
			if (repeat == 1)
				unlinkat(dirfd, names[i], 0);
		}
	}
	printf("stacks %u depth %u intervals %u", stacks, depth, intervals);
	if (repeat > 1)
		printf(" (medians of writes 2 to %u)", repeat);
	printf("\nmerge %.2f ms\n", wc_median(cost[0], repeat) / 1e6);
	for (i = 0; i < OUTPUTS_N; i++) {
		printf("%s %.2f ms (longest stretch between pause points %.2f ms)\n", names[i],
		       wc_median(cost[1 + i], repeat) / 1e6, wc_median(longest[i], repeat) / 1e6);
		unlinkat(dirfd, names[i], 0);
	}
	close(dirfd);
	rmdir(tmpl);
	profile_window_free(pw);
	timeline_free(tl);
	return 0;
}
