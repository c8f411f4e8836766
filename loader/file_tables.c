/* file_tables: pending files -> open, checked, registered, tables (see the header). */
#define _GNU_SOURCE
#include "loader/file_tables.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <linux/openat2.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpf/lowprof.skel.h"
#include "common/log.h"
#include "common/mono_clock.h"
#include "loader/bpf_session.h"
#include "loader/file_registry.h"
#include "loader/interp_trust.h"
#include "loader/loader_options.h"
#include "loader/mapped_file.h"
#include "loader/overlay_file.h"
#include "loader/unwind_audit.h"

#define FT_TICK_BUDGET_NS (20 * 1000000ULL) /* at most 20 ms of work per drain tick */
#define FT_PENDING_PER_TICK 64
#define FT_UNREACHABLE_TTL_NS (10 * 1000000000ULL) /* a file not opened: asked again after */
#define FT_EXPIRE_NS 1000000000ULL
#define FT_REPORT_NS 30000000000ULL
#define FT_SCAN_MAX 4096
#define FT_SCAN_MAX_BYTES (16u << 20) /* start-up: larger files wait until sampled */

struct ft_scan_item {
	pid_t pid;
	uint64_t start, end;
	struct lowprof_file_id id; /* gen learned when opened */
	uint32_t count;            /* processes that map it */
};

/*
 * Is fd exactly the file id names? Device and inode always; the generation
 * where the file system reports it (FS_IOC_GETVERSION; learn_gen: take it
 * instead of checking it, and fail where it is not reported).
 */
static int ft_check(int fd, struct lowprof_file_id *id, bool learn_gen)
{
	struct stat st;
	long gen = 0;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_ino != id->ino || st.st_dev != file_registry_udev(id->dev))
		return -ESTALE;
	if (ioctl(fd, FS_IOC_GETVERSION, &gen) != 0)
		return learn_gen ? -ENOTTY : 0;
	if (learn_gen)
		id->gen = (uint32_t)gen;
	else if ((uint32_t)gen != id->gen)
		return -ESTALE;
	return 0;
}

/* Open path (a magic link of /proc: map_files, exe) as mapped_file.h does
 * (O_PATH first, no side effect), then check the identity exactly. */
