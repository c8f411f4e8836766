/* The two proc_source implementations behind exporter/symbols/proc_source.h. */
#ifndef LOWPROF_EXPORTER_PROC_SOURCE_INTERNAL_H
#define LOWPROF_EXPORTER_PROC_SOURCE_INTERNAL_H

#include "exporter/symbols/proc_source.h"

struct proc_source_ops {
	int (*open_maps)(struct proc_source *src, uint32_t pid);
	/* NULL: open_maps one by one. */
	void (*open_maps_many)(struct proc_source *src, const uint32_t *pids, size_t n, int *fds);
	int (*open_mapped_file)(struct proc_source *src, uint32_t pid, const struct proc_maps_entry *e);
	int (*open_file)(struct proc_source *src, const struct lowprof_file_id *id, char *path,
			 size_t pathlen);
	int (*open_debug_file)(struct proc_source *src, const char *build_id);
	int (*open_kallsyms)(struct proc_source *src);
	int (*process)(struct proc_source *src, uint32_t pid, char *exe, size_t exelen, char **cgroup,
		       size_t *cgroup_len);
	void (*set_timeout)(struct proc_source *src, unsigned timeout_ms); /* NULL: none */
	void (*free)(struct proc_source *src); /* NULL: free() (nothing else held) */
};

/* Each implementation embeds this first. */
struct proc_source {
	const struct proc_source_ops *ops;
	struct proc_source_stats stats;
};

#endif
