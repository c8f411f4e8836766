/* proc_source: dispatch to the implementation (see the header). */
#include "exporter/symbols/proc_source_internal.h"

#include <stdlib.h>

#include <errno.h>
#include <string.h>

/* Count the answer: an fd or 0 is a success, -errno a failure. */
static int proc_source_count(struct proc_source *src, int rc)
{
	src->stats.requests++;
	if (rc < 0)
		src->stats.failures++;
	return rc;
}

int proc_source_open_maps(struct proc_source *src, uint32_t pid)
{
	return proc_source_count(src, src->ops->open_maps(src, pid));
}

void proc_source_open_maps_many(struct proc_source *src, const uint32_t *pids, size_t n, int *fds)
{
	size_t i;

	if (src->ops->open_maps_many == NULL) {
		for (i = 0; i < n; i++)
			fds[i] = proc_source_open_maps(src, pids[i]);
		return;
	}
	src->ops->open_maps_many(src, pids, n, fds);
	for (i = 0; i < n; i++)
		proc_source_count(src, fds[i]);
}

int proc_source_open_mapped_file(struct proc_source *src, uint32_t pid,
				 const struct proc_maps_entry *e)
{
	return proc_source_count(src, src->ops->open_mapped_file(src, pid, e));
}

int proc_source_open_file(struct proc_source *src, const struct lowprof_file_id *id, char *path,
			  size_t pathlen)
{
	if (pathlen > 0)
		path[0] = '\0';
	return proc_source_count(src, src->ops->open_file(src, id, path, pathlen));
}

int proc_source_open_debug_file(struct proc_source *src, const char *build_id)
{
	return proc_source_count(src, src->ops->open_debug_file(src, build_id));
}

int proc_source_open_kallsyms(struct proc_source *src)
{
	return proc_source_count(src, src->ops->open_kallsyms(src));
}

int proc_source_process(struct proc_source *src, uint32_t pid, char *exe, size_t exelen,
			char **cgroup, size_t *cgroup_len)
{
	if (exelen > 0)
		exe[0] = '\0';
	*cgroup = NULL;
	*cgroup_len = 0;
	return proc_source_count(src, src->ops->process(src, pid, exe, exelen, cgroup, cgroup_len));
}

void proc_source_get_stats(const struct proc_source *src, struct proc_source_stats *out)
{
	*out = src->stats;
}

void proc_source_set_timeout(struct proc_source *src, unsigned timeout_ms)
{
	if (src->ops->set_timeout != NULL)
		src->ops->set_timeout(src, timeout_ms);
}

void proc_source_free(struct proc_source *src)
{
	if (src == NULL)
		return;
	if (src->ops->free != NULL)
		src->ops->free(src);
	else
		free(src);
}