static int ft_open_magic(const char *proc_root, const char *path, struct lowprof_file_id *id,
			 bool learn_gen)
{
	struct mapped_file *m = calloc(1, sizeof(*m));
	struct stat st;
	int fd, rc;

	if (m == NULL)
		return -ENOMEM;
	m->ino = id->ino;
	m->major = id->dev >> 20;
	m->minor = id->dev & 0xfffff;
	fd = mapped_file_open_checked(proc_root, AT_FDCWD, path, 0, m, &st);
	free(m);
	if (fd < 0)
		return fd;
	rc = ft_check(fd, id, learn_gen);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/*
 * The maps path resolved in the process's root, and then, if that fails, its
 * shorter suffixes ("/a/b/lib/x.so", "/b/lib/x.so", "/lib/x.so"): a file on
 * a mount of another mount namespace is named from that namespace's root,
 * which its chroot may lie below. Only the very file mapped is accepted.
 */
static int ft_open_suffixes(const char *proc_root, pid_t pid, struct mapped_file *m,
			    struct stat *st)
{
	int fd = mapped_file_open(proc_root, pid, m, true, st), first = fd;
	char *p;

	while (fd < 0 && !m->deleted && (p = strchr(m->path + 1, '/')) != NULL) {
		memmove(m->path, p, strlen(p) + 1);
		fd = mapped_file_open(proc_root, pid, m, true, st);
	}
	return fd >= 0 ? fd : first;
}

/*
 * A file mapped through overlayfs: the VMA names the layer's file, every
 * path a process sees names the overlay's. The layer directories come from
 * the overlay's mount options (overlay_file.h), named as its mounter named
 * them: from the loader's root, else from init's (a loader in a container
 * of the host's pid namespace). The file below each, upper first, opened
 * without symlinks and kept only if it is exactly the reported one. With
 * learn (the start-up queue, which knows only the overlay's identity from
 * maps): the first regular file found, upper first, as the overlay shows it,
 * its identity learned into *id (a table is keyed by its own file's
 * identity whatever it is; a shadowed one is only wasted).
 */
static int ft_open_overlay(const char *proc_root, pid_t pid, const struct mapped_file *m,
			   struct lowprof_file_id *id, bool learn_gen, bool learn)
{
	const uint64_t strict = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC};
	struct open_how probe = {.flags = O_PATH | O_CLOEXEC, .resolve = strict};
	char path[MAPPED_FILE_PATH_MAX], init_root[64];
	struct lowprof_file_id found;
	struct mapped_file *want;
	struct overlay_file of;
	struct stat st;
	size_t i, plen;
	int fd = -ENOENT, dir, r, rc, pfd;

	snprintf(path, sizeof(path), "%s", m->path);
	plen = strlen(path);
	/* Gone from the overlay's view; a lower layer may still hold it. */
	if (m->deleted && plen > 10)
		path[plen - 10] = '\0';
	rc = overlay_file_find(proc_root, pid, path, makedev(m->major, m->minor), &of);
	if (rc != 0)
		return rc;
	want = calloc(1, sizeof(*want));
	if (want == NULL) {
		overlay_file_free(&of);
		return -ENOMEM;
	}
	snprintf(init_root, sizeof(init_root), "%s/1/root", proc_root);
	for (i = 0; i < of.nlayers && fd < 0; i++) {
		for (r = 0; r < 2 && fd < 0; r++) {
			int rootfd = r == 0 ? AT_FDCWD : open(init_root, O_PATH | O_DIRECTORY | O_CLOEXEC);

			if (rootfd == -1)
				continue;
			how.resolve = r == 0 ? 0 : RESOLVE_IN_ROOT;
			dir = (int)syscall(SYS_openat2, rootfd, of.layers[i], &how, sizeof(how));
			if (rootfd >= 0)
				close(rootfd);
			if (dir < 0)
				continue;
			found = *id;
			if (learn) {
				/* No side effect (O_PATH): the identity of what is there. */
				pfd = (int)syscall(SYS_openat2, dir, of.rel, &probe, sizeof(probe));
				rc = pfd < 0 ? -errno : fstat(pfd, &st) != 0 ? -errno : 0;
				if (pfd >= 0)
					close(pfd);
				if (rc != 0 || !S_ISREG(st.st_mode)) {
					close(dir);
					continue;
				}
				found.ino = st.st_ino;
				found.dev = file_registry_kdev(st.st_dev);
			}
			want->ino = found.ino;
			want->major = found.dev >> 20;
			want->minor = found.dev & 0xfffff;
			rc = mapped_file_open_checked(proc_root, dir, of.rel, strict, want, &st);
			close(dir);
			if (rc >= 0 && ft_check(rc, &found, learn_gen) != 0) {
				close(rc);
				rc = -ESTALE;
			}
			if (rc >= 0) {
				fd = rc;
				*id = found;
			} else if (fd == -ENOENT) {
				fd = rc;
			}
		}
	}
	free(want);
	overlay_file_free(&of);
	return fd;
}

