/* ELF symbol reading on whole images: any user can map a crafted file, and
 * the exporter reads the symbols of every binary it samples (and of a debug
 * file found by build id, through the same fd entry point). The image goes
 * through both entry points: from memory (as the vDSO is read) and from an fd
 * (a memfd holding the same bytes, as binaries and debug files are read), and
 * the two must agree. A few file offsets and addresses are then looked up, as
 * the symbolizer does: offset -> vaddr through the binary, name by vaddr. */
#define _GNU_SOURCE
#include "exporter/symbols/elf_symbols.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	return fd;
}

static void fuzz_lookups(const struct elf_symbols *m, const struct elf_symbols *f, uint64_t off)
{
	uint64_t vm = 0, vf = 0, om = 0, of = 0;
	int rm = elf_symbols_file_offset_to_vaddr(m, off, &vm);
	int rf = elf_symbols_file_offset_to_vaddr(f, off, &vf);
	const char *nm, *nf;

	FUZZ_CHECK(rm == rf);
	if (rm != 0)
		vm = vf = off;
	FUZZ_CHECK(vm == vf);
	nm = elf_symbols_lookup(m, vm, &om);
	nf = elf_symbols_lookup(f, vf, &of);
	FUZZ_CHECK((nm == NULL) == (nf == NULL));
	if (nm != NULL) {
		FUZZ_CHECK(strcmp(nm, nf) == 0);
		FUZZ_CHECK(om == of && om <= vm);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_symbols *m = NULL, *f = NULL;
	char err[256];
	int rm, rf, fd;

	rm = elf_symbols_open_mem(data, size, &m, err, sizeof(err));
	FUZZ_CHECK((rm == 0) == (m != NULL));
	fd = fuzz_memfd(data, size);
	if (fd < 0) {
		elf_symbols_free(m);
		return 0;
	}
	rf = elf_symbols_open_fd(fd, &f, err, sizeof(err));
	close(fd);
	FUZZ_CHECK((rf == 0) == (f != NULL));
	FUZZ_CHECK((rm == 0) == (rf == 0));
	if (rm == 0 && rf == 0) {
		const char *bm = elf_symbols_build_id(m), *bf = elf_symbols_build_id(f);
		uint64_t a;

		FUZZ_CHECK(elf_symbols_count(m) == elf_symbols_count(f));
		FUZZ_CHECK(elf_symbols_has_symtab(m) == elf_symbols_has_symtab(f));
		FUZZ_CHECK((bm == NULL) == (bf == NULL));
		FUZZ_CHECK(bm == NULL || strcmp(bm, bf) == 0);
		fuzz_lookups(m, f, 0);
		fuzz_lookups(m, f, 0x1000);
		fuzz_lookups(m, f, size / 2);
		for (size_t i = 0; i + sizeof(a) <= size && i < 8 * sizeof(a); i += sizeof(a)) {
			memcpy(&a, data + size - i - sizeof(a), sizeof(a));
			fuzz_lookups(m, f, a);
		}
	}
	elf_symbols_free(m);
	elf_symbols_free(f);
	return 0;
}
