/*
 * The loader's symbol broker (loader/symbol_broker.c) over a real
 * SOCK_SEQPACKET socketpair: the broker runs in the test process, the test is
 * the exporter (ipc/sym_wire.h's client calls). Each request kind against a
 * forked, sleeping child; the refusals that keep the exporter from naming
 * arbitrary files; rogue messages, a flood, a wrong uid. Every refusal must be
 * one valid JSON audit line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_audit_capture.h"
#include "test_fd_count.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/fd_pass.h"
#include "ipc/sym_wire.h"
#include "loader/audit_log.h"
#include "loader/file_registry.h"
#include "loader/symbol_broker.h"

#define SEC 1000000000ULL
#define T0 (10 * SEC)
#define NO_SUCH_PID 4194300u

struct fx {
	struct symbol_broker b;
	int peer;  /* the exporter's end */
	int audit; /* memfd the audit log goes to */
};

static pid_t child;            /* sleeps until the end of the run */
static char child_exe[4096];   /* readlink(/proc/CHILD/exe) */
static uint32_t next_id = 1;

static void start_cfg(struct fx *f, const struct symbol_broker_config *cfg)
{
	struct timeval tv = {2, 0}; /* a missing reply fails the test rather than hanging it */
	int sv[2];

	memset(f, 0, sizeof(*f));
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	f->peer = sv[1];
	f->audit = memfd_create("audit", MFD_CLOEXEC);
	assert_true(f->audit >= 0);
	audit_log_open(dup(f->audit));
	assert_int_equal(symbol_broker_init(&f->b, sv[0], cfg, T0), 0);
}

static void start(struct fx *f)
{
	struct symbol_broker_config cfg = {"/proc", "/usr/lib/debug", false, 0, 0, 0, 0, NULL, NULL, NULL};

	start_cfg(f, &cfg);
}

/* Every line one JSON object of a refusal, attributed to the exporter. */
static void check_audit_lines(struct fx *f)
{
	char *text = test_audit_text(f->audit), *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);

		assert_true(n > 2 && line[0] == '{' && line[n - 1] == '}');
		assert_non_null(strstr(line, "\"event\":\"request_refused\""));
		assert_non_null(strstr(line, "\"component\":\"exporter\""));
	}
	free(text);
}

static void stop(struct fx *f)
{
	check_audit_lines(f);
	symbol_broker_close(&f->b);
	audit_log_close();
	close(f->peer);
	close(f->audit);
}

static void send_req(struct fx *f, Lowprof__Sym__SymRequest *req)
{
	assert_int_equal(sym_wire_send_request(f->peer, req), 0);
}

static Lowprof__Sym__SymReply *recv_reply(struct fx *f, uint32_t id, int *fd)
{
	Lowprof__Sym__SymReply *rep = NULL;
	char err[200];

	assert_int_equal(sym_wire_recv_reply(f->peer, &rep, fd, err, sizeof(err)), 1);
	assert_int_equal(rep->id, id);
	return rep;
}

/* One request, served now, and its reply (the caller frees it, closes *fd). */
static Lowprof__Sym__SymReply *ask(struct fx *f, Lowprof__Sym__SymRequest *req, int *fd)
{
	req->id = next_id++;
	send_req(f, req);
	assert_int_equal(symbol_broker_handle(&f->b, T0), 0);
	return recv_reply(f, req->id, fd);
}

static Lowprof__Sym__SymReply *ask_maps(struct fx *f, uint32_t pid, int *fd)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__MapsRequest m = LOWPROF__SYM__MAPS_REQUEST__INIT;

	m.pid = pid;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS;
	req.maps = &m;
	return ask(f, &req, fd);
}

static Lowprof__Sym__SymReply *ask_mapped(struct fx *f, uint32_t pid, uint64_t start, uint64_t end,
					  uint64_t ino, int *fd)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__MappedFileRequest m = LOWPROF__SYM__MAPPED_FILE_REQUEST__INIT;

	m.pid = pid;
	m.start = start;
	m.end = end;
	m.inode = ino;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE;
	req.mapped_file = &m;
	return ask(f, &req, fd);
}

static Lowprof__Sym__SymReply *ask_debug(struct fx *f, const char *id, int *fd)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__DebugFileRequest d = LOWPROF__SYM__DEBUG_FILE_REQUEST__INIT;

	d.build_id = (char *)id;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_DEBUG_FILE;
	req.debug_file = &d;
	return ask(f, &req, fd);
}

