/*
 * Pinning the loader's BPF objects in bpffs so that a restarted loader
 * re-adopts them and sampling never stops (issue: supervisor restarts).
 *
 * Layout, under the pin directory the supervisor names (one per lowprof run,
 * /sys/fs/bpf/lowprof/<supervisor pid>-<its start time>):
 *   samples cpu_stats run_config target_pids   the maps whose contents matter
 *   offcpu_stats follow_stats                  across a restart (pending samples,
 *                                              cumulative counters, settings)
 *   unwind_rows unwind_files unwind_chunk_<K>  the DWARF tables: the array of
 *                                              row chunks, the files' entries,
 *                                              and each chunk (so that the next
 *                                              loader can map its rows)
 *   link_cpu<N>                                the perf-event link of CPU N; it
 *                                              holds the program and the perf
 *                                              event alive while no loader runs
 * A clean stop removes everything; a new lowprof removes what a killed one left.
 */
#ifndef LOWPROF_LOADER_BPF_PINS_H
#define LOWPROF_LOADER_BPF_PINS_H

#include <stdbool.h>
#include <stddef.h>

struct lowprof_bpf;
struct bpf_link;

/*
 * Create dir (and its parent) and remove the pin directories of runs whose
 * supervisor is gone. Returns the number of stale directories removed, or
 * -errno with a message.
 */
int bpf_pins_prepare(const char *dir, char *err, size_t errlen);
/* Before load: the persistent maps reuse pins in dir, or are pinned there. */
int bpf_pins_set_map_paths(struct lowprof_bpf *skel, const char *dir);
/*
 * Replace CPU cpu's pinned link by link: the old one (a dead loader's) is
 * unpinned first, which detaches it and releases its perf event, then the new
 * one is pinned. Sets *adopted when an old link was there. 0 or -errno.
 */
int bpf_pins_replace_link(const char *dir, int cpu, struct bpf_link *link, bool *adopted);
/* CPU cpu went offline: its link's pin goes (the link's perf event died
 * with the CPU). 0, or -errno (-ENOENT: none was pinned). */
int bpf_pins_remove_link(const char *dir, int cpu);
/* Clean stop: remove every pin in dir (links first) and dir itself. 0 or -errno. */
int bpf_pins_remove_dir(const char *dir);

#endif