static int ft_open_id(const char *proc_root, pid_t pid, struct lowprof_file_id *id,
		      uint64_t start, uint64_t end, bool learn_gen, char *path, size_t pathlen)
{
	struct mapped_file *m;
	char link[160];
	struct stat st;
	int fd, rc, first;
	ssize_t n;

	/* The mapped file itself, also deleted or replaced (with CAP_CHECKPOINT_RESTORE). */
	snprintf(link, sizeof(link), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, proc_root, (int)pid,
		 start, end);
	fd = ft_open_magic(proc_root, link, id, learn_gen);
	first = fd;
	if (fd < 0) {
		/* The executable, also deleted or replaced (CAP_SYS_PTRACE suffices). */
		snprintf(link, sizeof(link), "%s/%d/exe", proc_root, (int)pid);
		fd = ft_open_magic(proc_root, link, id, learn_gen);
	}
	if (fd >= 0) {
		n = readlink(link, path, pathlen - 1);
		path[n > 0 ? (size_t)n : 0] = '\0';
		return fd;
	}
	/* The path in maps, within the process's root, no symlinks (mapped_file.h). */
	m = malloc(sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	rc = mapped_file_find(proc_root, pid, start, end, m);
	if (rc == 0) {
		if (m->ino != id->ino || ((uint32_t)m->major << 20 | m->minor) != id->dev) {
			rc = -ESTALE;
		} else {
			fd = ft_open_suffixes(proc_root, pid, m, &st);
			rc = fd;
			if (fd >= 0) {
				rc = ft_check(fd, id, learn_gen);
				if (rc != 0)
					close(fd);
			}
		}
		/* maps names another file than the VMA's, or its path is gone: a
		 * file on overlayfs is mapped as its layer's file. */
		if (rc != 0 && (fd = ft_open_overlay(proc_root, pid, m, id, learn_gen, false)) >= 0)
			rc = 0;
		if (rc == 0)
			snprintf(path, pathlen, "%s", m->path);
	}
	free(m);
	if (rc < 0)
		return rc == -ENOENT && first != -ENOENT ? first : rc;
	return fd;
}

int file_tables_open(const char *proc_root, pid_t pid, const struct lowprof_file_id *id,
		     uint64_t start, uint64_t end, char *path, size_t pathlen)
{
	struct lowprof_file_id want = *id;

	return ft_open_id(proc_root, pid, &want, start, end, false, path, pathlen);
}

/* Files the cache dropped: on the audit record, and out of the registry. */
static void ft_forget_dropped(struct file_tables *ft, const char *why)
{
	size_t i;

	for (i = 0; i < ft->maps.ndropped; i++) {
		unwind_audit_evict(&ft->maps.dropped[i], why);
		if (ft->reg != NULL)
			file_registry_forget(ft->reg, &ft->maps.dropped[i]);
	}
	ft->maps.ndropped = 0;
}

void file_tables_build(struct file_tables *ft, const struct lowprof_file_id *id, int fd,
		       const char *path)
{
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	struct unwind_file_mark mark;
	struct unwinder_build_id bid;
	enum unwinder_result res;
	struct unwind_file *f;
	struct unwind_table t;
	uint64_t evicted;
	uint32_t nseg;
	char err[256];

	if (!ft->have_client || ft->choice == LOADER_UNWIND_FP) {
		/* No tables (--unwind fp, or no parser): an entry without rows, so
		 * that the walker stops asking; the file is registered all the same. */
		unwind_maps_add_refused(&ft->maps, id, ft->maps.refused_ttl_ns);
		return;
	}
	res = unwinder_client_parse(&ft->client, fd,
				    UNWIND_TABLE_HDR_SIZE +
					    (size_t)ft->maps.capacity * sizeof(struct unwind_row),
				    &t, seg, &nseg, &bid, err, sizeof(err));
	if (res == UNWINDER_UNAVAILABLE) {
		/* Nothing written: the walker asks again, the unwinder may be back. */
		ft->st.files_unavailable++;
		log_warn("unwind table of %s: %s", path, err);
		return;
	}
	if (res == UNWINDER_REFUSED || res == UNWINDER_STUCK) {
		/* A file the unwinder could not finish in time is refused too: a
		 * crafted one never stalls the loop a second time. */
		ft->st.files_refused++;
		log_warn("unwind table of %s refused: %s (frame pointers for it)", path, err);
		unwind_maps_add_refused(&ft->maps, id, ft->maps.refused_ttl_ns);
		return;
	}
	evicted = ft->maps.evictions;
	/* Its header and build id may name every process's dynamic loader or
	 * library only if no unprivileged user can have written it
	 * (interp_trust.h). */
	f = unwind_maps_add(&ft->maps, id, &t, seg, nseg,
			    interp_trust_fd(fd) && unwind_maps_file_mark(fd, &bid, &mark) == 0 ? &mark : NULL);
	if (f != NULL && f->state == UNWIND_FILE_READY)
		unwind_audit_rows(path, id, f->first_row, f->nrows, ft->maps.evictions - evicted);
	if (f != NULL && f->state == UNWIND_FILE_NO_SPACE)
		log_warn("unwind table of %s (%zu rows) does not fit in --unwind-table-mb beside "
			 "the tables in use: frame pointers for it", path, t.nrows);
	else if (f != NULL)
		log_debug("unwind table of %s: %zu rows%s", path, t.nrows,
			  (f->flags & LOWPROF_UNWIND_FILE_NO_FP) ? " (no frame pointers)" : "");
	unwind_table_free(&t);
	ft->st.files_parsed++;
}

/* An opened file to the registry (the exporter's symbols), a dup of fd. */
static void ft_register(struct file_tables *ft, const struct lowprof_file_id *id, int fd,
			const char *path)
{
	struct lowprof_file_id evicted;
	int dup_fd;

	if (ft->reg == NULL)
		return;
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd >= 0 && file_registry_add(ft->reg, id, dup_fd, path, &evicted) == 1)
		unwind_audit_evict(&evicted, "file registry full");
}

