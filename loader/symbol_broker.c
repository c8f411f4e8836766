/* symbol_broker: what the unprivileged exporter may ask the loader to open (see the header). */
#define _GNU_SOURCE /* memrchr */
#include "loader/symbol_broker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "ipc/sym_wire.h"
#include "loader/file_registry.h"
#include "loader/mapped_file.h"

static const struct monitor_protocol symbol_protocol;

static void symbol_broker_send(struct symbol_broker *b, const Lowprof__Sym__SymReply *rep, int fd)
{
	int rc = sym_wire_send_reply(b->mon.fd, rep, fd);

	/* Sent or not, the exporter holds its own reference now (or none). */
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		/* EAGAIN: the exporter is not reading. It times out; we never wait. */
		if (b->st.replies_dropped++ == 0)
			log_warn("symbol broker: reply %u dropped: %s (counted from now on)", rep->id,
				 strerror(-rc));
	}
}

static void symbol_broker_reply_error(struct symbol_broker *b, uint32_t id, int errnum, const char *why)
{
	Lowprof__Sym__SymReply rep = LOWPROF__SYM__SYM_REPLY__INIT;

	rep.id = id;
	rep.error = errnum;
	rep.reason = (char *)why;
	symbol_broker_send(b, &rep, -1);
}

static int symbol_broker_answer(void *server, const void *msg, int errnum, const char *why)
{
	symbol_broker_reply_error(server, ((const Lowprof__Sym__SymRequest *)msg)->id, errnum, why);
	return 0;
}

/* A message that was no request: nothing to answer, audited within the budget. */
static void symbol_broker_malformed(struct symbol_broker *b, const char *why, uint64_t now_ns)
{
	b->st.malformed++;
	monitor_audit_refusal(&b->mon, &symbol_protocol, NULL, "malformed", EBADMSG, why, now_ns);
}

/* The outcome of an open: fd >= 0 is served, -errno is answered as an error
 * (a pid that exited, a missing debug file: the exporter's races, not refusals). */
static void symbol_broker_answer_fd(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
				    int fd_or_err, const char *what)
{
	Lowprof__Sym__SymReply rep = LOWPROF__SYM__SYM_REPLY__INIT;
	char why[256];

	if (fd_or_err >= 0) {
		b->st.served++;
		rep.id = req->id;
		symbol_broker_send(b, &rep, fd_or_err);
		return;
	}
	b->st.errors++;
	snprintf(why, sizeof(why), "%s: %s", what, strerror(-fd_or_err));
	symbol_broker_reply_error(b, req->id, -fd_or_err, why);
}

static int symbol_broker_open(const char *path, int flags)
{
	int fd = open(path, flags);

	return fd >= 0 ? fd : -errno;
}

/* Only the processes sampled lately: else refused (answered and audited). */
static bool symbol_broker_sampled(struct symbol_broker *b, const Lowprof__Sym__SymRequest *req,
				  uint32_t pid, uint64_t now_ns)
{
	char why[96];

	if (b->cfg.sampled == NULL || seen_pids_has(b->cfg.sampled, pid))
		return true;
	snprintf(why, sizeof(why), "pid %u has not been sampled", pid);
	monitor_refuse(&b->mon, &symbol_protocol, b, req, EACCES, why, now_ns);
	return false;
}

static int symbol_broker_serve_maps(void *server, const void *msg, uint64_t now_ns)
{
	struct symbol_broker *b = server;
	const Lowprof__Sym__SymRequest *req = msg;
	char path[SYMBOL_BROKER_ROOT_MAX + 32];

	if (!symbol_broker_sampled(b, req, req->maps->pid, now_ns))
		return 0;
	/* The kernel checks ptrace access at open time: the fd reads in the exporter. */
	snprintf(path, sizeof(path), "%s/%u/maps", b->proc_root, req->maps->pid);
	symbol_broker_answer_fd(b, req, symbol_broker_open(path, O_RDONLY | O_CLOEXEC), "maps");
	return 0;
}

/*
 * Find the line of PID's maps at exactly [start, end). Returns 1 (found, in
 * *m), 0 (not there), or -errno (the maps unreadable; -ESRCH when they are
 * empty: the process exited while being read, or is a kernel thread).
 */
