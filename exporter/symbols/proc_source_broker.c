/*
 * proc_source_broker: ask the loader (ipc/lowprof_sym.proto). One request at
 * a time, answered in order; an answer whose id is not the one awaited is
 * from a request that timed out (or from the exporter this one replaced, on
 * the same socket) and is discarded, its fd closed.
 */
#include "exporter/symbols/proc_source_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mono_clock.h"
#include "ipc/sym_wire.h"

/* After a timeout, requests fail at once for this long (a loader restart). */
#define BROKER_BACKOFF_NS (1000ULL * NSEC_PER_MSEC)
/* Late answers read past while waiting for one request, at most. */
#define BROKER_MAX_STALE 64

struct proc_source_broker {
	struct proc_source base; /* first */
	int sock;
	int stop_fd; /* -1: none */
	unsigned timeout_ms;
	uint32_t next_id;
	uint64_t unavailable_until_ns;
	bool warned;
};

static struct proc_source_broker *psb(struct proc_source *src)
{
	return (struct proc_source_broker *)src;
}

static void psb_unavailable(struct proc_source_broker *b, const char *why)
{
	b->unavailable_until_ns = mono_ns() + BROKER_BACKOFF_NS;
	if (!b->warned) {
		log_warn("symbol source: %s; unnamed frames until the loader answers again", why);
		b->warned = true;
	}
}

/* Answers nobody waits for any more (timed out, or meant for whoever else
 * holds the socket): out of the way before asking, their fds closed. */
static void psb_discard_pending(struct proc_source_broker *b)
{
	Lowprof__Sym__SymReply *r;
	char err[160];
	int fd, rc, n;

	for (n = 0; n < 4096; n++) {
		rc = sym_wire_recv_reply(b->sock, &r, &fd, err, sizeof(err));
		if (rc == -EAGAIN || rc == 0)
			return;
		b->base.stats.stale++;
		if (rc < 0)
			continue; /* malformed: refused (its fd closed) by sym_wire */
		if (fd >= 0)
			close(fd);
		sym_wire_free_reply(r);
	}
}

/* Requests sent before their answers are awaited, at most (proc_source_open_maps_many). */
#define BROKER_MAX_IN_FLIGHT 64

/*
 * Send n requests, then gather their answers (the loader answers in order,
 * but any order is accepted, by id). For each i, rcs[i] is 0 with reps[i]
 * (and fds[i], -1 when none), or -errno: the loader's error, -EAGAIN (not
 * asked, or no answer in time: asked again later), -EPROTO (a malformed
 * answer). Pipelining a batch costs one wake-up of each side instead of one
 * per request.
 */
