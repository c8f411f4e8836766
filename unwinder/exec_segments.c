/* exec_segments: the executable PT_LOAD segments of an ELF file (see the header). */
#include "unwinder/exec_segments.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"

#define UNWINDER_MAX_PHDRS 256

/* Whole-buffer pread: a short read is an error (the file is not what it claims). */
static int segments_pread_all(int fd, void *buf, size_t len, off_t off)
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
	if (segments_pread_all(fd, &eh, sizeof(eh), 0) != 0)
		return errbuf_fail(-EINVAL, err, errlen, "cannot read the ELF header");
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
		return errbuf_fail(-EINVAL, err, errlen, "not a 64-bit little-endian x86_64 ELF file");
	if (eh.e_phentsize != sizeof(ph) || eh.e_phnum == 0 || eh.e_phnum > UNWINDER_MAX_PHDRS)
		return errbuf_fail(-EINVAL, err, errlen, "bad program header table (%u entries of %u bytes)",
				   eh.e_phnum, eh.e_phentsize);
	for (i = 0; i < eh.e_phnum; i++) {
		if (segments_pread_all(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) != 0)
			return errbuf_fail(-EINVAL, err, errlen, "cannot read program header %u", i);
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (*nseg >= UNWINDER_MAX_SEGMENTS)
			return errbuf_fail(-EINVAL, err, errlen, "more than %d executable segments",
					   UNWINDER_MAX_SEGMENTS);
		seg[*nseg].vaddr = ph.p_vaddr;
		seg[*nseg].memsz = ph.p_memsz;
		seg[*nseg].offset = ph.p_offset;
		seg[*nseg].filesz = ph.p_filesz;
		(*nseg)++;
	}
	if (*nseg == 0)
		return errbuf_fail(-EINVAL, err, errlen, "no executable PT_LOAD segment");
	return 0;
}