/* An opened file: to the registry, then its table. */
static void ft_take(struct file_tables *ft, const struct lowprof_file_id *id, int fd,
		    const char *path)
{
	ft_register(ft, id, fd, path);
	file_tables_build(ft, id, fd, path);
}

/* Times the file of key could not be opened lately (this one included). */
static uint32_t ft_missed(struct file_tables *ft, const struct lowprof_file_id *key)
{
	uint64_t now = mono_ns();
	size_t i, oldest = 0;

	for (i = 0; i < FT_MISSES; i++) {
		struct ft_miss *m = &ft->miss[i];

		if (m->id.ino == key->ino && m->id.dev == key->dev && m->id.gen == key->gen) {
			if (now - m->last_ns > FT_UNREACHABLE_TTL_NS)
				m->n = 0;
			m->last_ns = now;
			return ++m->n;
		}
		if (m->last_ns < ft->miss[oldest].last_ns)
			oldest = i;
	}
	ft->miss[oldest].id = *key;
	ft->miss[oldest].n = 1;
	ft->miss[oldest].last_ns = now;
	return 1;
}

/* One pending file. */
static void ft_pending_one(struct file_tables *ft, const struct lowprof_file_id *key,
			   const struct lowprof_unwind_pending *p)
{
	struct lowprof_file_id id = *key;
	char path[MAPPED_FILE_PATH_MAX];
	int fd;

	ft->st.pending++;
	if (unwind_maps_find(&ft->maps, key) != NULL)
		return; /* its entry was written meanwhile */
	fd = ft_open_id("/proc", (pid_t)p->pid, &id, p->start, p->end, false, path, sizeof(path));
	if (fd < 0) {
		ft->st.files_unreachable++;
		log_debug("file %u:%u inode %" PRIu64 " of pid %u: %s", id.dev >> 20, id.dev & 0xfffff,
			  (uint64_t)id.ino, p->pid, strerror(-fd));
		/*
		 * Most often the process has exited (a short-lived one can be gone
		 * a few milliseconds after its sample): the next sample of another
		 * process of the file asks again, with its pid. Only a file missed
		 * again and again is given up for a while (frame pointers for it).
		 */
		if (ft_missed(ft, key) >= FT_MISSES_BEFORE_REFUSAL)
			unwind_maps_add_refused(&ft->maps, key, FT_UNREACHABLE_TTL_NS);
		return;
	}
	ft_take(ft, key, fd, path);
	close(fd);
}

