/*
 * sample_tap: a passive reader of a running lowprof's BPF sample ring, for
 * tests that check what the walker recorded (file slots, offsets, file
 * lists, stop reasons) without going through the exporter.
 *
 *   sample_tap RING_PIN SECONDS OUT
 *
 * RING_PIN is the loader's pinned `samples` ring buffer (bpffs). The ring is
 * mapped read-only and followed behind the producer: the loader consumes it
 * as usual, records stay readable until 8 MiB more are written, and the tap
 * polls every millisecond. One line per sample to OUT:
 *   pid TAB comm TAB user_stop TAB flags TAB frames TAB files
 * frames: the user frames, leaf first, as KIND:HEXVALUE; files:
 * DEV:INO:GEN (DEV in the kernel's encoding), entry k - 1 for kind k.
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bpf/lowprof.h"

#define RB_BUSY (1U << 31)
#define RB_DISCARD (1U << 30)
#define RB_HDR 8

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_sample(FILE *out, const unsigned char *rec, uint32_t len)
{
	const struct lowprof_sample *s = (const void *)rec;
	const struct lowprof_file_id *files;
	size_t nframes, i;
	char comm[LOWPROF_COMM_LEN + 1];

	if (len < sizeof(*s))
		return;
	nframes = (size_t)s->kernel_depth + s->user_depth;
	if (sizeof(*s) + nframes * 8 + (size_t)s->nfiles * sizeof(*files) != len)
		return;
	memcpy(comm, s->comm, LOWPROF_COMM_LEN);
	comm[LOWPROF_COMM_LEN] = '\0';
	for (i = 0; comm[i]; i++)
		if (comm[i] == '\t' || comm[i] == '\n')
			comm[i] = ' ';
	fprintf(out, "%u\t%s\t%u\t%u\t", s->pid, comm, s->user_stop, s->flags);
	for (i = 0; i < s->user_depth; i++) {
		uint64_t f = s->frames[s->kernel_depth + i];

		fprintf(out, "%s%u:%llx", i ? " " : "", LOWPROF_FRAME_KIND(f),
			(unsigned long long)LOWPROF_FRAME_VALUE(f));
	}
	fputc('\t', out);
	files = (const void *)&s->frames[nframes];
	for (i = 0; i < s->nfiles; i++)
		fprintf(out, "%s%u:%llu:%u", i ? " " : "", files[i].dev,
			(unsigned long long)files[i].ino, files[i].gen);
	fputc('\n', out);
}

int main(int argc, char **argv)
{
	struct bpf_map_info info = {0};
	uint32_t info_len = sizeof(info);
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size;
	unsigned long *cons, *prod_page, pos, n = 0;
	unsigned char *data;
	double end;
	FILE *out;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: sample_tap RING_PIN SECONDS OUT\n");
		return 2;
	}
	fd = bpf_obj_get(argv[1]);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &info_len) != 0) {
		fprintf(stderr, "sample_tap: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	size = info.max_entries;
	cons = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	prod_page = mmap(NULL, page + 2 * size, PROT_READ, MAP_SHARED, fd, (off_t)page);
	if (cons == MAP_FAILED || prod_page == MAP_FAILED) {
		fprintf(stderr, "sample_tap: mmap: %s\n", strerror(errno));
		return 1;
	}
	data = (unsigned char *)prod_page + page;
	out = fopen(argv[3], "w");
	if (out == NULL)
		return 1;
	pos = __atomic_load_n(prod_page, __ATOMIC_ACQUIRE);
	end = now_s() + atof(argv[2]);
	while (now_s() < end) {
		unsigned long prod = __atomic_load_n(prod_page, __ATOMIC_ACQUIRE);

		if (prod - pos > size / 2) {
			/* Fell behind: what lies between may be overwritten. */
			fprintf(stderr, "sample_tap: behind by %lu bytes, skipping\n", prod - pos);
			pos = prod;
		}
		while (pos < prod) {
			uint32_t hdr = __atomic_load_n((uint32_t *)(data + (pos & (size - 1))),
						       __ATOMIC_ACQUIRE);
			uint32_t len = hdr & ~(RB_BUSY | RB_DISCARD);

			if (hdr & RB_BUSY)
				break;
			if (!(hdr & RB_DISCARD)) {
				print_sample(out, data + (pos & (size - 1)) + RB_HDR, len);
				n++;
			}
			pos += (len + RB_HDR + 7) & ~7UL;
		}
		usleep(1000);
	}
	fclose(out);
	fprintf(stderr, "sample_tap: %lu samples\n", n);
	(void)cons;
	return 0;
}
