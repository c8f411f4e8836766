/* sym_wire: the symbol-source protocol's messages on a SEQPACKET socket (see the header). */
#include "ipc/sym_wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "ipc/fd_pass.h"

int sym_wire_send_request(int sock, const Lowprof__Sym__SymRequest *req)
{
	uint8_t buf[SYM_WIRE_MAX_REQUEST];
	size_t len = lowprof__sym__sym_request__get_packed_size(req);

	if (len > sizeof(buf))
		return -EMSGSIZE;
	lowprof__sym__sym_request__pack(req, buf);
	return fdpass_send(sock, buf, len, -1);
}

int sym_wire_send_reply(int sock, const Lowprof__Sym__SymReply *rep, int fd)
{
	size_t len = lowprof__sym__sym_reply__get_packed_size(rep);
	uint8_t *buf;
	int rc;

	if (len > SYM_WIRE_MAX_REPLY)
		return -EMSGSIZE;
	/* An empty message would read as "peer closed": a reply always has an id. */
	buf = malloc(len ? len : 1);
	if (buf == NULL)
		return -ENOMEM;
	lowprof__sym__sym_reply__pack(rep, buf);
	rc = fdpass_send(sock, buf, len, fd);
	free(buf);
	return rc;
}

/* One message of at most max bytes. 1 with *len, 0 closed, -EAGAIN, or a refusal. */
static int sym_wire_recv_raw(int sock, uint8_t *buf, size_t max, size_t *len, int *fd, char *err,
			     size_t errlen)
{
	/* One byte more than the limit: a message that fills it is too long. */
	ssize_t n = fdpass_recv(sock, buf, max + 1, fd, err, errlen);

	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return -EAGAIN;
	if (n < 0)
		return n == -EPROTO ? -EPROTO : (int)n;
	if (n == 0) {
		if (*fd >= 0) {
			close(*fd);
			*fd = -1;
			return errbuf_fail(-EPROTO, err, errlen, "empty message with an fd");
		}
		return 0;
	}
	if ((size_t)n > max) {
		if (*fd >= 0) {
			close(*fd);
			*fd = -1;
		}
		return errbuf_fail(-EPROTO, err, errlen, "message of more than %zu bytes", max);
	}
	*len = (size_t)n;
	return 1;
}

int sym_wire_decode_request(const uint8_t *buf, size_t len, Lowprof__Sym__SymRequest **out,
			    char *err, size_t errlen)
{
	Lowprof__Sym__SymRequest *req = lowprof__sym__sym_request__unpack(NULL, len, buf);

	*out = NULL;
	if (req == NULL)
		return errbuf_fail(-EBADMSG, err, errlen, "request of %zu bytes does not unpack", len);
	/* Nothing to answer it with: the exporter matches replies by id. */
	if (req->id == 0) {
		errbuf_set(err, errlen, "%s request with id 0", sym_wire_request_name(req->what_case));
		lowprof__sym__sym_request__free_unpacked(req, NULL);
		return -EBADMSG;
	}
	*out = req;
	return 0;
}

int sym_wire_recv_request(int sock, Lowprof__Sym__SymRequest **out, char *err, size_t errlen)
{
	uint8_t buf[SYM_WIRE_MAX_REQUEST + 1];
	Lowprof__Sym__SymRequest *req;
	size_t len = 0;
	int fd = -1, rc;

	*out = NULL;
	rc = sym_wire_recv_raw(sock, buf, SYM_WIRE_MAX_REQUEST, &len, &fd, err, errlen);
	if (rc <= 0)
		return rc;
	if (fd >= 0) {
		close(fd);
		return errbuf_fail(-EPROTO, err, errlen, "a request carrying a file descriptor");
	}
	rc = sym_wire_decode_request(buf, len, &req, err, errlen);
	if (rc < 0)
		return rc;
	/* A field number this build does not know unpacks as "not set". */
	if (req->what_case == LOWPROF__SYM__SYM_REQUEST__WHAT__NOT_SET) {
		lowprof__sym__sym_request__free_unpacked(req, NULL);
		return errbuf_fail(-EBADMSG, err, errlen, "request of no known kind");
	}
	*out = req;
	return 1;
}

bool sym_wire_build_id_valid(const char *id)
{
	size_t n = id != NULL ? strlen(id) : 0, i;

	if (n < 2 || n > SYM_WIRE_MAX_BUILD_ID || n % 2 != 0)
		return false;
	for (i = 0; i < n; i++) {
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	}
	return true;
}

static int sym_wire_check_pid(uint32_t pid, char *err, size_t errlen)
{
	if (pid == 0 || pid > SYM_WIRE_MAX_PID)
		return errbuf_fail(-EINVAL, err, errlen, "pid %u out of range", pid);
	return 0;
}

/* The kernel's device encoding: a 12-bit major over a 20-bit minor, so any
 * 32-bit value is one; 0:0 backs no file the BPF program can report. */
static int sym_wire_check_file(const Lowprof__Sym__FileRequest *f, char *err, size_t errlen)
{
	if (f->ino == 0)
		return errbuf_fail(-EINVAL, err, errlen, "file with inode 0");
	if (f->dev == 0)
		return errbuf_fail(-EINVAL, err, errlen, "file on device 0:0");
	return 0;
}

