/*
 * The symbolizer's state, shared by its two files: symbolizer.c (processes'
 * maps, files, the caches) and symbolizer_kernel.c (what the kernel gives
 * every process alike: kallsyms and the vDSO).
 */
#ifndef LOWPROF_EXPORTER_SYMBOLIZER_INTERNAL_H
#define LOWPROF_EXPORTER_SYMBOLIZER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/intern.h"
#include "common/mono_clock.h"
#include "exporter/symbols/symbolizer.h"

/* The loader did not answer (restarting): a file or kallsyms is asked again after this. */
#define SYM_AGAIN_RETRY_NS NSEC_PER_SEC
#define SYM_BUCKETS 1024 /* power of two; chains absorb larger limits */

/* Intrusive LRU list: most recently used at head.next. */
struct lru {
	struct lru *prev, *next;
};

struct sym_pid {
	struct lru lru; /* first member: a struct lru * is a struct sym_pid * */
	struct sym_pid *hnext;
	uint32_t pid;
	struct proc_maps *maps; /* NULL until a read succeeds */
	uint64_t read_at_ns;
	uint64_t used_ns;       /* last asked for: entries unused for a window go */
	uint64_t gen;           /* symbolizer_stack_generation: new at each maps change */
	uint16_t image_id;      /* the last a sample of pid carried (symbolizer_note_image) */
	bool image_known;
};

struct sym_file {
	struct lru lru; /* first member */
	struct sym_file *hnext;
	/* Key: a mapping's (major << 32 | minor, inode), or for a file named by
	 * identity SYM_DEV_BY_ID | its kernel device, inode and generation. */
	uint64_t dev, inode;
	uint32_t gen;
	struct elf_symbols *elf; /* NULL: could not be read */
	struct elf_symbols *debug; /* the separate debug file's symbols, or NULL */
	const char *build_id;    /* interned */
	const char *path;        /* by identity: interned module name; NULL until opened */
	uint64_t size;           /* by identity: the file's size (a mapping's extent), 0 unknown */
	uint64_t used_ns;        /* last asked for */
	uint64_t retry_at_ns;    /* when elf is NULL; UINT64_MAX: never (not an ELF) */
	uint8_t not_yet;         /* by identity: the source's ENOENT answers so far */
	size_t bytes;            /* elf's and debug's heap, counted in file_bytes */
};

struct symbolizer {
	bool kernel_addresses;    /* raw kernel addresses in frames (else offsets only) */
	struct sym_pid *pids[SYM_BUCKETS];
	struct sym_file *files[SYM_BUCKETS];
	struct lru pid_lru, file_lru;
	size_t npids, nfiles, max_pids, max_files;
	size_t file_bytes, max_file_bytes; /* the symbol tables' heap and its bound */
	size_t maps_bytes;        /* the cached maps' heap (proc_maps_memory) */
	uint64_t idle_ns;         /* symbolizer_expire drops what was unused this long */
	size_t keep_file_bytes;   /* ... but files only down to this (symbolizer_set_keep_file_bytes) */
	struct intern strings;    /* every string a returned frame points to */
	struct proc_source *src;  /* maps, files, kallsyms: from the loader in a real run */
	struct kallsyms *kallsyms;
	bool kallsyms_done;       /* loaded, or failed for good */
	bool kallsyms_reported;
	uint64_t kallsyms_retry_ns;
	char kernel_note[256];
	struct elf_symbols *vdso;
	const char *vdso_build_id;
	size_t vdso_size;
	struct symbolizer_stats stats;
	uint64_t gen_counter;     /* source of the generations below */
	/* Every pid's stack generation is at least this: set when kallsyms is
	 * loaded (or failed for good), and when the string table is rebuilt (the
	 * stacks cached before hold pointers into the old one). */
	uint64_t kernel_gen;
	/* The string table's: new at creation and at each rebuild. */
	uint64_t strings_gen;
	/* The same events, numbered across every symbolizer of the process
	 * (symbolizer_strings_epoch): never one an earlier table had. */
	uint64_t strings_epoch;
};

/* The symbolizer's copy of str, valid until symbolizer_free; NULL when out of memory. */
const char *sym_intern(struct symbolizer *s, const char *str);
const char *sym_internf(struct symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* *out as an unnamed frame at addr. */
void sym_frame_unknown(struct frame *out, uint64_t addr, bool kernel);

/* symbolizer_kernel.c: our own vDSO's symbols into s->vdso (none if odd). */
void sym_load_vdso(struct symbolizer *s);

#endif