static void kallsyms_req(Lowprof__Sym__SymRequest *req, Lowprof__Sym__KallsymsRequest *k, uint32_t id)
{
	lowprof__sym__sym_request__init(req);
	lowprof__sym__kallsyms_request__init(k);
	req->id = id;
	req->what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_KALLSYMS;
	req->kallsyms = k;
}

static Lowprof__Sym__SymReply *ask_process(struct fx *f, uint32_t pid, int *fd)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__ProcessRequest p = LOWPROF__SYM__PROCESS_REQUEST__INIT;

	p.pid = pid;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_PROCESS;
	req.process = &p;
	return ask(f, &req, fd);
}

/* A refusal or error reply: no fd, this errno. (fd by address: it is read
 * after the call that sets it, whatever the order arguments are evaluated in.) */
static void expect_error(Lowprof__Sym__SymReply *rep, const int *fd, int errnum)
{
	assert_int_equal(*fd, -1);
	assert_int_equal(rep->error, errnum);
	assert_true(rep->reason[0] != '\0');
	sym_wire_free_reply(rep);
}

static char *read_all(int fd)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap + 1);
	ssize_t n;

	assert_non_null(buf);
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	return buf;
}

/* The child's mappings of its executable: one executable, one not. */
struct exe_maps {
	uint64_t x_start, x_end, r_start, r_end, ino;
};

static void child_exe_maps(struct exe_maps *em)
{
	char path[64], *line = NULL, perms[8], name[4096];
	uint64_t start, end, off, ino;
	unsigned maj, min;
	size_t cap = 0;
	FILE *fp;

	memset(em, 0, sizeof(*em));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
	fp = fopen(path, "re");
	assert_non_null(fp);
	while (getline(&line, &cap, fp) > 0) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %4095s", &start, &end,
			   perms, &off, &maj, &min, &ino, name) != 8 || strcmp(name, child_exe) != 0)
			continue;
		em->ino = ino;
		if (perms[2] == 'x' && em->x_end == 0) {
			em->x_start = start;
			em->x_end = end;
		} else if (perms[2] != 'x' && em->r_end == 0) {
			em->r_start = start;
			em->r_end = end;
		}
	}
	free(line);
	fclose(fp);
	assert_true(em->x_end != 0 && em->r_end != 0);
}

static void test_maps(void **state)
{
	Lowprof__Sym__SymReply *rep;
	struct fx f;
	char *text;
	int fd;

	(void)state;
	start(&f);
	rep = ask_maps(&f, (uint32_t)child, &fd);
	assert_int_equal(rep->error, 0);
	assert_true(fd >= 0);
	text = read_all(fd);
	assert_non_null(strstr(text, child_exe));
	free(text);
	close(fd);
	sym_wire_free_reply(rep);

	rep = ask_maps(&f, NO_SUCH_PID, &fd);
	assert_true(rep->error == ENOENT || rep->error == ESRCH);
	expect_error(rep, &fd, rep->error);
	/* A pid gone is the exporter's race, not a refusal. */
	assert_int_equal(test_audit_count(f.audit, "request_refused"), 0);
	assert_int_equal(f.b.st.served, 1);
	assert_int_equal(f.b.st.errors, 1);
	stop(&f);
}

static void test_mapped_file(void **state)
{
	Lowprof__Sym__SymReply *rep;
	struct exe_maps em;
	struct stat st, want;
	struct fx f;
	int fd;

	(void)state;
	child_exe_maps(&em);
	assert_int_equal(stat(child_exe, &want), 0);
	start(&f);
	rep = ask_mapped(&f, (uint32_t)child, em.x_start, em.x_end, em.ino, &fd);
	assert_int_equal(rep->error, 0);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_ino == want.st_ino && st.st_dev == want.st_dev);
	/* Read-only: the exporter cannot change the binary through it. */
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);
	sym_wire_free_reply(rep);

	/* Each of these names something the child does not map executable as asked. */
	expect_error(ask_mapped(&f, (uint32_t)child, em.x_start, em.x_end, em.ino + 1, &fd), &fd, EACCES);
	expect_error(ask_mapped(&f, (uint32_t)child, em.r_start, em.r_end, em.ino, &fd), &fd, EACCES);
	expect_error(ask_mapped(&f, (uint32_t)child, em.x_start, em.x_end + 0x1000, em.ino, &fd), &fd,
		     EACCES);
	assert_int_equal(test_audit_count(f.audit, "\"request\":\"mapped_file\""), 3);
	assert_int_equal(test_audit_count(f.audit, "\"errno\":13"), 3);
	assert_int_equal(test_audit_count(f.audit, "is not the mapping's"), 1);
	assert_int_equal(test_audit_count(f.audit, "not executable"), 1);
	assert_int_equal(test_audit_count(f.audit, "no mapping at exactly"), 1);
	/* Invalid on its face (start >= end): EINVAL before any file is read. */
	expect_error(ask_mapped(&f, (uint32_t)child, em.x_end, em.x_start, em.ino, &fd), &fd, EINVAL);
	/* A pid that does not exist is an error, not a refusal. */
	rep = ask_mapped(&f, NO_SUCH_PID, 0x1000, 0x2000, 1, &fd);
	expect_error(rep, &fd, ENOENT);
	assert_int_equal(test_audit_count(f.audit, "request_refused"), 4);
	stop(&f);
}