/* Returns the pending files seen. */
static size_t ft_read_pending(struct file_tables *ft, uint64_t start)
{
	struct lowprof_file_id keys[FT_PENDING_PER_TICK], key, next;
	struct lowprof_unwind_pending p;
	size_t n = 0, i;
	void *prev = NULL;
	uint64_t cpu;

	/* Collect first, delete after: deleting while walking restarts the walk. */
	while (n < FT_PENDING_PER_TICK &&
	       bpf_map_get_next_key(ft->maps.pending_fd, prev, &next) == 0) {
		keys[n++] = next;
		key = next;
		prev = &key;
	}
	if (n == 0)
		return 0;
	/* Timed only when there are files: an idle tick makes no extra call. */
	cpu = thread_cpu_ns();
	for (i = 0; i < n; i++) {
		if (mono_ns() - start >= ft->tick_budget_ns) {
			ft->st.deferred_ticks++;
			ft->busy = true;
			break;
		}
		if (bpf_map_lookup_elem(ft->maps.pending_fd, &keys[i], &p) != 0)
			continue;
		ft_pending_one(ft, &keys[i], &p);
		/* Deleted only once its entry (table or refusal) is written: the
		 * walker asks again only for a file the loader no longer knows. */
		bpf_map_delete_elem(ft->maps.pending_fd, &keys[i]);
	}
	/* The start-up tables are start-up: every lowprof process's CPU is then. */
	if (!file_tables_starting(ft))
		ft->st.work_cpu_ns += thread_cpu_ns() - cpu;
	return n;
}

static int ft_scan_cmp(const void *a, const void *b)
{
	const struct ft_scan_item *x = a, *y = b;

	return x->count != y->count ? (x->count < y->count ? 1 : -1) : 0;
}

/* The executable files process pid maps into the start-up queue, each once
 * (counted per process that maps it). m, *line, *cap: the caller's buffers. */
static void ft_scan_process(struct file_tables *ft, const char *proc_root, pid_t pid,
			    struct mapped_file *m, char **line, size_t *cap)
{
	char path[300];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return;
	while (getline(line, cap, f) > 0) {
		uint32_t kdev;

		if (!mapped_file_parse_line(*line, m) || !mapped_file_executable(m))
			continue;
		kdev = (uint32_t)m->major << 20 | m->minor;
		for (i = 0; i < ft->nscan; i++) {
			if (ft->scan[i].id.ino == m->ino && ft->scan[i].id.dev == kdev)
				break;
		}
		if (i < ft->nscan) {
			ft->scan[i].count++;
		} else if (ft->nscan < FT_SCAN_MAX) {
			ft->scan[i].pid = pid;
			ft->scan[i].start = m->start;
			ft->scan[i].end = m->end;
			ft->scan[i].id.ino = m->ino;
			ft->scan[i].id.dev = kdev;
			ft->scan[i].count = 1;
			ft->nscan++;
		}
	}
	fclose(f);
}

/* The start-up queue: every executable file of every running process (with
 * npids > 0, of those processes alone: -p samples no other), once, ordered
 * by how many processes map it. */
static void ft_scan_processes(struct file_tables *ft, const char *proc_root, const pid_t *pids,
			      size_t npids)
{
	struct mapped_file *m = malloc(sizeof(*m));
	char *line = NULL;
	struct dirent *de;
	size_t cap = 0, i;
	DIR *d = NULL;

	ft->scan = calloc(FT_SCAN_MAX, sizeof(*ft->scan));
	if (npids == 0)
		d = opendir(proc_root);
	if (m == NULL || ft->scan == NULL || (npids == 0 && d == NULL)) {
		if (d != NULL)
			closedir(d);
		free(m);
		return;
	}
	for (i = 0; i < npids; i++)
		ft_scan_process(ft, proc_root, pids[i], m, &line, &cap);
	while (d != NULL && (de = readdir(d)) != NULL) {
		if (isdigit((unsigned char)de->d_name[0]))
			ft_scan_process(ft, proc_root, (pid_t)atoi(de->d_name), m, &line, &cap);
	}
	if (d != NULL)
		closedir(d);
	free(line);
	free(m);
	qsort(ft->scan, ft->nscan, sizeof(*ft->scan), ft_scan_cmp);
}

/* The layer file behind the overlay file of a start-up item: fd, its
 * identity into it->id, or -errno. */
static int ft_scan_overlay(struct ft_scan_item *it, char *path, size_t pathlen)
{
	struct mapped_file *m = malloc(sizeof(*m));
	int fd;

	if (m == NULL)
		return -ENOMEM;
	fd = mapped_file_find("/proc", it->pid, it->start, it->end, m);
	if (fd == 0)
		fd = ft_open_overlay("/proc", it->pid, m, &it->id, true, true);
	if (fd >= 0)
		snprintf(path, pathlen, "%s", m->path);
	free(m);
	return fd;
}

