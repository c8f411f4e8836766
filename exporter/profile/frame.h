/*
 * One resolved stack frame: what the symbolizer produces and the profile
 * model consumes. Strings are owned by whoever produced the frame (the
 * symbolizer interns them for its lifetime); the profile copies what it keeps.
 */
#ifndef LOWPROF_EXPORTER_FRAME_H
#define LOWPROF_EXPORTER_FRAME_H

#include <stdbool.h>
#include <stdint.h>

struct frame {
	/* Never NULL: a symbol name, or "module+0xOFFSET" / "[unknown]" when unnamed. */
	const char *function;
	/* Mapped file ("/usr/lib/x86_64-linux-gnu/libc.so.6", "[vdso]", "[kernel.kallsyms]",
	 * a kernel module name); NULL when the address lies in no mapping. */
	const char *module;
	/* GNU build-id as lowercase hex, or NULL. */
	const char *build_id;
	uint64_t address;       /* the raw instruction address as sampled */
	uint64_t module_offset; /* file offset within module (user) or address - module base (kernel) */
	uint64_t map_start;     /* mapping bounds in the process, 0 when unknown */
	uint64_t map_end;
	uint64_t map_file_offset; /* file offset at map_start */
	bool kernel;
	bool symbolized;        /* function came from a symbol table */
};

#endif
