/*
 * Function symbols, GNU build-id and PT_LOAD layout of one ELF image, read
 * with libelf from an fd or from memory (the vDSO). The bytes are untrusted:
 * every header range is checked against the image size before use, and a
 * malformed or truncated image is refused with a message, never a crash.
 *
 * Symbols come from .symtab and .dynsym merged (a stripped binary still
 * names its exported functions); at one address the .symtab name wins.
 * Everything is copied out of libelf, so the fd may be closed afterwards.
 */
#ifndef LOWPROF_EXPORTER_ELF_SYMBOLS_H
#define LOWPROF_EXPORTER_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds against crafted files: a name longer than ELF_SYMBOLS_NAME_MAX
 * bytes is cut there; past ELF_SYMBOLS_STRTAB_MAX bytes of names in one
 * image, further symbols are skipped (counted by elf_symbols_skipped). */
#define ELF_SYMBOLS_NAME_MAX 1024
#define ELF_SYMBOLS_STRTAB_MAX (16u << 20)

struct elf_symbols;

/* Heap bytes held (symbols, names, layout). */
size_t elf_symbols_memory(const struct elf_symbols *e);
/* Symbols skipped by ELF_SYMBOLS_STRTAB_MAX. */
size_t elf_symbols_skipped(const struct elf_symbols *e);

/*
 * Read the ELF file open on fd (not closed, file position unused).
 * Returns 0 and *out, or a negative errno (-EINVAL for a file that is not a
 * well-formed ELF executable or shared object, -ENOMEM) with a reason in err.
 */
int elf_symbols_open_fd(int fd, struct elf_symbols **out, char *err, size_t errlen);

/* Same for an image of len bytes in memory; the image is copied. */
int elf_symbols_open_mem(const void *image, size_t len, struct elf_symbols **out,
			 char *err, size_t errlen);

/*
 * Name the function containing ELF virtual address vaddr. A symbol with a
 * size covers [value, value + size); one of size 0 covers up to the next
 * symbol. Returns the name (valid until elf_symbols_free) and sets *offset
 * to vaddr - value, or returns NULL on a miss.
 */
const char *elf_symbols_lookup(const struct elf_symbols *e, uint64_t vaddr, uint64_t *offset);

/*
 * Map a file offset to the ELF virtual address it is loaded at, through the
 * PT_LOAD segment containing it (executable segments first):
 * vaddr = off - p_offset + p_vaddr. Returns 0, or -ENOENT when no segment
 * holds the offset.
 */
int elf_symbols_file_offset_to_vaddr(const struct elf_symbols *e, uint64_t off, uint64_t *vaddr);

/* GNU build-id as lowercase hex, or NULL when the image has none. */
const char *elf_symbols_build_id(const struct elf_symbols *e);

/* Function symbols kept (after merging aliases), and whether .symtab existed. */
size_t elf_symbols_count(const struct elf_symbols *e);
bool elf_symbols_has_symtab(const struct elf_symbols *e);

void elf_symbols_free(struct elf_symbols *e);

#endif
