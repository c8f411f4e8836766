/*
 * Writes the recorded sample stream test_output_golden feeds to the exporter
 * (tests/data/golden/stream.bin): records in the shared ring's own format
 * (ipc/shm_ring.h: struct shm_ring_record_hdr, the payload, zero padding to
 * a multiple of 8), built from the very structs the loader and the BPF
 * program send (bpf/lowprof.h, ipc/loader_stats.h).
 *
 * The addresses fall into the fixture maps and kallsyms beside it
 * (tests/data/golden/proc, tests/data/golden/kallsyms): two processes, a
 * main program and a library whose files exist nowhere (frames become
 * module+0xOFFSET), an anonymous mapping, an address in no mapping, kernel
 * frames in the core kernel and in a module, a truncated stack, a kernel-only
 * sample, plus a loader statistics record and two timeline entries. Then
 * samples in the file encoding (frames as (file, offset), files that exist
 * nowhere, so their frames are "[file MAJ:MIN inode N]+0xOFFSET"): whole, and
 * cut for want of an unwind table or by a failed step (marker frames).
 *
 * Deterministic: rerunning it writes the same bytes. Usage: golden_stream_gen OUT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/lowprof.h"
#include "ipc/loader_stats.h"
#include "ipc/shm_ring.h"

#define APP_BASE 0x555555554000ULL  /* /nonexistent/golden/bin/app r-xp at file offset 0x1000 */
#define LIB_BASE 0x7f0000001000ULL  /* libgolden.so r-xp at file offset 0x2000 */
#define ANON_BASE 0x7f1000000000ULL /* anonymous executable memory (a JIT) */
#define K_CORE 0xffffffff81000000ULL
#define K_MOD 0xffffffffc0100000ULL

static FILE *out;

static void put_record(uint32_t type, const void *data, uint32_t len)
{
	static const uint8_t zero[SHM_RING_ALIGN];
	struct shm_ring_record_hdr h = { .length = len, .type = type };
	size_t pad = (size_t)(shm_ring_record_size(len) - sizeof(h) - len);

	if (fwrite(&h, sizeof(h), 1, out) != 1 || fwrite(data, 1, len, out) != len ||
	    fwrite(zero, 1, pad, out) != pad) {
		perror("write");
		exit(1);
	}
}

static void put_sample(uint64_t ts, uint32_t pid, uint32_t tid, const char *comm, uint32_t flags,
		       const uint64_t *kf, uint16_t nk, const uint64_t *uf, uint16_t nu)
{
	static uint64_t buf[LOWPROF_SAMPLE_MAX_SIZE / sizeof(uint64_t)];
	struct lowprof_sample *s = (struct lowprof_sample *)buf;

	memset(buf, 0, sizeof(buf));
	s->timestamp_ns = ts;
	s->period_ns = 10101010; /* 99 Hz */
	s->pid = pid;
	s->tid = tid;
	s->cpu = tid % 2;
	s->flags = flags;
	s->kernel_depth = nk;
	s->user_depth = nu;
	strncpy(s->comm, comm, sizeof(s->comm));
	if (nk > 0)
		memcpy(s->frames, kf, nk * sizeof(uint64_t));
	if (nu > 0)
		memcpy(s->frames + nk, uf, nu * sizeof(uint64_t));
	put_record(LOWPROF_REC_SAMPLE, s,
		   (uint32_t)(LOWPROF_SAMPLE_HEADER_SIZE + (size_t)(nk + nu) * sizeof(uint64_t)));
}

/* A sample whose user frames are LOWPROF_FRAME_MAKE words, with its file list. */
static void put_file_sample(uint64_t ts, uint32_t pid, const char *comm, uint8_t stop,
			    const uint64_t *uf, uint16_t nu, const struct lowprof_file_id *files,
			    uint8_t nfiles)
{
	static uint64_t buf[LOWPROF_SAMPLE_MAX_SIZE / sizeof(uint64_t)];
	struct lowprof_sample *s = (struct lowprof_sample *)buf;

	memset(buf, 0, sizeof(buf));
	s->timestamp_ns = ts;
	s->period_ns = 10101010;
	s->pid = pid;
	s->tid = pid;
	s->user_depth = nu;
	s->nfiles = nfiles;
	s->user_stop = stop;
	strncpy(s->comm, comm, sizeof(s->comm));
	memcpy(s->frames, uf, nu * sizeof(uint64_t));
	memcpy(s->frames + nu, files, nfiles * sizeof(*files));
	put_record(LOWPROF_REC_SAMPLE, s,
		   (uint32_t)(LOWPROF_SAMPLE_HEADER_SIZE + (size_t)nu * sizeof(uint64_t) +
			      nfiles * sizeof(*files)));
}

static void put_timeline(uint64_t mono, uint32_t tier, uint32_t hz, uint32_t flags)
{
	struct lowprof_timeline_entry e;

	memset(&e, 0, sizeof(e));
	e.version = LOWPROF_TIMELINE_VERSION;
	e.flags = flags;
	e.monotonic_ns = mono;
	e.interval_ns = 1000000000ULL;
	e.tier = tier;
	e.frequency_hz = hz;
	e.unwind = 0;
	e.max_depth = 64;
	e.sample_divisor = 1;
	e.online_cpus = 2;
	e.host_cpu_centipct = 4321;
	e.cpu_budget_centipct = 100;
	e.events = 198;
	e.submitted = 190;
	e.reserve_failures = 3;
	e.bpf_run_time_ns = 1234567;
	e.agent_cpu_ns = 2345678;
	e.startup_cpu_ns = tier == 0 ? 98765432 : 0;
	put_record(LOWPROF_REC_TIMELINE, &e, sizeof(e));
}