static int symbol_broker_find_mapping(const struct symbol_broker *b, uint32_t pid, uint64_t start,
				      uint64_t end, struct mapped_file *m)
{
	char path[SYMBOL_BROKER_ROOT_MAX + 32], *line = NULL;
	size_t cap = 0, lines = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/maps", b->proc_root, pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		lines++;
		if (mapped_file_parse_line(line, m) && m->start == start && m->end == end) {
			found = 1;
			break;
		}
	}
	free(line);
	fclose(f);
	if (!found && lines == 0)
		return -ESRCH;
	return found;
}

/* The file mapped executable at [start, end): the loader reads the maps itself,
 * so that the exporter can name only what the process really maps. */
static int symbol_broker_serve_mapped_file(void *server, const void *msg, uint64_t now_ns)
{
	struct symbol_broker *b = server;
	const Lowprof__Sym__SymRequest *req = msg;
	const Lowprof__Sym__MappedFileRequest *q = req->mapped_file;
	struct mapped_file m;
	struct stat st;
	char why[256];
	int rc;

	if (!symbol_broker_sampled(b, req, q->pid, now_ns))
		return 0;
	rc = symbol_broker_find_mapping(b, q->pid, q->start, q->end, &m);
	if (rc < 0) {
		symbol_broker_answer_fd(b, req, rc, "maps");
		return 0;
	}
	if (rc == 0)
		snprintf(why, sizeof(why), "pid %u has no mapping at exactly [0x%llx, 0x%llx)", q->pid,
			 (unsigned long long)q->start, (unsigned long long)q->end);
	else if (m.perms[2] != 'x')
		snprintf(why, sizeof(why), "the mapping is not executable (%s)", m.perms);
	else if (m.ino == 0 || m.path[0] != '/')
		snprintf(why, sizeof(why), "the mapping is not of a file");
	else if (m.ino != q->inode)
		snprintf(why, sizeof(why), "inode %llu is not the mapping's (%llu)",
			 (unsigned long long)q->inode, (unsigned long long)m.ino);
	else
		why[0] = '\0';
	if (why[0] != '\0') {
		return monitor_refuse(&b->mon, &symbol_protocol, b, req, EACCES, why, now_ns);
	}
	symbol_broker_answer_fd(b, req, mapped_file_open(b->proc_root, (pid_t)q->pid, &m, true, &st),
				"opening the mapped file");
	return 0;
}

static int symbol_broker_serve_debug_file(void *server, const void *msg, uint64_t now_ns)
{
	struct symbol_broker *b = server;
	const Lowprof__Sym__SymRequest *req = msg;
	/* Checked by sym_wire_check_request: lowercase hex only, so no '/' or "..". */
	const char *id = req->debug_file->build_id;
	char path[SYMBOL_BROKER_ROOT_MAX + SYM_WIRE_MAX_BUILD_ID + 32];
	struct stat st;
	int fd;

	(void)now_ns;
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", b->debug_root, id, id + 2);
	fd = symbol_broker_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -EINVAL;
	}
	symbol_broker_answer_fd(b, req, fd, "debug file");
	return 0;
}

static int symbol_broker_serve_kallsyms(void *server, const void *msg, uint64_t now_ns)
{
	struct symbol_broker *b = server;
	const Lowprof__Sym__SymRequest *req = msg;
	char path[SYMBOL_BROKER_ROOT_MAX + 16];

	(void)now_ns;
	/* kallsyms decides at open time, by the opener's CAP_SYSLOG, whether its
	 * addresses are real: the loader opens, the exporter reads. */
	snprintf(path, sizeof(path), "%s/kallsyms", b->proc_root);
	symbol_broker_answer_fd(b, req, symbol_broker_open(path, O_RDONLY | O_CLOEXEC), "kallsyms");
	return 0;
}

/*
 * A file by the identity BPF reported: only one the loader opened itself and
 * registered (it checked device and inode when it opened it), answered with a
 * dup of that fd and the path it was found by. A file not (or no longer)
 * registered is ENOENT: eviction races, not a refusal.
 */