/* One file of the start-up queue: its generation is learned from the file
 * (FS_IOC_GETVERSION); where the file system does not report it, the
 * walker's request will name it. */
static void ft_scan_one(struct file_tables *ft, struct ft_scan_item *it)
{
	char path[MAPPED_FILE_PATH_MAX];
	struct unwind_file *f;
	struct statfs sfs;
	struct stat st;
	int fd;

	fd = ft_open_id("/proc", it->pid, &it->id, it->start, it->end, true, path, sizeof(path));
	/* maps names a file on overlayfs by the overlay's identity, which the
	 * walker never reports (and which has no generation): the table is the
	 * layer file's, by its own identity. */
	if (fd < 0 || (fstatfs(fd, &sfs) == 0 && sfs.f_type == OVERLAYFS_SUPER_MAGIC)) {
		if (fd >= 0)
			close(fd);
		fd = ft_scan_overlay(it, path, sizeof(path));
		if (fd < 0)
			return;
	}
	/* A table the previous loader built: the file only needs registering
	 * (whatever its size: nothing is parsed). */
	f = unwind_maps_find(&ft->maps, &it->id);
	if (f != NULL && f->adopted) {
		ft_register(ft, &it->id, fd, path);
		f->adopted = false;
		ft->st.adopted_found++;
		close(fd);
		return;
	}
	/* A large file can hold the unwinder for its whole time limit: left to
	 * the walker's request, if it is ever sampled. */
	if (fstat(fd, &st) != 0 || st.st_size > FT_SCAN_MAX_BYTES) {
		close(fd);
		return;
	}
	ft->st.scanned++;
	if (unwind_maps_find(&ft->maps, &it->id) == NULL) {
		ft_take(ft, &it->id, fd, path);
		unwind_maps_mark_unused(&ft->maps, &it->id);
	}
	close(fd);
}

void file_tables_log_usage(struct file_tables *ft)
{
	struct lowprof_unwind_stats ws;
	struct unwind_maps_usage u;

	unwind_maps_usage(&ft->maps, &u);
	log_debug("unwind tables: %.1f MiB rows in %.1f MiB of kernel memory, at most %.1f (%" PRIu64
		  " files, %" PRIu64 " refused, %" PRIu64 " over budget, %" PRIu64
		  " evicted); %" PRIu64 " parsed, %" PRIu64 " pending, %" PRIu64
		  " unreachable, %.1f ms building",
		  (double)u.rows_used * 16 / 1048576.0, (double)u.allocated_bytes / 1048576.0,
		  (double)u.budget_bytes / 1048576.0, u.files_ready, u.files_refused,
		  u.files_no_space, u.evictions, ft->st.files_parsed, ft->st.pending,
		  ft->st.files_unreachable, (double)ft->st.work_ns / 1e6);
	/* __u64 is unsigned long long. */
	if (unwind_maps_read_stats(&ft->maps, &ws) == 0)
		log_debug("unwind walker: %llu stacks, %llu whole, %llu"
			  " truncated, stopped: %llu no table, %llu failed, %llu"
			  " no frame pointers, %llu no mapping, %llu anonymous; %llu"
			  " VMA lookups (%llu failed), %llu cached, %llu text, %llu dynamic loader;"
			  " %llu from the memo, %llu from the library list; rows: %llu from the row cache, %llu searched,"
			  " %llu not needed (frame pointers); stack: %llu reads, %llu copies;"
			  " before a table: %llu frames by RBP",
			  ws.samples, ws.complete, ws.truncated, ws.stop[LOWPROF_STOP_NO_TABLE],
			  ws.stop[LOWPROF_STOP_UNWIND_FAILED], ws.stop[LOWPROF_STOP_NO_FRAME_POINTERS],
			  ws.stop[LOWPROF_STOP_NO_MAPPING], ws.stop[LOWPROF_STOP_ANON], ws.vma_lookups,
			  ws.vma_failed, ws.vma_cached, ws.vma_text, ws.vma_interp, ws.vma_memo, ws.vma_dl, ws.rows_cached,
			  ws.rows_searched, ws.rows_skipped, ws.stack_reads, ws.stack_copies,
			  ws.fp_before_table);
}

