/* unwinder_proto: messages between the loader and lowprof-unwinder (see the header). */
#define _GNU_SOURCE
#include "unwind/unwinder_proto.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNWINDER_MAX_PHDRS 256

static int proto_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int proto_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int unwinder_request_check(const void *buf, size_t n, int fd, uint32_t *seq, char *err,
			   size_t errlen)
{
	struct unwinder_request req;

	if (n != sizeof(req))
		return proto_fail(err, errlen, "request of %zu bytes, want %zu", n, sizeof(req));
	memcpy(&req, buf, sizeof(req));
	if (req.magic != UNWINDER_REQUEST_MAGIC)
		return proto_fail(err, errlen, "bad request magic 0x%08x", req.magic);
	if (fd < 0)
		return proto_fail(err, errlen, "request without a file descriptor");
	*seq = req.seq;
	return 0;
}

int unwinder_reply_check(const struct unwinder_reply *r, size_t n, int fd, size_t max_table,
			 char *err, size_t errlen)
{
	if (n != sizeof(*r))
		return proto_fail(err, errlen, "reply of %zu bytes, want %zu", n, sizeof(*r));
	if (r->magic != UNWINDER_REPLY_MAGIC)
		return proto_fail(err, errlen, "bad reply magic 0x%08x", r->magic);
	if (memchr(r->msg, '\0', sizeof(r->msg)) == NULL)
		return proto_fail(err, errlen, "reply message not terminated");
	if (r->status != 0) {
		if (fd >= 0)
			return proto_fail(err, errlen, "failure reply carrying a file descriptor");
		if (r->status < 0)
			return proto_fail(err, errlen, "negative status %d", r->status);
		return 0;
	}
	if (fd < 0)
		return proto_fail(err, errlen, "success reply without a table memfd");
	if (r->nsegments == 0 || r->nsegments > UNWINDER_MAX_SEGMENTS)
		return proto_fail(err, errlen, "%u executable segments (1..%d allowed)", r->nsegments,
				  UNWINDER_MAX_SEGMENTS);
	if (r->table_len < UNWIND_TABLE_HDR_SIZE || r->table_len > max_table)
		return proto_fail(err, errlen, "table of %llu bytes (limit %zu)",
				  (unsigned long long)r->table_len, max_table);
	return 0;
}

int unwinder_table_from_memfd(int fd, size_t len, size_t max_table, struct unwind_table *out,
			      char *err, size_t errlen)
{
	const int need = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
	struct stat st;
	void *p;
	int seals, rc;

	memset(out, 0, sizeof(*out));
	if (len > max_table || len < UNWIND_TABLE_HDR_SIZE)
		return proto_fail(err, errlen, "table of %zu bytes (limit %zu)", len, max_table);
	if (fstat(fd, &st) != 0)
		return proto_fail(err, errlen, "fstat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size != len)
		return proto_fail(err, errlen, "table memfd of %lld bytes, reply says %zu",
				  (long long)st.st_size, len);
	/* Sealed, or the peer could change the table between our check and our copy. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & need) != need)
		return proto_fail(err, errlen, "table memfd not sealed against writes and resizing");
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return proto_fail(err, errlen, "mmap of the table: %s", strerror(errno));
	rc = unwind_table_deserialize(p, len, out, err, errlen);
	munmap(p, len);
	return rc;
}

/* Whole-buffer pread: a short read is an error (the file is not what it claims). */
static int proto_pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

int unwinder_exec_segments(int fd, struct unwinder_segment *seg, uint32_t *nseg, char *err,
			   size_t errlen)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned i;

	*nseg = 0;
	if (proto_pread_all(fd, &eh, sizeof(eh), 0) != 0)
		return proto_fail(err, errlen, "cannot read the ELF header");
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
		return proto_fail(err, errlen, "not a 64-bit little-endian x86_64 ELF file");
	if (eh.e_phentsize != sizeof(ph) || eh.e_phnum == 0 || eh.e_phnum > UNWINDER_MAX_PHDRS)
		return proto_fail(err, errlen, "bad program header table (%u entries of %u bytes)",
				  eh.e_phnum, eh.e_phentsize);
	for (i = 0; i < eh.e_phnum; i++) {
		if (proto_pread_all(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) != 0)
			return proto_fail(err, errlen, "cannot read program header %u", i);
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (*nseg >= UNWINDER_MAX_SEGMENTS)
			return proto_fail(err, errlen, "more than %d executable segments",
					  UNWINDER_MAX_SEGMENTS);
		seg[*nseg].vaddr = ph.p_vaddr;
		seg[*nseg].memsz = ph.p_memsz;
		seg[*nseg].offset = ph.p_offset;
		seg[*nseg].filesz = ph.p_filesz;
		(*nseg)++;
	}
	if (*nseg == 0)
		return proto_fail(err, errlen, "no executable PT_LOAD segment");
	return 0;
}