static void put_loader_stats(void)
{
	struct lowprof_loader_stats l;

	memset(&l, 0, sizeof(l));
	l.version = LOWPROF_LOADER_STATS_VERSION;
	l.online_cpus = 2;
	l.monotonic_ns = 1003000000000ULL;
	l.events = 420;
	l.submitted = 400;
	l.reserve_failures = 5;
	l.divisor_skipped = 7;
	l.filtered = 0;
	l.idle = 11;
	l.guard_skipped = 2;
	l.guard_proc_capped = 3;
	l.sigframe_refused = 1;
	l.bpf_run_time_ns = 3456789;
	l.drained = 400;
	l.shm_dropped = 1;
	l.ringbuf_bytes = 1 << 20;
	l.frequency_hz = 99;
	l.bpf_load_ns = 61234567;
	l.tables_ns = 45678901;
	put_record(LOWPROF_REC_LOADER_STATS, &l, sizeof(l));
}

int main(int argc, char **argv)
{
	/* Return addresses (every frame but the leaf) point after a call. */
	const uint64_t u_main[] = { APP_BASE + 0x0150, APP_BASE + 0x0420 + 5, APP_BASE + 0x0080 + 5 };
	const uint64_t u_lib[] = { LIB_BASE + 0x0700, LIB_BASE + 0x0310 + 5, APP_BASE + 0x0420 + 5,
				   APP_BASE + 0x0080 + 5 };
	const uint64_t u_jit[] = { ANON_BASE + 0x40, ANON_BASE + 0x1f0 + 5, LIB_BASE + 0x0900 + 5,
				   APP_BASE + 0x0080 + 5 };
	const uint64_t u_lost[] = { 0x10000, APP_BASE + 0x0420 + 5 };
	const uint64_t u_deep[] = { APP_BASE + 0x0600, APP_BASE + 0x0610 + 5, APP_BASE + 0x0620 + 5 };
	const uint64_t u_semi[] = { LIB_BASE + 0x0888, APP_BASE + 0x0080 + 5 };
	const uint64_t k_write[] = { K_CORE + 0x1234, K_CORE + 0x20010 + 5, K_CORE + 0x30000 + 5 };
	const uint64_t k_mod[] = { K_MOD + 0x88, K_CORE + 0x20010 + 5 };
	const uint64_t k_idle[] = { K_CORE + 0x40020, K_CORE + 0x50000 + 5 };
	uint64_t t = 1000000000000ULL;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT\n", argv[0]);
		return 2;
	}
	out = fopen(argv[1], "wb");
	if (out == NULL) {
		perror(argv[1]);
		return 1;
	}
	put_timeline(t, 0, 99, LOWPROF_TIMELINE_HOST_VALID);
	for (i = 0; i < 40; i++) {
		t += 5000000;
		switch (i % 8) {
		case 0:
		case 3:
			put_sample(t, 4242, 4242, "golden-app", 0, NULL, 0, u_main, 3);
			break;
		case 1:
			put_sample(t, 4242, 4243, "golden-app", 0, NULL, 0, u_lib, 4);
			break;
		case 2:
			put_sample(t, 4242, 4244, "golden;io w", 0, k_write, 3, u_lib, 4);
			break;
		case 4:
			put_sample(t, 4343, 4343, "worker", 0, NULL, 0, u_jit, 4);
			break;
		case 5:
			put_sample(t, 4343, 4345, "worker", LOWPROF_SAMPLE_USER_TRUNCATED, NULL, 0,
				   u_deep, 3);
			break;
		case 6:
			put_sample(t, 4343, 4343, "worker", 0, k_mod, 2, u_lost, 2);
			break;
		default:
			if (i == 7)
				put_sample(t, 0, 0, "swapper/1", LOWPROF_SAMPLE_NO_USER_STACK, k_idle, 2,
					   NULL, 0);
			else
				put_sample(t, 4242, 4242, "golden-app", 0, NULL, 0, u_semi, 2);
		}
		if (i == 19)
			put_timeline(t, 1, 49, LOWPROF_TIMELINE_HOST_VALID);
	}
	{
		/* Two files on device 8:2 in the kernel's encoding. No vDSO frame:
		 * its names would be the host kernel's. */
		const struct lowprof_file_id files[] = { { 777001, (8u << 20) | 2, 0 },
							 { 777002, (8u << 20) | 2, 5 } };
		const uint64_t f_whole[] = { LOWPROF_FRAME_MAKE(2, 0x29d90), LOWPROF_FRAME_MAKE(1, 0x1180 + 5),
					     LOWPROF_FRAME_MAKE(1, 0x1040 + 5) };
		const uint64_t f_cut[] = { LOWPROF_FRAME_MAKE(1, 0x1136), LOWPROF_FRAME_MAKE(1, 0x1180 + 5) };
		const uint64_t f_failed[] = { LOWPROF_FRAME_MAKE(2, 0x500) };

		for (i = 0; i < 3; i++) {
			t += 5000000;
			put_file_sample(t, 4444 + i, "churn", LOWPROF_STOP_NONE, f_whole, 3, files, 2);
			t += 5000000;
			put_file_sample(t, 4444 + i, "churn", LOWPROF_STOP_NO_TABLE, f_cut, 2, files, 1);
		}
		t += 5000000;
		put_file_sample(t, 4450, "churn", LOWPROF_STOP_UNWIND_FAILED, f_failed, 1, files, 2);
	}
	put_loader_stats();
	put_timeline(t + 1000000, 2, 19, LOWPROF_TIMELINE_FAILSAFE);
	if (fclose(out) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
