/*
 * Per-process metadata the OTLP encoder needs and the profile model does not
 * hold: the executable path (readlink /proc/PID/exe) and the container id
 * (parsed from /proc/PID/cgroup).
 *
 * Read once, at first sight of a pid (again when it runs another program or
 * is another process: a sample's image_id), and kept after the process
 * exits, so a short-lived process still has its metadata when the
 * interval's profile is encoded. A failed read is remembered too (no retry
 * every interval). The cache is bounded: past max_entries, the oldest entry
 * is forgotten; and process_info_expire forgets the pids without a sample
 * in the window.
 *
 * When the path cannot be had (a process already gone, a source without the
 * privilege), it is unknown and the encoder falls back to the process's comm.
 *
 * Not thread-safe: the exporter's one thread owns it.
 */
#ifndef LOWPROF_EXPORTER_PROCESS_INFO_H
#define LOWPROF_EXPORTER_PROCESS_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exporter/symbols/proc_source.h"

/* A container id is 64 lowercase hex digits (docker, containerd, cri-o, podman). */
#define PROCESS_INFO_CONTAINER_ID_LEN 64
#define PROCESS_INFO_DEFAULT_MAX_ENTRIES 16384
struct process_info {
	uint32_t pid;
	const char *exe_path;   /* "" when unknown; " (deleted)" suffix removed */
	const char *exe_name;   /* basename of exe_path, "" when unknown */
	char container_id[PROCESS_INFO_CONTAINER_ID_LEN + 1]; /* "" when none */
};

struct process_info_cache;

/* src (not owned, outlives the cache) answers for the processes: the loader in
 * a real run, a fixture directory in tests (exporter/symbols/proc_source.h).
 * max_entries 0 = PROCESS_INFO_DEFAULT_MAX_ENTRIES. NULL on out of memory. */
struct process_info_cache *process_info_new(struct proc_source *src, size_t max_entries);
void process_info_free(struct process_info_cache *c);

/* The pid's metadata, asked of the source at its first lookup. Never NULL:
 * fields are "" when unknown. Valid until the entry
 * is evicted (max_entries later lookups of new pids) or the cache is freed. */
const struct process_info *process_info_lookup(struct process_info_cache *c, uint32_t pid);

/* At a sample of pid: as process_info_lookup, and read again when image_id
 * (the sample's, bpf/lowprof.h) is not the one the entry was read for: the
 * process runs another program since (a shell's child sampled before its
 * exec, a wrapper such as nice or env before what it runs) or the pid is
 * another process's, and without this kept the first one's path for as
 * long as it was sampled. */
const struct process_info *process_info_observe(struct process_info_cache *c, uint32_t pid,
						uint16_t image_id);

/* true and *out set when pid is cached; reads nothing. */
bool process_info_peek(const struct process_info_cache *c, uint32_t pid,
		       const struct process_info **out);

size_t process_info_count(const struct process_info_cache *c);

/* Forget the pids not looked up since before_ns (mono_ns): a process gone and
 * out of the window has no sample left to describe. Returns how many. */
size_t process_info_expire(struct process_info_cache *c, uint64_t before_ns);

/* Parse the text of a /proc/PID/cgroup file (len bytes, not necessarily
 * NUL-terminated) for a container id: docker, containerd, cri-o and podman, in
 * systemd (docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope,
 * libpod-ID.scope) and cgroupfs (/docker/ID, /kubepods/.../ID) layouts.
 * The cgroup v2 line ("0::") wins over v1 lines; within a path, the deepest
 * match. Returns true and writes 64 lowercase hex digits + NUL into out. */
bool process_info_parse_container_id(const char *text, size_t len,
				     char out[PROCESS_INFO_CONTAINER_ID_LEN + 1]);

#endif
