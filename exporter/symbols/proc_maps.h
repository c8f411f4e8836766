/*
 * /proc/PID/maps, parsed into sorted entries so a sampled address can be
 * mapped to the file (and file offset) it was executing from.
 *
 * Line format (fs/proc/task_mmu.c):
 *   start-end perms offset major:minor inode   path
 * with the path optional and free text to the end of the line ("[vdso]",
 * "[heap]", "/usr/bin/foo (deleted)", names with spaces).
 */
#ifndef LOWPROF_EXPORTER_PROC_MAPS_H
#define LOWPROF_EXPORTER_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_maps_entry {
	uint64_t start;
	uint64_t end;       /* exclusive */
	uint64_t offset;    /* file offset at start */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	char perms[5];      /* "r-xp" */
	bool deleted;       /* path ends in " (deleted)" */
	const char *path;   /* as the kernel wrote it; "" for anonymous memory */
};

struct proc_maps {
	struct proc_maps_entry *entries; /* sorted by start, non-overlapping */
	size_t count;
	size_t malformed;                /* lines skipped */
	char *text;                      /* owns the path strings, each once */
};

/*
 * Parse len bytes of maps text. Malformed lines (and lines overlapping an
 * earlier one) are skipped and counted. Returns 0 and *out (possibly with no
 * entries: kernel threads have empty maps), or -EINVAL when there were lines
 * but none was well-formed, or -ENOMEM; err says why.
 */
int proc_maps_parse(const char *buf, size_t len, struct proc_maps **out, char *err, size_t errlen);

/* Read and parse a maps file ("/proc/self/maps"). -ENOENT/-EACCES/... from open. */
int proc_maps_read_path(const char *path, struct proc_maps **out, char *err, size_t errlen);
/* The same from an fd the loader opened (read from its position; not closed). */
int proc_maps_read_fd(int fd, const char *name, struct proc_maps **out, char *err, size_t errlen);

/* Read and parse /proc/PID/maps. */
int proc_maps_read_pid(pid_t pid, struct proc_maps **out, char *err, size_t errlen);

/* The entry containing addr (start <= addr < end), or NULL. */
const struct proc_maps_entry *proc_maps_find(const struct proc_maps *m, uint64_t addr);

/* True when the entry is executable. */
bool proc_maps_entry_exec(const struct proc_maps_entry *e);

/* Heap bytes held: the entries and each distinct path once (adjacent
 * mappings of one file share their path). */
size_t proc_maps_memory(const struct proc_maps *m);

void proc_maps_free(struct proc_maps *m);

#endif