/* The previous loader's tables, taken over at init (its pins are ours). */
static void ft_adopt(struct file_tables *ft)
{
	struct unwind_maps_adoption ad;
	int rc = unwind_maps_adopt(&ft->maps, &ad);

	if (rc != 0)
		log_warn("taking over the previous loader's unwind tables: %s", strerror(-rc));
	if (ad.chunks == 0 && ad.files == 0 && ad.entries_dropped == 0 && ad.chunks_dropped == 0)
		return;
	ft->st.adopted = ad.files;
	ft->adopting = ad.files > 0;
	unwind_audit_adopt(&ad);
	log_info("took over the previous loader's unwind tables: %" PRIu64 " files, %" PRIu64
		 " rows in %u chunks (%" PRIu64 " entries and %u chunks refused)",
		 ad.files, ad.rows, ad.chunks, ad.entries_dropped, ad.chunks_dropped);
}

/* The start-up scan is over: adopted tables of files no running process
 * maps go (the walker asks for such a file again, through the process that
 * maps it: the file registry needs it opened). */
static void ft_adoption_done(struct file_tables *ft)
{
	size_t n = unwind_maps_drop_unseen(&ft->maps);

	ft->adopting = false;
	ft->st.adopted_dropped += n;
	ft_forget_dropped(ft, "taken over from the previous loader, mapped by no running process");
	log_debug("unwind tables taken over: %" PRIu64 " found mapped, %zu dropped",
		  ft->st.adopted_found, n);
}

void file_tables_tick(struct file_tables *ft)
{
	uint64_t start = mono_ns(), now;
	size_t found = 0;

	if (!ft->active)
		return;
	ft->busy = false;
	if (ft->events != NULL)
		found += ring_buffer__consume(ft->events) > 0;
	found += ft_read_pending(ft, start);
	/* Start-up queue after the requests: those are files being sampled now. */
	while (ft->scan_at < ft->nscan && mono_ns() - start < ft->tick_budget_ns)
		ft_scan_one(ft, &ft->scan[ft->scan_at++]);
	if (ft->scan_at < ft->nscan)
		ft->busy = true;
	else if (ft->scan != NULL) {
		/* Start-up's last part, said so that what follows (a benchmark's
		 * window, an operator's reading) can tell it from steady state. */
		log_info("start-up unwind tables done: %zu files of the running processes, %" PRIu64
			 " tables built, in %.1f s",
			 ft->nscan, ft->st.files_parsed, (double)(mono_ns() - ft->scan_start_ns) / 1e9);
		free(ft->scan);
		ft->scan = NULL;
		ft->nscan = ft->scan_at = 0;
	}
	if (ft->adopting && ft->scan_at >= ft->nscan)
		ft_adoption_done(ft);
	if (found > 0)
		ft->busy = true;
	now = mono_ns();
	if (now - ft->last_expire_ns >= FT_EXPIRE_NS) {
		ft->last_expire_ns = now;
		unwind_maps_expire(&ft->maps, now);
	}
	ft_forget_dropped(ft, "least recently used, or refusal expired");
	if (ft->maps.cache_evictions != ft->audited_evictions ||
	    ft->maps.refused_expired != ft->audited_expired) {
		unwind_audit_cache(ft->maps.cache_evictions - ft->audited_evictions,
				   ft->maps.refused_expired - ft->audited_expired,
				   ft->maps.cache_evictions, ft->maps.refused_expired, ft->maps.nfiles);
		ft->audited_evictions = ft->maps.cache_evictions;
		ft->audited_expired = ft->maps.refused_expired;
	}
	ft->st.work_ns += mono_ns() - start;
	if (now - ft->last_report_ns >= FT_REPORT_NS && ft->reported != ft->st.files_parsed) {
		ft->last_report_ns = now;
		ft->reported = ft->st.files_parsed;
		file_tables_log_usage(ft);
	}
}