static Lowprof__Sym__SymReply *ask_file(struct fx *f, const struct lowprof_file_id *id, int *fd)
{
	Lowprof__Sym__SymRequest req = LOWPROF__SYM__SYM_REQUEST__INIT;
	Lowprof__Sym__FileRequest q = LOWPROF__SYM__FILE_REQUEST__INIT;

	q.dev = id->dev;
	q.ino = id->ino;
	q.gen = id->gen;
	req.what_case = LOWPROF__SYM__SYM_REQUEST__WHAT_FILE;
	req.file = &q;
	return ask(f, &req, fd);
}

/*
 * A file by identity: served from the registry only (a dup of the loader's fd
 * and the path it was found by); a file it does not hold is ENOENT, whatever
 * exists on disk; an identity invalid on its face is refused on the record.
 */
static void test_file(void **state)
{
	struct symbol_broker_config cfg = {"/proc", "/usr/lib/debug", false, 0, 0, 0, 0, NULL, NULL, NULL};
	struct file_registry *reg = file_registry_new(4);
	struct lowprof_file_id id, other;
	Lowprof__Sym__SymReply *rep;
	struct stat st, want;
	struct fx f;
	int fd, before;

	(void)state;
	assert_non_null(reg);
	assert_int_equal(stat(child_exe, &want), 0);
	id.ino = want.st_ino;
	id.dev = file_registry_kdev(want.st_dev);
	id.gen = 0;
	/* Without a registry every file is unknown. */
	start(&f);
	expect_error(ask_file(&f, &id, &fd), &fd, ENOENT);
	stop(&f);

	cfg.files = reg;
	start_cfg(&f, &cfg);
	before = test_fd_count();
	/* Not registered yet: the exporter cannot have it, though it is on disk. */
	expect_error(ask_file(&f, &id, &fd), &fd, ENOENT);
	fd = open(child_exe, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(file_registry_add(reg, &id, fd, "/the/path (deleted)", NULL), 0);
	rep = ask_file(&f, &id, &fd);
	assert_int_equal(rep->error, 0);
	assert_string_equal(rep->path, "/the/path (deleted)");
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_ino == want.st_ino && st.st_dev == want.st_dev);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);
	sym_wire_free_reply(rep);
	/* Another generation of the same inode is another file. */
	other = id;
	other.gen = 5;
	expect_error(ask_file(&f, &other, &fd), &fd, ENOENT);
	/* Forgotten: gone for the exporter too. */
	file_registry_forget(reg, &id);
	expect_error(ask_file(&f, &id, &fd), &fd, ENOENT);
	assert_int_equal(test_audit_count(f.audit, "request_refused"), 0);
	/* Inode 0 names nothing: refused before the registry is asked, and audited. */
	other.ino = 0;
	expect_error(ask_file(&f, &other, &fd), &fd, EINVAL);
	assert_int_equal(test_audit_count(f.audit, "\"request\":\"file\""), 1);
	assert_int_equal(test_audit_count(f.audit, "request_refused"), 1);
	assert_int_equal(test_fd_count(), before);
	stop(&f);
	file_registry_free(reg);
}

