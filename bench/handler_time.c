/*
 * lowprof-handler-time: times the cpu-clock perf event's hrtimer handler per
 * owner process (bench/bpf/handler_time.bpf.c) while it runs. Prints "ready"
 * once attached; then each line "dump" on stdin gets one line
 * "TGID NS COUNT" per owner seen so far (cumulative) and a line "end".
 * Exits at EOF or SIGTERM, detaching everything.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handler_time.skel.h"

static unsigned long long handler_time_kallsyms(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && strcmp(sym, name) == 0) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

static void handler_time_dump(int map_fd)
{
	int ncpu = libbpf_num_possible_cpus();
	struct { unsigned long long ns, count; } *vals = calloc((size_t)ncpu, 16);
	unsigned int key, next, *prev = NULL;

	while (vals != NULL && bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		unsigned long long ns = 0, count = 0;
		int i;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(map_fd, &key, vals) != 0)
			continue;
		for (i = 0; i < ncpu; i++) {
			ns += vals[i].ns;
			count += vals[i].count;
		}
		printf("%u %llu %llu\n", key, ns, count);
	}
	free(vals);
	printf("end\n");
	fflush(stdout);
}

int main(void)
{
	struct handler_time_bpf *skel;
	unsigned long long fn = handler_time_kallsyms("perf_swevent_hrtimer");
	char line[64];

	if (fn == 0) {
		fprintf(stderr, "lowprof-handler-time: perf_swevent_hrtimer not in /proc/kallsyms\n");
		return 1;
	}
	skel = handler_time_bpf__open();
	if (skel == NULL) {
		fprintf(stderr, "lowprof-handler-time: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->swevent_fn = fn;
	if (handler_time_bpf__load(skel) != 0 || handler_time_bpf__attach(skel) != 0) {
		fprintf(stderr, "lowprof-handler-time: load/attach: %s\n", strerror(errno));
		handler_time_bpf__destroy(skel);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strncmp(line, "dump", 4) == 0)
			handler_time_dump(bpf_map__fd(skel->maps.totals));
	}
	handler_time_bpf__destroy(skel);
	return 0;
}