int file_tables_wakeup_fd(const struct file_tables *ft)
{
	return ft->active && ft->events != NULL ? ring_buffer__epoll_fd(ft->events) : -1;
}

bool file_tables_starting(const struct file_tables *ft)
{
	return ft->scan != NULL;
}

void file_tables_configure(struct file_tables *ft, unsigned choice)
{
	memset(ft, 0, sizeof(*ft));
	ft->choice = choice;
}

unsigned file_tables_unwind_mode(const struct file_tables *ft, unsigned wanted)
{
	if (ft->choice == LOADER_UNWIND_FP)
		return LOWPROF_UNWIND_FP;
	if (ft->choice == LOADER_UNWIND_DWARF)
		return LOWPROF_UNWIND_DWARF;
	return wanted;
}

void file_tables_start(struct file_tables *ft, struct bpf_session *sess,
		       struct file_registry *reg, const pid_t *pids, size_t npids)
{
	struct throttle t;
	char err[512];

	/* With --unwind fp too: the files sampled frames lie in are opened and
	 * registered for the exporter, only no table is built. */
	if (file_tables_init(ft, sess->skel, reg, sess->pin_dir, pids, npids, err, sizeof(err)) == 0) {
		ft->active = true;
		ft->busy = ft->nscan > 0;
		log_debug("unwind tables (--unwind=%s): %.0f MiB for tables, %zu files of running "
			  "processes queued",
			  ft->choice == LOADER_UNWIND_DWARF ? "dwarf" : ft->choice == LOADER_UNWIND_FP ? "fp" : "auto",
			  (double)ft->maps.capacity * 16 / 1048576.0, ft->nscan);
		return;
	}
	log_warn("DWARF unwinding unavailable (%s): frame pointers only", err);
	ft->choice = LOADER_UNWIND_FP;
	t = sess->throttle;
	t.unwind_mode = LOWPROF_UNWIND_FP;
	if (bpf_session_apply(sess, &t, err, sizeof(err)) != 0)
		log_warn("switching to frame pointers: %s", err);
}

/* The ring's records only wake the loader: the tick reads unwind_pending. */
static int ft_on_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

int file_tables_init(struct file_tables *ft, struct lowprof_bpf *skel, struct file_registry *reg,
		     const char *pin_dir, const pid_t *pids, size_t npids, char *err, size_t errlen)
{
	char cerr[256];

	ft->tick_budget_ns = FT_TICK_BUDGET_NS;
	ft->last_report_ns = ft->last_expire_ns = mono_ns();
	ft->reg = reg;
	if (unwind_maps_init(&ft->maps, skel, pin_dir, err, errlen) != 0)
		return -1;
	ft_adopt(ft);
	ft->events = ring_buffer__new(bpf_map__fd(skel->maps.unwind_events), ft_on_event, ft, NULL);
	if (ft->events == NULL) {
		snprintf(err, errlen, "ring_buffer__new(unwind_events): %s", strerror(errno));
		unwind_maps_fini(&ft->maps);
		return -1;
	}
	if (ft->choice == LOADER_UNWIND_FP)
		return 0; /* no parser, no start-up tables */
	/* Without the parser every file stays on frame pointers; sampling goes on. */
	if (unwinder_client_init(&ft->client, cerr, sizeof(cerr)) == 0)
		ft->have_client = true;
	else
		log_warn("no unwind table parser (%s): frame pointers only", cerr);
	ft->scan_start_ns = mono_ns();
	ft_scan_processes(ft, "/proc", pids, npids);
	return 0;
}

void file_tables_fini(struct file_tables *ft)
{
	if (!unwind_maps_ready(&ft->maps))
		return; /* never initialised (--unwind=fp) */
	if (ft->active)
		file_tables_log_usage(ft);
	ring_buffer__free(ft->events);
	ft->events = NULL;
	if (ft->have_client)
		unwinder_client_fini(&ft->client);
	ft->have_client = false;
	ft->active = false;
	free(ft->scan);
	ft->scan = NULL;
	unwind_maps_fini(&ft->maps);
}