static void test_debug_file(void **state)
{
	char root[] = "/tmp/lowprof-debug-XXXXXX", path[256];
	struct symbol_broker_config cfg = {"/proc", NULL, false, 0, 0, 0, 0, NULL, NULL, NULL};
	Lowprof__Sym__SymReply *rep;
	struct stat st, want;
	struct fx f;
	int fd, wfd;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/.build-id", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/.build-id/ab", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/.build-id/ab/cdef.debug", root);
	wfd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(wfd >= 0);
	assert_int_equal(write(wfd, "ELF?", 4), 4);
	close(wfd);
	assert_int_equal(stat(path, &want), 0);
	cfg.debug_root = root;
	start_cfg(&f, &cfg);

	rep = ask_debug(&f, "abcdef", &fd);
	assert_int_equal(rep->error, 0);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_ino == want.st_ino);
	close(fd);
	sym_wire_free_reply(rep);

	expect_error(ask_debug(&f, "../x", &fd), &fd, EINVAL);
	expect_error(ask_debug(&f, "ABCD", &fd), &fd, EINVAL);
	expect_error(ask_debug(&f, "abc", &fd), &fd, EINVAL);
	assert_int_equal(test_audit_count(f.audit, "\"request\":\"debug_file\""), 3);
	assert_int_equal(test_audit_count(f.audit, "\"build_id\":\"../x\""), 1);
	/* Most binaries have no debug file: an error, not a refusal. */
	expect_error(ask_debug(&f, "abcd00", &fd), &fd, ENOENT);
	/* A directory where a file should be is no debug file. */
	snprintf(path, sizeof(path), "%s/.build-id/ab/0000.debug", root);
	assert_int_equal(mkdir(path, 0755), 0);
	expect_error(ask_debug(&f, "ab0000", &fd), &fd, EINVAL);
	assert_int_equal(test_audit_count(f.audit, "request_refused"), 3);
	stop(&f);

	rmdir(path);
	snprintf(path, sizeof(path), "%s/.build-id/ab/cdef.debug", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/.build-id/ab", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/.build-id", root);
	rmdir(path);
	rmdir(root);
}

static void test_kallsyms(void **state)
{
	Lowprof__Sym__SymRequest req;
	Lowprof__Sym__KallsymsRequest k;
	Lowprof__Sym__SymReply *rep;
	unsigned long long addr;
	char type, name[256], line[512];
	struct fx f;
	FILE *fp;
	int fd;

	(void)state;
	start(&f);
	kallsyms_req(&req, &k, 0);
	rep = ask(&f, &req, &fd);
	assert_int_equal(rep->error, 0);
	assert_true(fd >= 0);
	fp = fdopen(fd, "r");
	assert_non_null(fp);
	assert_non_null(fgets(line, sizeof(line), fp));
	assert_int_equal(sscanf(line, "%llx %c %255s", &addr, &type, name), 3);
	fclose(fp);
	sym_wire_free_reply(rep);
	stop(&f);
}

static void test_process(void **state)
{
	Lowprof__Sym__SymReply *rep;
	struct fx f;
	int fd;

	(void)state;
	start(&f);
	rep = ask_process(&f, (uint32_t)child, &fd);
	assert_int_equal(rep->error, 0);
	assert_int_equal(fd, -1);
	assert_string_equal(rep->exe_path, child_exe);
	assert_true(rep->cgroup.len > 0);
	assert_int_equal(rep->cgroup.data[rep->cgroup.len - 1], '\n');
	sym_wire_free_reply(rep);
	expect_error(ask_process(&f, NO_SUCH_PID, &fd), &fd, ESRCH);
	/* pid 0 never names a process: refused before anything is read. */
	expect_error(ask_process(&f, 0, &fd), &fd, EINVAL);
	stop(&f);
}

/* Packed request bytes, for messages sent around sym_wire. */
static size_t pack(const Lowprof__Sym__SymRequest *req, uint8_t *buf)
{
	size_t len = lowprof__sym__sym_request__get_packed_size(req);

	assert_true(len <= SYM_WIRE_MAX_REQUEST);
	lowprof__sym__sym_request__pack(req, buf);
	return len;
}