static int symbol_broker_serve_file(void *server, const void *msg, uint64_t now_ns)
{
	struct symbol_broker *b = server;
	const Lowprof__Sym__SymRequest *req = msg;
	const Lowprof__Sym__FileRequest *q = req->file;
	Lowprof__Sym__SymReply rep = LOWPROF__SYM__SYM_REPLY__INIT;
	struct lowprof_file_id id = {.ino = q->ino, .dev = q->dev, .gen = q->gen};
	char path[SYM_WIRE_MAX_EXE_PATH + 1];
	int fd;

	(void)now_ns;
	fd = b->cfg.files != NULL ? file_registry_open(b->cfg.files, &id, path, sizeof(path))
				  : -ENOENT;
	if (fd < 0) {
		symbol_broker_answer_fd(b, req, fd, "file");
		return 0;
	}
	b->st.served++;
	rep.id = req->id;
	rep.path = path;
	symbol_broker_send(b, &rep, fd);
	return 0;
}

/* Up to SYM_WIRE_MAX_CGROUP bytes of PID's cgroup file, longer cut at its
 * last whole line. Returns the length or -errno. */
static ssize_t symbol_broker_read_cgroup(const struct symbol_broker *b, uint32_t pid, uint8_t *buf)
{
	char path[SYMBOL_BROKER_ROOT_MAX + 32];
	size_t len = 0;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%u/cgroup", b->proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* One byte past the bound tells a file that does not fit. */
	while (len < SYM_WIRE_MAX_CGROUP + 1) {
		n = read(fd, buf + len, SYM_WIRE_MAX_CGROUP + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len > SYM_WIRE_MAX_CGROUP) {
		uint8_t *nl = memrchr(buf, '\n', SYM_WIRE_MAX_CGROUP);

		len = nl != NULL ? (size_t)(nl - buf) + 1 : 0;
	}
	return (ssize_t)len;
}

static int symbol_broker_serve_process(void *server, const void *msg, uint64_t now_ns)
{
	struct symbol_broker *b = server;
	const Lowprof__Sym__SymRequest *req = msg;
	Lowprof__Sym__SymReply rep = LOWPROF__SYM__SYM_REPLY__INIT;
	char path[SYMBOL_BROKER_ROOT_MAX + 32], exe[SYM_WIRE_MAX_EXE_PATH + 1], why[128];
	uint8_t cgroup[SYM_WIRE_MAX_CGROUP + 1];
	uint32_t pid = req->process->pid;
	ssize_t n, cg;
	int exe_err = 0;

	if (!symbol_broker_sampled(b, req, pid, now_ns))
		return 0;
	snprintf(path, sizeof(path), "%s/%u/exe", b->proc_root, pid);
	n = readlink(path, exe, sizeof(exe));
	if (n < 0)
		exe_err = errno;
	/* A path that fills the buffer may be cut: unknown rather than wrong. */
	if (n < 0 || (size_t)n > SYM_WIRE_MAX_EXE_PATH)
		n = 0;
	exe[n] = '\0';
	cg = symbol_broker_read_cgroup(b, pid, cgroup);
	if (cg < 0 && exe_err != 0) {
		/* Nothing known. Both ENOENT: the pid does not exist. */
		int e = cg == -ENOENT && exe_err == ENOENT ? ESRCH : (int)-cg;

		b->st.errors++;
		snprintf(why, sizeof(why), "process %u: %s", pid, strerror(e));
		symbol_broker_reply_error(b, req->id, e, why);
		return 0;
	}
	/* A kernel thread has no exe; a cgroup unreadable leaves it empty. */
	b->st.served++;
	rep.id = req->id;
	rep.exe_path = exe;
	rep.cgroup.data = cgroup;
	rep.cgroup.len = cg > 0 ? (size_t)cg : 0;
	symbol_broker_send(b, &rep, -1);
	return 0;
}

static int symbol_broker_kind_of(const void *msg)
{
	return (int)((const Lowprof__Sym__SymRequest *)msg)->what_case;
}

static const char *symbol_broker_kind_name(int kind)
{
	return sym_wire_request_name((Lowprof__Sym__SymRequest__WhatCase)kind);
}

/* Every field of a request (also refuses a kind this build does not know,
 * unpacked as "not set"), before its kind is looked up. */
static int symbol_broker_check(void *server, const void *msg, char *why, size_t whylen)
{
	(void)server;
	return sym_wire_check_request(msg, why, whylen) != 0 ? -EINVAL : 0;
}

/* The fields of a refused request on its audit record. "pid" is the
 * requester's: the pid a request names is target_pid. */
static void symbol_broker_audit_pid(struct audit_rec *r, uint32_t pid)
{
	if (pid != 0)
		audit_rec_u64(r, "target_pid", pid);
}

static void symbol_broker_audit_maps(struct audit_rec *r, const void *msg)
{
	symbol_broker_audit_pid(r, ((const Lowprof__Sym__SymRequest *)msg)->maps->pid);
}

static void symbol_broker_audit_mapped_file(struct audit_rec *r, const void *msg)
{
	const Lowprof__Sym__MappedFileRequest *q = ((const Lowprof__Sym__SymRequest *)msg)->mapped_file;

	symbol_broker_audit_pid(r, q->pid);
	audit_rec_u64(r, "start", q->start);
	audit_rec_u64(r, "end", q->end);
	audit_rec_u64(r, "inode", q->inode);
}

static void symbol_broker_audit_debug_file(struct audit_rec *r, const void *msg)
{
	audit_rec_str(r, "build_id", ((const Lowprof__Sym__SymRequest *)msg)->debug_file->build_id);
}

static void symbol_broker_audit_process(struct audit_rec *r, const void *msg)
{
	symbol_broker_audit_pid(r, ((const Lowprof__Sym__SymRequest *)msg)->process->pid);
}

static void symbol_broker_audit_file(struct audit_rec *r, const void *msg)
{
	const Lowprof__Sym__FileRequest *q = ((const Lowprof__Sym__SymRequest *)msg)->file;

	audit_rec_u64(r, "dev", q->dev);
	audit_rec_u64(r, "inode", q->ino);
	audit_rec_u64(r, "gen", q->gen);
}

/* The whole of what the exporter may ask (in any state: the broker has none). */
static const struct monitor_request symbol_broker_requests[] = {
	{LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS, 0, NULL, symbol_broker_serve_maps, symbol_broker_audit_maps},
	{LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE, 0, NULL, symbol_broker_serve_mapped_file,
	 symbol_broker_audit_mapped_file},
	{LOWPROF__SYM__SYM_REQUEST__WHAT_DEBUG_FILE, 0, NULL, symbol_broker_serve_debug_file,
	 symbol_broker_audit_debug_file},
	{LOWPROF__SYM__SYM_REQUEST__WHAT_KALLSYMS, 0, NULL, symbol_broker_serve_kallsyms, NULL},
	{LOWPROF__SYM__SYM_REQUEST__WHAT_PROCESS, 0, NULL, symbol_broker_serve_process,
	 symbol_broker_audit_process},
	{LOWPROF__SYM__SYM_REQUEST__WHAT_FILE, 0, NULL, symbol_broker_serve_file,
	 symbol_broker_audit_file},
};

static const struct monitor_protocol symbol_protocol = {
	.requests = symbol_broker_requests,
	.nrequests = sizeof(symbol_broker_requests) / sizeof(symbol_broker_requests[0]),
	.kind_of = symbol_broker_kind_of,
	.kind_name = symbol_broker_kind_name,
	.check = symbol_broker_check,
	.answer = symbol_broker_answer,
};

/* A message as a request with an id; NULL (why says what) for one that is not. */
static Lowprof__Sym__SymRequest *symbol_broker_parse(const uint8_t *data, size_t len, char *why,
						     size_t whylen)
{
	Lowprof__Sym__SymRequest *req;

	return sym_wire_decode_request(data, len, &req, why, whylen) == 0 ? req : NULL;
}

int symbol_broker_init(struct symbol_broker *b, int sock, const struct symbol_broker_config *cfg,
		       uint64_t now_ns)
{
	struct monitor_config mc = {
		.component = "exporter",
		.socket_name = "symbol",
		.check_peer = cfg->check_peer,
		.expected_uid = cfg->exporter_uid,
		.expected_ppid = cfg->exporter_ppid,
		.expected_exe = cfg->exporter_exe,
		.rate_per_s = cfg->rate_per_s,
		.rate_burst = cfg->burst > 0 ? cfg->burst : SYMBOL_BROKER_RATE_BURST,
		.audit_per_s = SYMBOL_BROKER_AUDIT_PER_S,
		.audit_burst = SYMBOL_BROKER_AUDIT_BURST,
	};

	memset(b, 0, sizeof(*b));
	monitor_init(&b->mon, -1, &mc, now_ns);
	if (sock < 0 || strlen(cfg->proc_root) >= sizeof(b->proc_root) ||
	    strlen(cfg->debug_root) >= sizeof(b->debug_root))
		return -EINVAL;
	snprintf(b->proc_root, sizeof(b->proc_root), "%s", cfg->proc_root);
	snprintf(b->debug_root, sizeof(b->debug_root), "%s", cfg->debug_root);
	b->cfg = *cfg;
	b->cfg.proc_root = b->proc_root;
	b->cfg.debug_root = b->debug_root;
	b->cfg.burst = mc.rate_burst;
	monitor_init(&b->mon, sock, &mc, now_ns);
	return 0;
}

int symbol_broker_handle(struct symbol_broker *b, uint64_t now_ns)
{
	uint8_t data[SYM_WIRE_MAX_REQUEST];
	Lowprof__Sym__SymRequest *req;
	enum monitor_recv rc;
	char why[200];
	size_t len;
	int n;

	if (b->mon.fd < 0)
		return -EPIPE;
	for (n = 0; n < SYMBOL_BROKER_MAX_PER_WAKE; n++) {
		rc = monitor_recv(&b->mon, data, sizeof(data), &len, why, sizeof(why));
		if (rc == MONITOR_RECV_NONE)
			return 0;
		if (rc == MONITOR_RECV_CLOSED) {
			log_warn("symbol broker: the exporter's end of the symbol socket is closed");
			close(b->mon.fd);
			b->mon.fd = -1;
			return -EPIPE;
		}
		if (rc == MONITOR_RECV_ERROR) {
			log_warn("symbol broker: %s", why);
			return 0;
		}
		req = rc == MONITOR_RECV_MESSAGE ? symbol_broker_parse(data, len, why, sizeof(why)) : NULL;
		/* Every message, request or garbage, takes a token: the bucket bounds
		 * the work (and the audit lines) a flood can cause. The socket is
		 * shared across exporter restarts: a misbehaving peer is refused,
		 * never cut off. */
		if (monitor_admit(&b->mon, &symbol_protocol, b, req, now_ns) != 1) {
			/* refused for the rate, answered */
		} else if (monitor_check_sender(&b->mon, why, sizeof(why)) != 0) {
			if (req != NULL)
				monitor_refuse(&b->mon, &symbol_protocol, b, req, EPERM, why, now_ns);
			else
				symbol_broker_malformed(b, why, now_ns);
		} else if (req == NULL) {
			symbol_broker_malformed(b, why, now_ns);
		} else {
			monitor_dispatch(&b->mon, &symbol_protocol, b, req, 0, now_ns);
		}
		sym_wire_free_request(req);
	}
	return 0;
}

void symbol_broker_tick(struct symbol_broker *b, uint64_t now_ns)
{
	monitor_tick(&b->mon, now_ns);
}

void symbol_broker_close(struct symbol_broker *b)
{
	const struct symbol_broker_stats *s = &b->st;
	const struct monitor_stats *m = &b->mon.st;

	monitor_close(&b->mon);
	if (s->served + s->errors + m->refused + s->malformed > 0)
		log_debug("symbol broker: %llu served, %llu errors, %llu refused (%llu rate-limited), "
			 "%llu malformed, %llu replies dropped",
			 (unsigned long long)s->served, (unsigned long long)s->errors,
			 (unsigned long long)m->refused, (unsigned long long)m->rate_limited,
			 (unsigned long long)s->malformed, (unsigned long long)s->replies_dropped);
}