static void psb_call_many(struct proc_source_broker *b, Lowprof__Sym__SymRequest *const *reqs,
			  size_t n, Lowprof__Sym__SymReply **reps, int *fds, int *rcs)
{
	uint64_t deadline, now = mono_ns();
	size_t i, sent = 0, pending;
	char err[160];
	int rc, stale = 0;

	for (i = 0; i < n; i++) {
		reps[i] = NULL;
		fds[i] = -1;
		rcs[i] = -EAGAIN;
	}
	if (now < b->unavailable_until_ns) {
		b->base.stats.unavailable += n;
		return;
	}
	psb_discard_pending(b);
	for (i = 0; i < n; i++) {
		if (++b->next_id == 0)
			b->next_id = 1;
		reqs[i]->id = b->next_id;
		rc = sym_wire_send_request(b->sock, reqs[i]);
		if (rc != 0) {
			if (sent == 0) {
				psb_unavailable(b, rc == -EAGAIN ? "the loader is not reading its socket"
								 : strerror(-rc));
				return;
			}
			break; /* the rest stay -EAGAIN: asked again later */
		}
		sent++;
	}
	pending = sent;
	deadline = now + (uint64_t)b->timeout_ms * NSEC_PER_MSEC;
	while (pending > 0) {
		struct pollfd pfd[2] = {{.fd = b->sock, .events = POLLIN}, {.fd = b->stop_fd, .events = POLLIN}};
		Lowprof__Sym__SymReply *r = NULL;
		int rfd = -1;

		now = mono_ns();
		if (now >= deadline || stale > BROKER_MAX_STALE) {
			b->base.stats.timeouts++;
			psb_unavailable(b, "no answer from the loader");
			return;
		}
		rc = poll(pfd, b->stop_fd >= 0 ? 2 : 1, (int)((deadline - now) / NSEC_PER_MSEC) + 1);
		if (rc < 0 && errno != EINTR)
			return;
		if (rc <= 0)
			continue;
		if (pfd[1].revents != 0 && pfd[0].revents == 0) {
			/* Asked to stop: the answers still missing are not waited for. */
			b->base.stats.timeouts++;
			psb_unavailable(b, "stopping before the loader answered");
			return;
		}
		if (pfd[0].revents == 0)
			continue;
		rc = sym_wire_recv_reply(b->sock, &r, &rfd, err, sizeof(err));
		if (rc == -EAGAIN)
			continue;
		if (rc == 0) {
			psb_unavailable(b, "the symbol socket is closed");
			return;
		}
		if (rc < 0) {
			/* A malformed answer is the loader's bug or not the loader: refuse it. */
			log_warn("symbol source: %s", err);
			stale++;
			continue;
		}
		for (i = 0; i < sent; i++) {
			if (reqs[i]->id == r->id && rcs[i] == -EAGAIN && reps[i] == NULL)
				break;
		}
		if (i == sent) {
			b->base.stats.stale++;
			stale++;
			if (rfd >= 0)
				close(rfd);
			sym_wire_free_reply(r);
			continue;
		}
		pending--;
		b->warned = false;
		if (r->error != 0) {
			rcs[i] = -r->error;
			sym_wire_free_reply(r);
			if (rcs[i] == -EAGAIN) /* not ours to retry at once: treat as an error */
				rcs[i] = -EIO;
			continue;
		}
		rcs[i] = 0;
		reps[i] = r;
		fds[i] = rfd;
	}
}

/* One request: 0 with *rep and *fd, or -errno (as psb_call_many). */
static int psb_call(struct proc_source_broker *b, Lowprof__Sym__SymRequest *req,
		    Lowprof__Sym__SymReply **rep, int *fd)
{
	int rc;

	psb_call_many(b, &req, 1, rep, fd, &rc);
	return rc;
}

/* A request whose success must carry an fd. */
static int psb_call_fd(struct proc_source_broker *b, Lowprof__Sym__SymRequest *req)
{
	Lowprof__Sym__SymReply *rep;
	int fd, rc = psb_call(b, req, &rep, &fd);

	if (rc != 0)
		return rc;
	sym_wire_free_reply(rep);
	return fd >= 0 ? fd : -EPROTO;
}

static int psb_open_maps(struct proc_source *src, uint32_t pid)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__MapsRequest m = LOWPROF__SYM__MAPS_REQUEST__INIT;

	m.pid = pid;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS;
	req.maps = &m;
	return psb_call_fd(psb(src), &req);
}

static void psb_open_maps_many(struct proc_source *src, const uint32_t *pids, size_t n, int *fds)
{
	Lowprof__Sym__SymRequest req[BROKER_MAX_IN_FLIGHT], *reqp[BROKER_MAX_IN_FLIGHT];
	Lowprof__Sym__MapsRequest m[BROKER_MAX_IN_FLIGHT];
	Lowprof__Sym__SymReply *rep[BROKER_MAX_IN_FLIGHT];
	int rc[BROKER_MAX_IN_FLIGHT];
	size_t done, k, i;

	for (done = 0; done < n; done += k) {
		k = n - done < BROKER_MAX_IN_FLIGHT ? n - done : BROKER_MAX_IN_FLIGHT;
		for (i = 0; i < k; i++) {
			lowprof__sym__sym_request__init(&req[i]);
			lowprof__sym__maps_request__init(&m[i]);
			m[i].pid = pids[done + i];
			req[i].what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS;
			req[i].maps = &m[i];
			reqp[i] = &req[i];
		}
		psb_call_many(psb(src), reqp, k, rep, &fds[done], rc);
		for (i = 0; i < k; i++) {
			sym_wire_free_reply(rep[i]);
			if (rc[i] == 0 && fds[done + i] < 0)
				rc[i] = -EPROTO;
			if (rc[i] != 0) {
				if (fds[done + i] >= 0)
					close(fds[done + i]);
				fds[done + i] = rc[i];
			}
		}
	}
}