static void test_malformed(void **state)
{
	/* Field 1 with wire type 7, which does not exist: never unpacks. */
	static const uint8_t garbage[] = {0x0f, 0xde, 0xad, 0xbe, 0xef, 0x17, 0x42};
	Lowprof__Sym__SymRequest req;
	Lowprof__Sym__KallsymsRequest k;
	Lowprof__Sym__SymReply *rep;
	uint8_t buf[SYM_WIRE_MAX_REQUEST], big[SYM_WIRE_MAX_REQUEST + 100];
	struct fx f;
	size_t len;
	int fd, sent_fd;

	(void)state;
	start(&f);
	assert_int_equal(send(f.peer, garbage, sizeof(garbage), 0), (ssize_t)sizeof(garbage));
	assert_int_equal(send(f.peer, "", 0, 0), 0);
	/* A valid request, but with an fd: requests carry none. */
	kallsyms_req(&req, &k, 7);
	len = pack(&req, buf);
	sent_fd = memfd_create("stray", MFD_CLOEXEC);
	assert_true(sent_fd >= 0);
	assert_int_equal(fdpass_send(f.peer, buf, len, sent_fd), 0);
	close(sent_fd);
	memset(big, 0x08, sizeof(big));
	assert_int_equal(send(f.peer, big, sizeof(big), 0), (ssize_t)sizeof(big));
	kallsyms_req(&req, &k, 0);
	send_req(&f, &req); /* id 0: nothing to answer with */
	/* No kind at all (as a kind this build does not know unpacks): has an id, so answered. */
	lowprof__sym__sym_request__init(&req);
	req.id = 99;
	send_req(&f, &req);
	kallsyms_req(&req, &k, 100);
	send_req(&f, &req);

	assert_int_equal(symbol_broker_handle(&f.b, T0), 0);
	assert_true(f.b.mon.fd >= 0);
	assert_int_equal(f.b.st.malformed, 5);
	rep = recv_reply(&f, 99, &fd);
	expect_error(rep, &fd, EINVAL);
	/* And the next request is served as if nothing had happened. */
	rep = recv_reply(&f, 100, &fd);
	assert_int_equal(rep->error, 0);
	assert_true(fd >= 0);
	close(fd);
	sym_wire_free_reply(rep);
	assert_int_equal(test_audit_count(f.audit, "\"event\":\"request_refused\""), 6);
	assert_int_equal(test_audit_count(f.audit, "\"request\":\"malformed\""), 5);
	assert_int_equal(test_audit_count(f.audit, "does not unpack"), 1);
	assert_int_equal(test_audit_count(f.audit, "empty message"), 1);
	assert_int_equal(test_audit_count(f.audit, "carrying a file descriptor"), 1);
	assert_int_equal(test_audit_count(f.audit, "longer than"), 1);
	assert_int_equal(test_audit_count(f.audit, "with id 0"), 1);
	assert_int_equal(test_audit_count(f.audit, "unknown request kind"), 1);
	stop(&f);
}

static void test_flood(void **state)
{
	struct symbol_broker_config cfg = {"/proc", "/usr/lib/debug", false, 0, 10, 10, 0, NULL, NULL, NULL};
	Lowprof__Sym__SymRequest req;
	Lowprof__Sym__KallsymsRequest k;
	Lowprof__Sym__SymReply *rep;
	struct fx f;
	int i, fd, busy = 0, served = 0;

	(void)state;
	start_cfg(&f, &cfg);
	for (i = 0; i < 50; i++) {
		kallsyms_req(&req, &k, 1000 + (uint32_t)i);
		send_req(&f, &req);
	}
	/* All at once, no time passing: the bucket (10) runs dry. */
	assert_int_equal(symbol_broker_handle(&f.b, T0), 0);
	for (i = 0; i < 50; i++) {
		rep = recv_reply(&f, 1000 + (uint32_t)i, &fd);
		if (rep->error == EBUSY)
			busy++;
		else if (rep->error == 0)
			served++;
		if (fd >= 0)
			close(fd);
		sym_wire_free_reply(rep);
	}
	assert_true(busy >= 40);
	assert_int_equal(busy + served, 50);
	assert_int_equal(f.b.mon.st.rate_limited, (uint64_t)busy);
	/* Audited, but one line for the whole second of flood. */
	assert_int_equal(test_audit_count(f.audit, "rate limit exceeded"), 1);
	assert_true(test_audit_count(f.audit, "request_refused") < busy);

	/* 1.5 s later the bucket is full again; the next refusal's record counts
	 * those that were not audited one by one. */
	for (i = 0; i < 20; i++) {
		kallsyms_req(&req, &k, 2000 + (uint32_t)i);
		send_req(&f, &req);
	}
	assert_int_equal(symbol_broker_handle(&f.b, T0 + 3 * SEC / 2), 0);
	for (i = 0, busy = 0; i < 20; i++) {
		rep = recv_reply(&f, 2000 + (uint32_t)i, &fd);
		busy += rep->error == EBUSY;
		if (fd >= 0)
			close(fd);
		sym_wire_free_reply(rep);
	}
	assert_int_equal(busy, 10);
	assert_int_equal(test_audit_count(f.audit, "rate limit exceeded"), 2);
	assert_int_equal(test_audit_count(f.audit, "\"rate_refusals_not_audited\":39"), 1);
	assert_int_equal(test_audit_count(f.audit, "\"errno\":16"), 2); /* EBUSY */
	stop(&f);
}