int sym_wire_check_request(const Lowprof__Sym__SymRequest *req, char *err, size_t errlen)
{
	const Lowprof__Sym__MappedFileRequest *mf;

	switch (req->what_case) {
	case LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS:
		return sym_wire_check_pid(req->maps->pid, err, errlen);
	case LOWPROF__SYM__SYM_REQUEST__WHAT_PROCESS:
		return sym_wire_check_pid(req->process->pid, err, errlen);
	case LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE:
		mf = req->mapped_file;
		if (sym_wire_check_pid(mf->pid, err, errlen) != 0)
			return -EINVAL;
		if (mf->start >= mf->end)
			return errbuf_fail(-EINVAL, err, errlen, "mapping start 0x%llx not below end 0x%llx",
					     (unsigned long long)mf->start, (unsigned long long)mf->end);
		if (mf->inode == 0)
			return errbuf_fail(-EINVAL, err, errlen, "inode 0");
		return 0;
	case LOWPROF__SYM__SYM_REQUEST__WHAT_DEBUG_FILE:
		if (!sym_wire_build_id_valid(req->debug_file->build_id))
			return errbuf_fail(-EINVAL, err, errlen, "malformed build id");
		return 0;
	case LOWPROF__SYM__SYM_REQUEST__WHAT_KALLSYMS:
		return 0;
	case LOWPROF__SYM__SYM_REQUEST__WHAT_FILE:
		return sym_wire_check_file(req->file, err, errlen);
	default:
		return errbuf_fail(-EINVAL, err, errlen, "unknown request kind %d", (int)req->what_case);
	}
}

int sym_wire_decode_reply(const uint8_t *buf, size_t len, bool with_fd,
			  Lowprof__Sym__SymReply **out, char *err, size_t errlen)
{
	Lowprof__Sym__SymReply *rep = lowprof__sym__sym_reply__unpack(NULL, len, buf);
	const char *bad = NULL;

	*out = NULL;
	if (rep == NULL)
		return errbuf_fail(-EBADMSG, err, errlen, "reply does not unpack");
	if (rep->id == 0)
		bad = "reply with id 0";
	else if (rep->error < 0)
		bad = "negative error in a reply";
	else if (rep->error != 0 && with_fd)
		bad = "failure reply carrying a file descriptor";
	else if (strlen(rep->exe_path) > SYM_WIRE_MAX_EXE_PATH ||
		 strlen(rep->path) > SYM_WIRE_MAX_EXE_PATH || strlen(rep->reason) > 1024)
		bad = "text field too long";
	else if (rep->cgroup.len > SYM_WIRE_MAX_CGROUP)
		bad = "cgroup text too long";
	if (bad != NULL) {
		lowprof__sym__sym_reply__free_unpacked(rep, NULL);
		return errbuf_fail(-EPROTO, err, errlen, "%s", bad);
	}
	*out = rep;
	return 0;
}

int sym_wire_recv_reply(int sock, Lowprof__Sym__SymReply **out, int *fd, char *err, size_t errlen)
{
	uint8_t *buf;
	size_t len = 0;
	int rc;

	*out = NULL;
	*fd = -1;
	buf = malloc(SYM_WIRE_MAX_REPLY + 1);
	if (buf == NULL)
		return -ENOMEM;
	rc = sym_wire_recv_raw(sock, buf, SYM_WIRE_MAX_REPLY, &len, fd, err, errlen);
	if (rc <= 0) {
		free(buf);
		return rc;
	}
	rc = sym_wire_decode_reply(buf, len, *fd >= 0, out, err, errlen);
	free(buf);
	if (rc < 0) {
		if (*fd >= 0) {
			close(*fd);
			*fd = -1;
		}
		return rc;
	}
	return 1;
}

void sym_wire_free_request(Lowprof__Sym__SymRequest *req)
{
	if (req != NULL)
		lowprof__sym__sym_request__free_unpacked(req, NULL);
}

void sym_wire_free_reply(Lowprof__Sym__SymReply *rep)
{
	if (rep != NULL)
		lowprof__sym__sym_reply__free_unpacked(rep, NULL);
}

const char *sym_wire_request_name(Lowprof__Sym__SymRequest__WhatCase c)
{
	switch (c) {
	case LOWPROF__SYM__SYM_REQUEST__WHAT_MAPS:
		return "maps";
	case LOWPROF__SYM__SYM_REQUEST__WHAT_MAPPED_FILE:
		return "mapped_file";
	case LOWPROF__SYM__SYM_REQUEST__WHAT_DEBUG_FILE:
		return "debug_file";
	case LOWPROF__SYM__SYM_REQUEST__WHAT_KALLSYMS:
		return "kallsyms";
	case LOWPROF__SYM__SYM_REQUEST__WHAT_PROCESS:
		return "process";
	case LOWPROF__SYM__SYM_REQUEST__WHAT_FILE:
		return "file";
	default:
		return "unknown";
	}
}
