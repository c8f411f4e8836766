/*
 * lowprof-window-churn: the exporter's window on a host that starts PROCS
 * short processes a second, through the exporter's real code (profile_window,
 * outputs_write_file), with the folding of processes gone on or off. Every
 * process is new (its own pid) and gives a sample now and then, its stack one
 * of a small pool (the same program: start-up, page faults, its work, exit);
 * a few long-lived processes are sampled throughout, their stacks from a
 * larger pool. Once a minute of simulated time it prints the window's
 * distinct stacks, its heap (every interval and the merge), what a roll
 * cost (the fold of the interval before the one closed), the merge and
 * profile.pb.gz: whether they grow with the window or stay flat once it is
 * full. Files go to a temporary directory under DIR.
 *   usage: lowprof-window-churn [PROCS [WINDOW_S [FOLD [MINUTES [DIR]]]]]
 * (defaults 100, 600, 1, 15, "."). CPU ms of this thread.
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

#define WCH_INTERVAL_S 10
#define WCH_DEPTH 24
/* A short process's stacks: one program's, whose kernel side (exec, page
 * faults, exit) varies by instruction address. */
#define WCH_CHURN_SHAPES 2000
#define WCH_LIVE_PROCS 5
#define WCH_LIVE_SHAPES 1500  /* the long-lived processes' stacks */
#define WCH_LIVE_SAMPLES 200  /* their samples per interval (20 a second) */

static char wch_fn[WCH_LIVE_SHAPES + WCH_CHURN_SHAPES][40];

/* Shape k: a shared root side, a leaf side of its own. */
static void wch_stack(unsigned k, struct frame *f)
{
	unsigned i, n;

	for (i = 0; i < WCH_DEPTH; i++) {
		n = i < WCH_DEPTH / 2 ? (k * 7u + i) % (WCH_LIVE_SHAPES + WCH_CHURN_SHAPES) : i;
		memset(&f[i], 0, sizeof(f[i]));
		f[i].function = wch_fn[n];
		f[i].module = "/usr/bin/app";
		f[i].address = 0x400000 + (uint64_t)n * 64;
		f[i].module_offset = (uint64_t)n * 64;
		f[i].map_start = 0x400000;
		f[i].map_end = 0x800000;
		f[i].symbolized = true;
	}
}

int main(int argc, char **argv)
{
	unsigned procs = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
	unsigned window_s = argc > 2 ? (unsigned)atoi(argv[2]) : 600;
	int fold = argc > 3 ? atoi(argv[3]) : 1;
	unsigned minutes = argc > 4 ? (unsigned)atoi(argv[4]) : 15;
	const char *dir = argc > 5 ? argv[5] : ".";
	uint64_t t0 = 1700000000ULL * NSEC_PER_SEC, now = t0, c, roll_ns, rng = 88172645463325252ULL;
	struct profile_window_stats ws;
	struct frame f[WCH_DEPTH];
	struct outputs_context ctx;
	struct ingest_stats ingest;
	struct profile_totals t;
	struct profile_window *pw;
	struct profile *merged;
	struct timeline *tl;
	uint32_t next_pid = 10000;
	unsigned i, p, s, n;
	char tmpl[4096];
	int dirfd;

	if (procs == 0 || window_s < WCH_INTERVAL_S || minutes == 0) {
		fprintf(stderr, "usage: lowprof-window-churn [PROCS [WINDOW_S [FOLD [MINUTES [DIR]]]]]\n");
		return 2;
	}
	for (i = 0; i < WCH_LIVE_SHAPES + WCH_CHURN_SHAPES; i++)
		snprintf(wch_fn[i], sizeof(wch_fn[i]), "function_%u", i);
	snprintf(tmpl, sizeof(tmpl), "%s/lowprof-window-churn.XXXXXX", dir);
	if (mkdtemp(tmpl) == NULL || (dirfd = open(tmpl, O_RDONLY | O_DIRECTORY)) < 0) {
		perror(tmpl);
		return 1;
	}
	pw = profile_window_new((uint64_t)window_s * NSEC_PER_SEC, WCH_INTERVAL_S * NSEC_PER_SEC,
				20000, t0);
	tl = timeline_new(TIMELINE_MAX_ENTRIES);
	if (pw == NULL || tl == NULL)
		return 1;
	profile_window_set_fold_gone(pw, fold != 0);
	memset(&ctx, 0, sizeof(ctx));
	memset(&ingest, 0, sizeof(ingest));
	ctx.dirfd = dirfd;
	ctx.frequency_hz = 99;
	ctx.ingest = &ingest;
	ctx.timeline = tl;
	printf("procs/s %u window %u s fold %d\n", procs, window_s, fold);
	printf("minute stacks window_KiB roll_ms merge_ms pprof_ms\n");
	for (i = 1; i <= minutes * 60 / WCH_INTERVAL_S; i++) {
		/* A short process: ~2 ms of CPU (its exec, its work, its exit)
		 * at 99 Hz: a sample for one in five. */
		for (p = 0; p < procs * WCH_INTERVAL_S; p++, next_pid++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			n = (unsigned)(rng % 10) < 2 ? 1 : 0;
			for (s = 0; s < n; s++) {
				wch_stack(WCH_LIVE_SHAPES + (unsigned)((rng >> (8 + s * 9)) % WCH_CHURN_SHAPES), f);
				profile_add_sample(profile_window_current(pw), next_pid, next_pid, "churn_child",
						   f, WCH_DEPTH, false, 1, 10101010);
			}
		}
		for (s = 0; s < WCH_LIVE_SAMPLES; s++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			p = (unsigned)(rng % WCH_LIVE_PROCS);
			wch_stack((unsigned)((rng >> 16) % WCH_LIVE_SHAPES), f);
			profile_add_sample(profile_window_current(pw), 100 + p, 100 + p, "server", f,
					   WCH_DEPTH, false, 1, 10101010);
		}
		now += WCH_INTERVAL_S * NSEC_PER_SEC;
		c = thread_cpu_ns();
		profile_window_roll(pw, now);
		roll_ns = thread_cpu_ns() - c;
		if (i % (60 / WCH_INTERVAL_S) != 0)
			continue;
		c = thread_cpu_ns();
		merged = profile_window_merged_closed(pw);
		if (merged == NULL)
			return 1;
		printf("%u", i * WCH_INTERVAL_S / 60);
		profile_get_totals(merged, &t);
		profile_window_get_stats(pw, &ws);
		printf(" %zu %zu %.1f %.1f", t.stacks, ws.memory_bytes / 1024, (double)roll_ns / 1e6,
		       (double)(thread_cpu_ns() - c) / 1e6);
		ctx.duration_s = (double)(now - t0) / 1e9;
		c = thread_cpu_ns();
		outputs_write_file(merged, &ctx, OUTPUTS_PPROF);
		printf(" %.1f\n", (double)(thread_cpu_ns() - c) / 1e6);
		unlinkat(dirfd, "profile.pb.gz", 0);
	}
	close(dirfd);
	rmdir(tmpl);
	profile_window_free(pw);
	timeline_free(tl);
	return 0;
}