static void test_rate_counts_malformed(void **state)
{
	struct symbol_broker_config cfg = {"/proc", "/usr/lib/debug", false, 0, 10, 5, 0, NULL, NULL, NULL};
	Lowprof__Sym__SymRequest req;
	Lowprof__Sym__KallsymsRequest k;
	Lowprof__Sym__SymReply *rep;
	struct fx f;
	int i, fd;

	(void)state;
	start_cfg(&f, &cfg);
	/* Garbage takes tokens too: 5 empty messages drain the bucket... */
	for (i = 0; i < 5; i++)
		assert_int_equal(send(f.peer, "", 0, 0), 0);
	kallsyms_req(&req, &k, 5000);
	send_req(&f, &req);
	assert_int_equal(symbol_broker_handle(&f.b, T0), 0);
	/* ...so the request after them is refused. */
	rep = recv_reply(&f, 5000, &fd);
	expect_error(rep, &fd, EBUSY);
	assert_int_equal(f.b.st.malformed, 5);
	stop(&f);
}

static void test_peer_uid(void **state)
{
	struct symbol_broker_config cfg = {"/proc", "/usr/lib/debug", true, 12345, 0, 0, 0, NULL, NULL, NULL};
	Lowprof__Sym__SymRequest req;
	Lowprof__Sym__KallsymsRequest k;
	Lowprof__Sym__SymReply *rep;
	char needle[64];
	struct fx f;
	int fd;

	(void)state;
	if (getuid() == 12345)
		skip();
	start_cfg(&f, &cfg);
	kallsyms_req(&req, &k, 0);
	rep = ask(&f, &req, &fd);
	expect_error(rep, &fd, EPERM);
	assert_int_equal(test_audit_count(f.audit, "is not the exporter's uid 12345"), 1);
	/* Who sent it, as the kernel says (SCM_CREDENTIALS). */
	snprintf(needle, sizeof(needle), "\"pid\":%d,\"uid\":%u", (int)getpid(), (unsigned)getuid());
	assert_int_equal(test_audit_count(f.audit, needle), 1);
	stop(&f);

	/* The right uid is served. */
	cfg.exporter_uid = getuid();
	start_cfg(&f, &cfg);
	rep = ask(&f, &req, &fd);
	assert_int_equal(rep->error, 0);
	assert_true(fd >= 0);
	close(fd);
	sym_wire_free_reply(rep);
	assert_int_equal(test_audit_count(f.audit, "request_refused"), 0);
	stop(&f);
}

/* Only processes the loader has sampled: a compromised exporter cannot
 * survey the others (maps, mapped files, exe and cgroup). */
static void test_only_sampled_pids(void **state)
{
	struct symbol_broker_config cfg = {"/proc", "/usr/lib/debug", false, 0, 0, 0, 0, NULL, NULL, NULL};
	struct seen_pids seen;
	Lowprof__Sym__SymReply *rep;
	struct fx f;
	int fd;

	(void)state;
	assert_int_equal(seen_pids_init(&seen, T0), 0);
	seen_pids_add(&seen, (uint32_t)getpid(), 0, T0);
	cfg.sampled = &seen;
	start_cfg(&f, &cfg);
	rep = ask_maps(&f, (uint32_t)child, &fd);
	expect_error(rep, &fd, EACCES);
	rep = ask_process(&f, (uint32_t)child, &fd);
	expect_error(rep, &fd, EACCES);
	rep = ask_mapped(&f, (uint32_t)child, 0x1000, 0x2000, 1, &fd);
	expect_error(rep, &fd, EACCES);
	assert_int_equal(test_audit_count(f.audit, "has not been sampled"), 3);
	/* Sampled: served. */
	seen_pids_add(&seen, (uint32_t)child, 0, T0);
	rep = ask_maps(&f, (uint32_t)child, &fd);
	assert_int_equal(rep->error, 0);
	assert_true(fd >= 0);
	close(fd);
	sym_wire_free_reply(rep);
	stop(&f);
	seen_pids_fini(&seen);
}

