/* proc_tracker: processes -> unwind tables (see the header). */
#define _GNU_SOURCE
#include "loader/proc_tracker.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf/lowprof.skel.h"
#include "common/log.h"
#include "loader/bpf_session.h"
#include "loader/loader_options.h"
#include "loader/mapped_file.h"

#define PT_TICK_BUDGET_NS (20 * 1000000ULL)  /* at most 20 ms of work per drain tick */
#define PT_PENDING_PER_TICK 256
#define PT_REFRESH_NS 1000000000ULL           /* a process's mappings reread at most 1/s */
#define PT_SWEEP_NS 5000000000ULL
#define PT_REPORT_NS 30000000000ULL
#define PT_MAX_FILES_PER_PROC LOWPROF_UNWIND_MAX_MAPPINGS

struct proc_entry {
	pid_t pid;
	uint64_t loaded_ns;
	uint32_t nfiles;
	struct unwind_file *files[PT_MAX_FILES_PER_PROC]; /* one reference each */
	struct proc_entry *next;
	bool queued;
};

static uint64_t pt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct proc_entry **pt_slot(struct proc_tracker *pt, pid_t pid)
{
	struct proc_entry **pp = &pt->buckets[(uint32_t)pid % PROC_TRACKER_BUCKETS];

	while (*pp != NULL && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

static void pt_release_files(struct proc_tracker *pt, struct proc_entry *e)
{
	uint32_t i;

	for (i = 0; i < e->nfiles; i++)
		unwind_maps_unref(&pt->maps, e->files[i]);
	e->nfiles = 0;
}

/* Forget a process: its map entry, its file references. */
static void pt_forget(struct proc_tracker *pt, pid_t pid)
{
	struct proc_entry **pp = pt_slot(pt, pid);
	struct proc_entry *e = *pp;

	if (e == NULL)
		return;
	unwind_maps_proc_delete(&pt->maps, (uint32_t)pid);
	unwind_audit_proc_delete(&pt->audit, (uint32_t)pid);
	pt_release_files(pt, e);
	*pp = e->next;
	free(e);
	pt->nprocs--;
	pt->maps.procs = pt->nprocs;
}

static void pt_enqueue(struct proc_tracker *pt, pid_t pid)
{
	struct proc_entry *e = *pt_slot(pt, pid);

	if (e != NULL && e->queued)
		return;
	if (pt->qlen == PROC_TRACKER_QUEUE)
		return; /* the pid comes back through unwind_pending on its next sample */
	if (e != NULL)
		e->queued = true;
	pt->queue[(pt->qhead + pt->qlen) % PROC_TRACKER_QUEUE] = pid;
	pt->qlen++;
}

static int pt_on_event(void *ctx, void *data, size_t size)
{
	struct proc_tracker *pt = ctx;
	struct lowprof_proc_event ev;

	if (size < sizeof(ev))
		return 0;
	memcpy(&ev, data, sizeof(ev));
	if (ev.type == LOWPROF_PROC_EXIT) {
		pt->st.exit_events++;
		pt_forget(pt, (pid_t)ev.pid);
	} else if (ev.type == LOWPROF_PROC_EXEC) {
		/* A new image in a process we profile: read its mappings again soon. */
		pt->st.exec_events++;
		pt_forget(pt, (pid_t)ev.pid);
		pt_enqueue(pt, (pid_t)ev.pid);
	}
	/* LOWPROF_PROC_PENDING only woke us: the tick reads unwind_pending next. */
	return 0;
}

/* The cached file for a mapping, parsing it if it is new. NULL: no table. */
static struct unwind_file *pt_file_for(struct proc_tracker *pt, pid_t pid,
				       const struct mapped_file *m)
{
	struct unwind_file_key key;
	struct unwind_file *f;
	struct unwind_table t;
	struct unwinder_segment seg[UNWINDER_MAX_SEGMENTS];
	enum unwinder_result res;
	struct stat st;
	uint64_t evicted;
	uint32_t nseg;
	char err[256];
	int fd;

	/* The very file mapped, whatever the path names now (loader/mapped_file.h).
	 * No second maps read per file: the device and inode name it, the tables
	 * are keyed by them, and only the unwinder reads it. */
	fd = mapped_file_open("/proc", pid, m, false, &st);
	if (fd < 0)
		return NULL;
	memset(&key, 0, sizeof(key));
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	key.size = st.st_size;
	f = unwind_maps_find(&pt->maps, &key);
	if (f != NULL) {
		pt->st.cache_hits++;
		close(fd);
		return f;
	}
	if (!pt->have_client) {
		close(fd);
		return NULL;
	}
	res = unwinder_client_parse(&pt->client, fd,
				    UNWIND_TABLE_HDR_SIZE +
					    (size_t)pt->maps.capacity * sizeof(struct unwind_row),
				    &t, seg, &nseg, err, sizeof(err));
	close(fd);
	if (res == UNWINDER_UNAVAILABLE) {
		pt->st.files_unavailable++;
		log_warn("unwind table of %s: %s", m->path, err);
		return NULL;
	}
	if (res == UNWINDER_REFUSED || res == UNWINDER_STUCK) {
		/* A file the unwinder could not finish in time is refused too: a
		 * crafted one never stalls the loop a second time. */
		pt->st.files_refused++;
		log_warn("unwind table of %s refused: %s (frame pointers for it)", m->path, err);
		return unwind_maps_add_refused(&pt->maps, &key);
	}
	evicted = pt->maps.evictions;
	f = unwind_maps_add(&pt->maps, &key, &t, seg, nseg);
	if (f != NULL && f->state == UNWIND_FILE_READY)
		unwind_audit_rows(m->path, (uint64_t)key.dev, (uint64_t)key.ino, f->first_row, f->nrows,
				  pt->maps.evictions - evicted);
	if (f != NULL && f->state == UNWIND_FILE_NO_SPACE)
		log_warn("unwind table of %s (%zu rows) does not fit in --unwind-table-mb", m->path,
			 t.nrows);
	else if (f != NULL)
		log_debug("unwind table of %s: %zu rows", m->path, t.nrows);
	unwind_table_free(&t);
	pt->st.files_parsed++;
	return f;
}

int proc_tracker_load_pid(struct proc_tracker *pt, pid_t pid)
{
	struct lowprof_unwind_proc *p = NULL;
	struct proc_entry *e, **pp;
	struct mapped_file *m = NULL;
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f = NULL;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (f == NULL) {
		pt->st.procs_gone++;
		pt_forget(pt, pid);
		return -ESRCH;
	}
	p = calloc(1, sizeof(*p));
	m = malloc(sizeof(*m));
	pp = pt_slot(pt, pid);
	e = *pp;
	if (e == NULL) {
		e = calloc(1, sizeof(*e));
		if (e != NULL) {
			e->pid = pid;
			*pp = e;
			pt->nprocs++;
		}
	}
	if (p == NULL || m == NULL || e == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	e->queued = false;
	/* The new references are taken before the old ones go, so that a
	 * re-read keeps its files in the cache. */
	{
		struct unwind_file *old[PT_MAX_FILES_PER_PROC];
		uint32_t nold = e->nfiles, i;

		memcpy(old, e->files, nold * sizeof(old[0]));
		e->nfiles = 0;
		while (getline(&line, &cap, f) > 0 && p->nmappings < LOWPROF_UNWIND_MAX_MAPPINGS) {
			struct lowprof_unwind_mapping *um = &p->m[p->nmappings];
			struct unwind_file *file;
			uint64_t bias = 0;

			/* Executable, file-backed mappings only. */
			if (!mapped_file_parse_line(line, m) || !mapped_file_executable(m))
				continue;
			file = pt_file_for(pt, pid, m);
			um->start = m->start;
			um->end = m->end;
			if (file != NULL) {
				unwind_maps_ref(&pt->maps, file);
				e->files[e->nfiles++] = file;
				if (file->state == UNWIND_FILE_READY &&
				    unwind_maps_bias(file, m->start, m->pgoff, &bias) == 0) {
					um->bias = bias;
					um->first_row = file->first_row;
					um->nrows = file->nrows;
				}
			}
			p->nmappings++;
		}
		for (i = 0; i < nold; i++)
			unwind_maps_unref(&pt->maps, old[i]);
	}
	/* /proc/PID/maps is sorted by address, which is what the walker's search needs. */
	rc = unwind_maps_proc_write(&pt->maps, (uint32_t)pid, p);
	unwind_audit_proc_update(&pt->audit, (uint32_t)pid, -rc);
	if (rc != 0) {
		log_warn("unwind_procs update for pid %d: %s", (int)pid, strerror(-rc));
		goto out;
	}
	e->loaded_ns = pt_now_ns();
	pt->st.procs_loaded++;
out:
	pt->maps.procs = pt->nprocs;
	free(line);
	free(m);
	free(p);
	fclose(f);
	return rc;
}

static size_t pt_read_pending(struct proc_tracker *pt)
{
	__u32 keys[PT_PENDING_PER_TICK], key, next, reason;
	size_t n = 0, i;
	uint64_t now = pt_now_ns();
	void *prev = NULL;

	/* Collect first, delete after: deleting while walking restarts the walk. */
	while (n < PT_PENDING_PER_TICK && bpf_map_get_next_key(pt->maps.pending_fd, prev, &next) == 0) {
		keys[n++] = next;
		key = next;
		prev = &key;
	}
	for (i = 0; i < n; i++) {
		struct proc_entry *e;

		if (bpf_map_lookup_elem(pt->maps.pending_fd, &keys[i], &reason) != 0)
			continue;
		bpf_map_delete_elem(pt->maps.pending_fd, &keys[i]);
		e = *pt_slot(pt, (pid_t)keys[i]);
		if (e == NULL) {
			pt_enqueue(pt, (pid_t)keys[i]);
			continue;
		}
		/* Known already: a new mapping (dlopen), or an entry the exec/exit
		 * program deleted before our write landed. Not more than once a second. */
		if (now - e->loaded_ns >= PT_REFRESH_NS)
			pt_enqueue(pt, (pid_t)keys[i]);
	}
	return n;
}

/* Processes that exited without the ring telling us (it was full). */
static void pt_sweep(struct proc_tracker *pt)
{
	pid_t gone[256];
	size_t n = 0, b, i;
	struct proc_entry *e;

	for (b = 0; b < PROC_TRACKER_BUCKETS && n < 256; b++) {
		for (e = pt->buckets[b]; e != NULL && n < 256; e = e->next) {
			if (kill(e->pid, 0) != 0 && errno == ESRCH)
				gone[n++] = e->pid;
		}
	}
	for (i = 0; i < n; i++)
		pt_forget(pt, gone[i]);
}

void proc_tracker_log_usage(struct proc_tracker *pt)
{
	struct unwind_maps_usage u;

	unwind_maps_usage(&pt->maps, &u);
	log_debug("unwind tables: %.1f MiB rows in %.1f MiB of kernel memory, at most %.1f (%" PRIu64
		 " files, %" PRIu64
		 " refused, %" PRIu64 " over budget), %" PRIu64 " processes (%.1f MiB); "
		 "%" PRIu64 " parsed, %" PRIu64 " cache hits, %.1f ms building",
		 (double)u.rows_used * 16 / 1048576.0, (double)u.allocated_bytes / 1048576.0,
		 (double)u.budget_bytes / 1048576.0,
		 u.files_ready, u.files_refused, u.files_no_space, u.procs,
		 (double)u.procs_bytes / 1048576.0, pt->st.files_parsed, pt->st.cache_hits,
		 (double)pt->st.work_ns / 1e6);
}

void proc_tracker_tick(struct proc_tracker *pt)
{
	uint64_t start = pt_now_ns(), now;
	size_t found;
	pid_t pid;

	if (!pt->active)
		return;
	found = pt->events != NULL && ring_buffer__consume(pt->events) > 0;
	found += pt_read_pending(pt);
	pt->busy = found > 0;
	while (pt->qlen > 0) {
		if (pt_now_ns() - start >= pt->tick_budget_ns) {
			pt->st.deferred_ticks++;
			break;
		}
		pid = pt->queue[pt->qhead];
		pt->qhead = (pt->qhead + 1) % PROC_TRACKER_QUEUE;
		pt->qlen--;
		proc_tracker_load_pid(pt, pid);
	}
	if (pt->qlen > 0)
		pt->busy = true;
	now = pt_now_ns();
	if (now - pt->last_sweep_ns >= PT_SWEEP_NS) {
		pt->last_sweep_ns = now;
		pt_sweep(pt);
	}
	unwind_audit_flush(&pt->audit);
	if (pt->maps.cache_evictions != pt->audited_evictions ||
	    pt->maps.refused_expired != pt->audited_expired) {
		unwind_audit_cache(pt->maps.cache_evictions - pt->audited_evictions,
				   pt->maps.refused_expired - pt->audited_expired,
				   pt->maps.cache_evictions, pt->maps.refused_expired, pt->maps.nfiles);
		pt->audited_evictions = pt->maps.cache_evictions;
		pt->audited_expired = pt->maps.refused_expired;
	}
	pt->st.work_ns += pt_now_ns() - start;
	if (now - pt->last_report_ns >= PT_REPORT_NS &&
	    pt->reported_rows != pt->st.files_parsed + pt->st.procs_loaded) {
		pt->last_report_ns = now;
		pt->reported_rows = pt->st.files_parsed + pt->st.procs_loaded;
		proc_tracker_log_usage(pt);
	}
}

int proc_tracker_wakeup_fd(const struct proc_tracker *pt)
{
	return pt->active && pt->events != NULL ? ring_buffer__epoll_fd(pt->events) : -1;
}

void proc_tracker_configure(struct proc_tracker *pt, unsigned choice)
{
	memset(pt, 0, sizeof(*pt));
	pt->choice = choice;
}

unsigned proc_tracker_unwind_mode(const struct proc_tracker *pt, unsigned wanted)
{
	if (pt->choice == LOADER_UNWIND_FP)
		return LOWPROF_UNWIND_FP;
	if (pt->choice == LOADER_UNWIND_DWARF)
		return LOWPROF_UNWIND_DWARF;
	return wanted;
}

void proc_tracker_start(struct proc_tracker *pt, struct bpf_session *sess)
{
	struct throttle t;
	char err[512];

	if (pt->choice == LOADER_UNWIND_FP)
		return;
	if (proc_tracker_init(pt, sess->skel, err, sizeof(err)) == 0) {
		if (proc_tracker_attach(pt, sess->skel, err, sizeof(err)) == 0) {
			pt->active = true;
			log_debug("DWARF unwinding (--unwind=%s): %.0f MiB for tables",
				 pt->choice == LOADER_UNWIND_DWARF ? "dwarf" : "auto",
				 (double)pt->maps.capacity * 16 / 1048576.0);
			return;
		}
		proc_tracker_fini(pt);
	}
	log_warn("DWARF unwinding unavailable (%s): frame pointers only", err);
	pt->choice = LOADER_UNWIND_FP;
	t = sess->throttle;
	t.unwind_mode = LOWPROF_UNWIND_FP;
	if (bpf_session_apply(sess, &t, err, sizeof(err)) != 0)
		log_warn("switching to frame pointers: %s", err);
}

int proc_tracker_init(struct proc_tracker *pt, struct lowprof_bpf *skel, char *err,
		      size_t errlen)
{
	char cerr[256];

	pt->tick_budget_ns = PT_TICK_BUDGET_NS;
	pt->last_sweep_ns = pt->last_report_ns = pt_now_ns();
	if (unwind_maps_init(&pt->maps, skel, err, errlen) != 0)
		return -1;
	pt->events = ring_buffer__new(bpf_map__fd(skel->maps.unwind_events), pt_on_event, pt, NULL);
	if (pt->events == NULL) {
		snprintf(err, errlen, "ring_buffer__new(unwind_events): %s", strerror(errno));
		unwind_maps_fini(&pt->maps);
		return -1;
	}
	/* Without the parser every mapping stays on frame pointers; sampling goes on. */
	if (unwinder_client_init(&pt->client, cerr, sizeof(cerr)) == 0)
		pt->have_client = true;
	else
		log_warn("no unwind table parser (%s): frame pointers only", cerr);
	return 0;
}

int proc_tracker_attach(struct proc_tracker *pt, struct lowprof_bpf *skel, char *err,
			size_t errlen)
{
	pt->exec_link = bpf_program__attach(skel->progs.lowprof_proc_exec);
	pt->exit_link = bpf_program__attach(skel->progs.lowprof_proc_exit);
	if (pt->exec_link == NULL || pt->exit_link == NULL) {
		snprintf(err, errlen, "attaching sched_process_exec/exit: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void proc_tracker_fini(struct proc_tracker *pt)
{
	size_t b;

	if (!unwind_maps_ready(&pt->maps))
		return; /* never initialised (--unwind=fp) */
	unwind_audit_flush(&pt->audit);
	if (pt->active)
		proc_tracker_log_usage(pt);
	bpf_link__destroy(pt->exec_link);
	bpf_link__destroy(pt->exit_link);
	pt->exec_link = pt->exit_link = NULL;
	for (b = 0; b < PROC_TRACKER_BUCKETS; b++) {
		while (pt->buckets[b] != NULL)
			pt_forget(pt, pt->buckets[b]->pid);
	}
	ring_buffer__free(pt->events);
	pt->events = NULL;
	if (pt->have_client)
		unwinder_client_fini(&pt->client);
	pt->have_client = false;
	pt->active = false;
	unwind_maps_fini(&pt->maps);
}