static int psb_open_mapped_file(struct proc_source *src, uint32_t pid, const struct proc_maps_entry *e)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__MappedFileRequest m = LOWPROF__SYM__MAPPED_FILE_REQUEST__INIT;

	m.pid = pid;
	m.start = e->start;
	m.end = e->end;
	m.inode = e->inode;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE;
	req.mapped_file = &m;
	return psb_call_fd(psb(src), &req);
}

static int psb_open_file(struct proc_source *src, const struct lowprof_file_id *id, char *path,
			 size_t pathlen)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__FileRequest q = LOWPROF__SYM__FILE_REQUEST__INIT;
	Lowprof__Sym__SymReply *rep;
	int fd, rc;

	q.dev = id->dev;
	q.ino = id->ino;
	q.gen = id->gen;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_FILE;
	req.file = &q;
	rc = psb_call(psb(src), &req, &rep, &fd);
	if (rc != 0)
		return rc;
	if (pathlen > 0)
		snprintf(path, pathlen, "%s", rep->path);
	sym_wire_free_reply(rep);
	return fd >= 0 ? fd : -EPROTO;
}

static int psb_open_debug_file(struct proc_source *src, const char *build_id)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__DebugFileRequest d = LOWPROF__SYM__DEBUG_FILE_REQUEST__INIT;

	if (!sym_wire_build_id_valid(build_id))
		return -EINVAL;
	d.build_id = (char *)build_id;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_DEBUG_FILE;
	req.debug_file = &d;
	return psb_call_fd(psb(src), &req);
}

static int psb_open_kallsyms(struct proc_source *src)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__KallsymsRequest k = LOWPROF__SYM__KALLSYMS_REQUEST__INIT;

	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_KALLSYMS;
	req.kallsyms = &k;
	return psb_call_fd(psb(src), &req);
}

static int psb_process(struct proc_source *src, uint32_t pid, char *exe, size_t exelen,
		       char **cgroup, size_t *cgroup_len)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__ProcessRequest p = LOWPROF__SYM__PROCESS_REQUEST__INIT;
	Lowprof__Sym__SymReply *rep;
	int fd, rc;

	p.pid = pid;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_PROCESS;
	req.process = &p;
	rc = psb_call(psb(src), &req, &rep, &fd);
	if (rc != 0)
		return rc;
	if (fd >= 0) {
		/* A process answer carries no fd: not ours to keep. */
		close(fd);
		sym_wire_free_reply(rep);
		return -EPROTO;
	}
	if (exelen > 0)
		snprintf(exe, exelen, "%s", rep->exe_path);
	if (rep->cgroup.len > 0) {
		*cgroup = malloc(rep->cgroup.len);
		if (*cgroup != NULL) {
			memcpy(*cgroup, rep->cgroup.data, rep->cgroup.len);
			*cgroup_len = rep->cgroup.len;
		}
	}
	sym_wire_free_reply(rep);
	return 0;
}

static void psb_set_timeout(struct proc_source *src, unsigned timeout_ms)
{
	psb(src)->timeout_ms = timeout_ms ? timeout_ms : 1;
}

static const struct proc_source_ops psb_ops = {
	.open_maps = psb_open_maps,
	.open_maps_many = psb_open_maps_many,
	.open_mapped_file = psb_open_mapped_file,
	.open_file = psb_open_file,
	.open_debug_file = psb_open_debug_file,
	.open_kallsyms = psb_open_kallsyms,
	.process = psb_process,
	.set_timeout = psb_set_timeout,
};

struct proc_source *proc_source_broker_new(int sock, unsigned timeout_ms, int stop_fd)
{
	struct proc_source_broker *b = calloc(1, sizeof(*b));
	int fl;

	if (b == NULL)
		return NULL;
	b->base.ops = &psb_ops;
	b->sock = sock;
	b->stop_fd = stop_fd;
	b->timeout_ms = timeout_ms ? timeout_ms : 1000;
	/* Never block in send: a loader that is not reading must not stop us. */
	fl = fcntl(sock, F_GETFL);
	if (fl >= 0)
		fcntl(sock, F_SETFL, fl | O_NONBLOCK);
	return &b->base;
}