/* The right uid is not enough: the sender must run lowprof-exporter, as a
 * child of the supervisor (here: of our parent). */
static void test_peer_program(void **state)
{
	struct symbol_broker_config cfg = {"/proc", "/usr/lib/debug", true, 0, 0, 0, 0, NULL, NULL, NULL};
	Lowprof__Sym__SymRequest req;
	Lowprof__Sym__KallsymsRequest k;
	Lowprof__Sym__SymReply *rep;
	struct fx f;
	int fd;

	(void)state;
	cfg.exporter_uid = getuid();
	cfg.exporter_exe = "lowprof-exporter";
	start_cfg(&f, &cfg);
	kallsyms_req(&req, &k, 0);
	rep = ask(&f, &req, &fd);
	expect_error(rep, &fd, EPERM);
	assert_int_equal(test_audit_count(f.audit, "not lowprof-exporter"), 1);
	stop(&f);

	cfg.exporter_exe = NULL;
	cfg.exporter_ppid = getpid(); /* we are not our own child */
	start_cfg(&f, &cfg);
	rep = ask(&f, &req, &fd);
	expect_error(rep, &fd, EPERM);
	assert_int_equal(test_audit_count(f.audit, "is not a child of the supervisor"), 1);
	stop(&f);

	cfg.exporter_ppid = getppid();
	start_cfg(&f, &cfg);
	rep = ask(&f, &req, &fd);
	assert_int_equal(rep->error, 0);
	close(fd);
	sym_wire_free_reply(rep);
	stop(&f);
}

/* More fds than the broker has room for (MSG_CTRUNC): no request, audited,
 * every fd closed, and the next request served. */
static void test_ctrunc(void **state)
{
	Lowprof__Sym__SymRequest req;
	Lowprof__Sym__KallsymsRequest k;
	Lowprof__Sym__SymReply *rep;
	uint8_t buf[SYM_WIRE_MAX_REQUEST];
	struct fx f;
	size_t len;
	int fd, stray, before;

	(void)state;
	start(&f);
	kallsyms_req(&req, &k, 11);
	len = pack(&req, buf);
	stray = memfd_create("stray", MFD_CLOEXEC);
	assert_true(stray >= 0);
	before = test_fd_count();
	assert_int_equal(test_send_fds(f.peer, buf, len, stray, 16), (ssize_t)len);
	assert_int_equal(symbol_broker_handle(&f.b, T0), 0);
	assert_int_equal(test_fd_count(), before);
	assert_int_equal(f.b.st.malformed, 1);
	assert_int_equal(test_audit_count(f.audit, "control data truncated (MSG_CTRUNC)"), 1);
	assert_int_equal(test_audit_count(f.audit, "\"request\":\"malformed\""), 1);
	close(stray);
	kallsyms_req(&req, &k, 12);
	rep = ask(&f, &req, &fd);
	assert_int_equal(rep->error, 0);
	assert_true(fd >= 0);
	close(fd);
	sym_wire_free_reply(rep);
	stop(&f);
}

/* Every holder of the other end gone: the broker stops (no busy loop on a hang-up). */
static void test_peer_gone(void **state)
{
	struct fx f;

	(void)state;
	start(&f);
	close(f.peer);
	f.peer = -1;
	assert_int_equal(symbol_broker_handle(&f.b, T0), -EPIPE);
	assert_int_equal(f.b.mon.fd, -1);
	assert_int_equal(f.b.st.malformed, 0);
	assert_int_equal(test_audit_count(f.audit, "request_refused"), 0);
	stop(&f);
}

static int setup(void **state)
{
	char path[64];
	ssize_t n;
	int p[2];
	char c;

	(void)state;
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		close(p[0]);
		/* Say "running" only once the fork is complete, then sleep. */
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	n = read(p[0], &c, 1);
	close(p[0]);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)child);
	if (n != 1 || readlink(path, child_exe, sizeof(child_exe) - 1) <= 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_mapped_file),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_debug_file),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_flood),
		cmocka_unit_test(test_rate_counts_malformed),
		cmocka_unit_test(test_peer_uid),
		cmocka_unit_test(test_only_sampled_pids),
		cmocka_unit_test(test_peer_program),
		cmocka_unit_test(test_peer_gone),
		cmocka_unit_test(test_ctrunc),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
