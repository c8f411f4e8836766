/* exec_segments: the executable PT_LOAD segments of an ELF file, and where
 * its build id lies (see the header). */
#include "unwinder/exec_segments.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"

#define UNWINDER_MAX_PHDRS 256
/* Bytes of a PT_NOTE segment searched for the build id: it is the first or
 * second note of a linker's output, a few dozen bytes in. */
#define UNWINDER_NOTE_BYTES 4096
#define UNWINDER_NOTE_ALIGN 4
#define UNWINDER_NT_GNU_BUILD_ID 3

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

/* The PT_LOAD segment that maps file bytes [off, off + len), or NULL. */
static const Elf64_Phdr *segments_load_of(const Elf64_Phdr *ph, unsigned n, uint64_t off, uint64_t len)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD && off >= ph[i].p_offset &&
		    ph[i].p_filesz >= len && off - ph[i].p_offset <= ph[i].p_filesz - len)
			return &ph[i];
	}
	return NULL;
}

/*
 * The GNU build id note's first UNWINDER_BUILD_ID_BYTES of descriptor, in a
 * PT_NOTE segment that a PT_LOAD segment maps: its file offset, the virtual
 * address it is loaded at, and the bytes. Left zero when there is none.
 */
static void segments_build_id(int fd, const Elf64_Phdr *ph, unsigned n,
			      struct unwinder_build_id *bid)
{
	uint8_t note[UNWINDER_NOTE_BYTES];
	const Elf64_Phdr *load;
	unsigned i;

	for (i = 0; i < n; i++) {
		size_t len = ph[i].p_filesz < sizeof(note) ? (size_t)ph[i].p_filesz : sizeof(note);
		size_t at = 0;

		if (ph[i].p_type != PT_NOTE || len == 0 || ph[i].p_offset > INT64_MAX ||
		    segments_pread_all(fd, note, len, (off_t)ph[i].p_offset) != 0)
			continue;
		while (len - at >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			uint64_t name_at, desc_at, next;

			memcpy(&nh, note + at, sizeof(nh));
			name_at = at + sizeof(nh);
			desc_at = name_at + ((nh.n_namesz + UNWINDER_NOTE_ALIGN - 1ULL) & ~(UNWINDER_NOTE_ALIGN - 1ULL));
			next = desc_at + ((nh.n_descsz + UNWINDER_NOTE_ALIGN - 1ULL) & ~(UNWINDER_NOTE_ALIGN - 1ULL));
			if (next > len)
				break;
			if (nh.n_type == UNWINDER_NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(note + name_at, "GNU", 4) == 0 && nh.n_descsz >= UNWINDER_BUILD_ID_BYTES) {
				uint64_t off = ph[i].p_offset + desc_at;

				load = segments_load_of(ph, n, off, UNWINDER_BUILD_ID_BYTES);
				if (load == NULL)
					return;
				bid->offset = off;
				bid->vaddr = load->p_vaddr + (off - load->p_offset);
				memcpy(bid->bytes, note + desc_at, UNWINDER_BUILD_ID_BYTES);
				return;
			}
			at = (size_t)next;
		}
	}
}

int unwinder_exec_segments(int fd, struct unwinder_segment *seg, uint32_t *nseg,
			   struct unwinder_build_id *bid, char *err, size_t errlen)
{
	Elf64_Phdr ph[UNWINDER_MAX_PHDRS];
	Elf64_Ehdr eh;
	unsigned i;

	*nseg = 0;
	memset(bid, 0, sizeof(*bid));
	if (segments_pread_all(fd, &eh, sizeof(eh), 0) != 0)
		return errbuf_fail(-EINVAL, err, errlen, "cannot read the ELF header");
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
		return errbuf_fail(-EINVAL, err, errlen, "not a 64-bit little-endian x86_64 ELF file");
	if (eh.e_phentsize != sizeof(ph[0]) || eh.e_phnum == 0 || eh.e_phnum > UNWINDER_MAX_PHDRS ||
	    eh.e_phoff > INT64_MAX / 2)
		return errbuf_fail(-EINVAL, err, errlen, "bad program header table (%u entries of %u bytes)",
				   eh.e_phnum, eh.e_phentsize);
	if (segments_pread_all(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)eh.e_phoff) != 0)
		return errbuf_fail(-EINVAL, err, errlen, "cannot read the %u program headers", eh.e_phnum);
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (*nseg >= UNWINDER_MAX_SEGMENTS)
			return errbuf_fail(-EINVAL, err, errlen, "more than %d executable segments",
					   UNWINDER_MAX_SEGMENTS);
		seg[*nseg].vaddr = ph[i].p_vaddr;
		seg[*nseg].memsz = ph[i].p_memsz;
		seg[*nseg].offset = ph[i].p_offset;
		seg[*nseg].filesz = ph[i].p_filesz;
		(*nseg)++;
	}
	if (*nseg == 0)
		return errbuf_fail(-EINVAL, err, errlen, "no executable PT_LOAD segment");
	segments_build_id(fd, ph, eh.e_phnum, bid);
	return 0;
}
