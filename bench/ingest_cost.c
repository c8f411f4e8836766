/*
 * lowprof-ingest-cost: the exporter's user-space CPU per sample, measured on
 * its real path (ingest_sample: symbolizer, stack cache, profile) without the
 * rest of a run. Its own process is the profiled one: a chain of 33 distinct
 * functions (bench/workloads/deep35.c's shape) captures its return addresses
 * with backtrace(); each sample gets those 35-odd user frames and 8 kernel
 * addresses from /proc/kallsyms, with the leaf varied over 16 values (a few
 * distinct stacks, as a busy function gives). Prints CPU ns per sample with
 * the stack cache and without it, and with the cache and the second profile
 * an OTLP export adds each sample to (the interval's).
 *   usage: lowprof-ingest-cost [SAMPLES [cached|uncached]]
 */
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/lowprof.h"
#include "exporter/ingest.h"
#include "exporter/profile/profile.h"
#include "exporter/symbols/proc_source.h"
#include "exporter/symbols/stack_cache.h"
#include "exporter/symbols/symbolizer.h"
#include "ipc/sample_record.h"

#define IC_USER 40
#define IC_KERNEL 8
#define IC_LEAVES 16

static void *ic_addrs[IC_USER];
static int ic_naddrs;

__attribute__((noinline)) static int ic_capture(int x)
{
	ic_naddrs = backtrace(ic_addrs, IC_USER);
	return x + ic_naddrs;
}

#define IC_FN(n, prev)                                                     \
	__attribute__((noinline)) static int ic_f##n(int x)                \
	{                                                                  \
		int r = prev(x + n);                                       \
		__asm__ volatile("" : "+r"(r));                            \
		return r;                                                  \
	}
IC_FN(1, ic_capture) IC_FN(2, ic_f1) IC_FN(3, ic_f2) IC_FN(4, ic_f3) IC_FN(5, ic_f4)
IC_FN(6, ic_f5) IC_FN(7, ic_f6) IC_FN(8, ic_f7) IC_FN(9, ic_f8) IC_FN(10, ic_f9)
IC_FN(11, ic_f10) IC_FN(12, ic_f11) IC_FN(13, ic_f12) IC_FN(14, ic_f13) IC_FN(15, ic_f14)
IC_FN(16, ic_f15) IC_FN(17, ic_f16) IC_FN(18, ic_f17) IC_FN(19, ic_f18) IC_FN(20, ic_f19)
IC_FN(21, ic_f20) IC_FN(22, ic_f21) IC_FN(23, ic_f22) IC_FN(24, ic_f23) IC_FN(25, ic_f24)
IC_FN(26, ic_f25) IC_FN(27, ic_f26) IC_FN(28, ic_f27) IC_FN(29, ic_f28) IC_FN(30, ic_f29)
IC_FN(31, ic_f30) IC_FN(32, ic_f31) IC_FN(33, ic_f32)

/* Eight kernel text addresses from kallsyms (zero when it is restricted). */
static void ic_kernel_addrs(uint64_t *out)
{
	char line[256], type, name[128];
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r");
	int n = 0, seen = 0;

	memset(out, 0, IC_KERNEL * sizeof(*out));
	while (f != NULL && n < IC_KERNEL && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%llx %c %127s", &a, &type, name) == 3 && (type == 't' || type == 'T') &&
		    ++seen % 5000 == 0)
			out[n++] = a + 4;
	}
	if (f != NULL)
		fclose(f);
}

static double ic_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double ic_run(long nsamples, bool cached, bool otlp)
{
	static union {
		struct lowprof_sample hdr;
		unsigned char bytes[LOWPROF_SAMPLE_MAX_SIZE];
	} rec;
	struct proc_source *src = proc_source_direct_new("/proc", "", "/proc/kallsyms");
	struct symbolizer *sym = symbolizer_new(src, NULL, 0);
	struct ingest_targets t = {.cumulative = profile_new(), .interval = otlp ? profile_new() : NULL};
	struct ingest_stats st = {0};
	struct sample_view sv;
	__u64 *frames = rec.hdr.frames;
	double t0;
	long i;
	int k;

	if (src == NULL || sym == NULL || t.cumulative == NULL || (otlp && t.interval == NULL))
		exit(1);
	t.stacks = cached ? stack_cache_new(STACK_CACHE_DEFAULT_SLOTS) : NULL;
	symbolizer_load_kernel_symbols(sym);
	memset(&rec, 0, sizeof(rec));
	rec.hdr.pid = rec.hdr.tid = (__u32)getpid();
	rec.hdr.period_ns = 10000000;
	rec.hdr.kernel_depth = IC_KERNEL;
	rec.hdr.user_depth = (__u16)ic_naddrs;
	memcpy(rec.hdr.comm, "ingest_cost", 12);
	ic_kernel_addrs((uint64_t *)frames);
	for (k = 0; k < ic_naddrs; k++)
		frames[IC_KERNEL + k] = (uint64_t)(uintptr_t)ic_addrs[k];
	sv.hdr = &rec.hdr;
	sv.kernel_frames = frames;
	sv.user_frames = frames + IC_KERNEL;
	memcpy(sv.comm, rec.hdr.comm, sizeof(rec.hdr.comm));
	sv.comm[LOWPROF_COMM_LEN] = '\0';
	/* The first samples read maps, files and symbols: not what is measured. */
	ingest_sample(&t, sym, &sv, &st);
	t0 = ic_cpu_ns();
	for (i = 0; i < nsamples; i++) {
		frames[IC_KERNEL] = (uint64_t)(uintptr_t)ic_addrs[0] + (uint64_t)(i % IC_LEAVES);
		ingest_sample(&t, sym, &sv, &st);
	}
	t0 = (ic_cpu_ns() - t0) / (double)nsamples;
	stack_cache_free(t.stacks);
	profile_free(t.cumulative);
	profile_free(t.interval);
	symbolizer_free(sym);
	proc_source_free(src);
	return t0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;

	if (n <= 0)
		n = 200000;
	ic_f33(1);
	printf("user frames %d, kernel frames %d, %d distinct stacks, %ld samples\n", ic_naddrs, IC_KERNEL,
	       IC_LEAVES, n);
	if (argc <= 2 || strcmp(argv[2], "cached") != 0)
		printf("without the stack cache: %.0f ns/sample\n", ic_run(n, false, false));
	if (argc <= 2 || strcmp(argv[2], "uncached") != 0) {
		printf("with the stack cache:    %.0f ns/sample\n", ic_run(n, true, false));
		printf("  and an OTLP interval:  %.0f ns/sample\n", ic_run(n, true, true));
	}
	return 0;
}
