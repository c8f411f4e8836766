/*
 * The exporter's symbolizer: names raw sampled addresses (pid + user
 * instruction pointer, or kernel instruction pointer) as struct frame.
 *
 Everything outside the exporter's own memory comes from a proc_source
 * (exporter/symbols/proc_source.h): in a real run the loader hands it over, since the
 * exporter may open no path.
 *
 * Frames as (file, offset): the file is asked of the source by its identity
 * once (the loader registered it when BPF first named it), cached by that
 * identity for every process, whatever its pid; its offset is mapped to an
 * ELF address through the file's PT_LOAD headers. No maps are read for them.
 *
 * Raw user addresses: a pid's maps are read the first time the pid is seen and kept
 * after the process exits (short-lived processes are still named); they are
 * re-read, at most once per second per pid, when an address falls in no known
 * mapping. Mapped files come from the source checked against the mapping's
 * inode; their symbol tables (and those of separate debug files found by
 * build id) are cached by (device, inode) and shared by every process. vDSO
 * frames resolve from the exporter's own vDSO.
 *
 * Kernel frames: from kallsyms, asked for at the first kernel frame.
 *
 * Memory: at most max_pids process maps and max_files symbol tables (and
 * max_file_bytes of them) are cached, least recently used evicted first.
 * Strings in returned frames are interned and stay valid until
 * symbolizer_trim_strings() or symbolizer_free(), whatever is evicted.
 * Not thread-safe: one symbolizer per thread.
 */
#ifndef LOWPROF_EXPORTER_SYMBOLIZER_H
#define LOWPROF_EXPORTER_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exporter/profile/frame.h"
#include "exporter/symbols/proc_source.h"

/* A pid's samples reach the exporter within a drain or two of its exit, and
 * a live process is touched by every sample: on a host starting a thousand
 * processes a second, 1024 maps (a few KiB each) are plenty. */
#define SYMBOLIZER_DEFAULT_MAX_PIDS 1024
#define SYMBOLIZER_DEFAULT_MAX_FILES 1024
/* The symbol tables' heap, all files together (the newest file always stays).
 * Tables serve new samples only (the window's profiles keep their names), and
 * one unused for a minute goes anyway: what is sampled now fits, a table
 * evicted is read again when asked for. */
#define SYMBOLIZER_DEFAULT_MAX_FILE_BYTES ((size_t)16 << 20)
/* The interned strings of returned frames: trimmed past this when the window
 * rolls (a trim costs the stack cache, whose frames point into them). */
#define SYMBOLIZER_DEFAULT_MAX_STRING_BYTES ((size_t)4 << 20)

struct symbolizer;

struct symbolizer_stats {
	size_t pids_cached;
	size_t files_cached;
	uint64_t lookups;     /* frames asked for, user and kernel */
	uint64_t misses;      /* frames returned without a symbol name */
	uint64_t maps_reads;  /* /proc/PID/maps reads: first sight and refreshes */
	uint64_t image_changes; /* pids whose maps were dropped for another image_id */
	uint64_t file_errors; /* mapped files that could not be opened or parsed */
	uint64_t evictions;   /* pids and files dropped by the memory bound */
	uint64_t expired;     /* pids and files dropped for not being used in a window */
	uint64_t string_trims; /* symbolizer_trim_strings that rebuilt the table */
	size_t kernel_symbols;
	bool kernel_restricted; /* kallsyms read, but every address was zero */
	/* symbolizer_memory's parts: symbol tables, interned strings, kallsyms,
	 * cached maps. */
	size_t file_bytes, string_bytes, kernel_bytes, maps_bytes;
};

/*
 * src (not owned; it must outlive the symbolizer) gives maps, files and
 * kallsyms. A kallsyms that cannot be had or is restricted is not an error:
 * kernel frames are then unnamed and symbolizer_kernel_note() says why.
 * Returns NULL only when out of memory, with a reason in err.
 */
struct symbolizer *symbolizer_new(struct proc_source *src, char *err, size_t errlen);

/* Change the cache bounds (minimum 1 each); evicts at once if over them. */
void symbolizer_set_limits(struct symbolizer *s, size_t max_pids, size_t max_files);
/* Bound the symbol tables' heap (least recently used evicted first). */
void symbolizer_set_max_file_bytes(struct symbolizer *s, size_t max_bytes);
/* Heap held: symbol tables, kallsyms, cached maps and interned strings. */
size_t symbolizer_memory(const struct symbolizer *s);
/*
 * When the interned strings take more than max_bytes, starts a new table
 * (keeping only what the caches still point to). Every frame returned before
 * is invalid afterwards: call it only when none is held (between batches).
 * Returns 1 when rebuilt, 0 when under the bound.
 */
int symbolizer_trim_strings(struct symbolizer *s, size_t max_bytes);

/* Most pids symbolizer_prefetch_pids asks for at once. */
#define SYMBOLIZER_PREFETCH_MAX 64

/*
 * Read the maps of the pids not yet cached among pids[0..n) in one go (the
 * broker pipelines the requests): call it with a batch's pids before
 * symbolizing the batch, so that new processes cost one round trip to the
 * loader together rather than one each. Duplicates and cached pids are
 * skipped; at most SYMBOLIZER_PREFETCH_MAX are asked for.
 */
void symbolizer_prefetch_pids(struct symbolizer *s, const uint32_t *pids, size_t n);

/*
 * Fill *out for user address addr of process pid. Every field is set: an
 * address in a mapping without a symbol is "basename+0xFILEOFFSET", one in no
 * mapping is "[unknown]" with module NULL. Returns 0, or -ENOMEM (then *out
 * is still a valid "[unknown]" frame).
 */
int symbolizer_user_frame(struct symbolizer *s, uint32_t pid, uint64_t addr, struct frame *out);

/*
 * Fill *out for a frame at byte offset off of the file with identity id (an
 * entry of a sample's file list): module is the path the loader found the
 * file by ("[file MAJ:MIN inode N]" while it cannot be had), the location's
 * address and module_offset are off, the mapping is the whole file
 * (map_start 0, map_end its size, map_file_offset 0). An offset without a
 * symbol is "basename+0xOFF". Returns 0; 1 when the file's symbols could not
 * be had yet (the frame is valid but asked again later: do not cache it);
 * -ENOMEM (then *out is a valid "[unknown]" frame).
 */
int symbolizer_file_frame(struct symbolizer *s, const struct lowprof_file_id *id, uint64_t off,
			  struct frame *out);

/*
 * Fill *out for offset off from the start of the vDSO: every process has the
 * same vDSO as the exporter (one kernel), so it is named from ours. Module
 * "[vdso]", mapping as for a file. 0 or -ENOMEM.
 */
int symbolizer_vdso_frame(struct symbolizer *s, uint64_t off, struct frame *out);

/*
 * Fill *out for kernel address addr: module "[kernel.kallsyms]" or the kernel
 * module's name; unnamed addresses are "[kernel]+0xADDR". Returns 0 or -ENOMEM.
 */
int symbolizer_kernel_frame(struct symbolizer *s, uint64_t addr, struct frame *out);

/*
 * Before naming a sample's raw user addresses: image_id is the sample's
 * (bpf/lowprof.h). When pid's maps were read for another one, the pid runs
 * another program (or is another process) since, and they are dropped,
 * read again at the next address (a process sampled before its exec
 * otherwise had its new program's addresses looked up in the old program's
 * maps, unnamed until a refresh a second later, past the end of a
 * short-lived one). A pid's first is recorded, its maps read at its first
 * address as before.
 */
void symbolizer_note_image(struct symbolizer *s, uint32_t pid, uint16_t image_id);

/*
 * Drop the cached maps of pid: call it once its exit (or exec) has been seen
 * and every sample referring to it symbolized, so a reused pid is read afresh.
 */
void symbolizer_forget_pid(struct symbolizer *s, uint32_t pid);

/*
 * A number that changes whenever the frames returned for pid's addresses (or
 * any kernel address) may change: its maps read again or forgotten, kallsyms
 * loaded. 0 while that is not settled (pid not cached, maps unread, kallsyms
 * not loaded yet): then nothing should be cached (exporter/symbols/stack_cache.h).
 */
uint64_t symbolizer_stack_generation(const struct symbolizer *s, uint32_t pid);

/*
 * The same for a stack without raw user addresses (file, vDSO and, when
 * kernel, kernel frames): it depends on no pid's maps, only on the string
 * table and, with kernel frames, kallsyms (0 while it is not settled).
 */
uint64_t symbolizer_files_generation(const struct symbolizer *s, bool kernel);

/*
 * A number that changes whenever a string a returned frame points to may be
 * freed (the string table rebuilt), and that no other symbolizer of the
 * process ever gave: while it stays the same, a frame string's address names
 * its content (profile_set_frame_epoch).
 */
uint64_t symbolizer_strings_epoch(const struct symbolizer *s);

/*
 * Drop the pids and files not asked for since before_ns (mono_ns), or for
 * the idle time (symbolizer_set_idle_ns), whichever is shorter, files down
 * to the floor (symbolizer_set_keep_file_bytes): called when the window
 * rolls, so the caches hold what is sampled now, not what the run ever saw
 * (a process gone, a compiler that ran once). The window's stacks keep their
 * names without the tables (the profiles hold them); a table is only needed
 * for new samples, and is read again if they come. Returns how many.
 */
size_t symbolizer_expire(struct symbolizer *s, uint64_t before_ns);

/* A pid's maps or a file's symbols unused this long go at the next
 * symbolizer_expire (at least 1 ms), beyond the floor below: a 10-minute
 * window no longer holds every table it saw. */
#define SYMBOLIZER_DEFAULT_IDLE_NS (60ull * 1000000000ull)
void symbolizer_set_idle_ns(struct symbolizer *s, uint64_t idle_ns);

/*
 * The floor of expiry: the most recently used files' tables stay, however
 * long unused, while all the tables held come to at most keep_bytes and
 * SYMBOLIZER_KEEP_FILES files (older ones go first). An idle host's trickle
 * (its daemons, lowprof's own processes) names the same few files a sample
 * now and then, a minute or more apart: without the floor each such sample
 * read libc's symbols again: half the exporter's CPU at rest
 * (docs/BENCHMARKS.md, "Symbol tables kept at rest"). The bound on all
 * tables (SYMBOLIZER_DEFAULT_MAX_FILE_BYTES) is unchanged; 0 turns the floor
 * off.
 */
#define SYMBOLIZER_DEFAULT_KEEP_FILE_BYTES ((size_t)2 << 20)
#define SYMBOLIZER_KEEP_FILES 64
void symbolizer_set_keep_file_bytes(struct symbolizer *s, size_t keep_bytes);

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *out);

/*
 * Kernel frames carry raw kernel addresses (their address, and an unnamed
 * one's name "[kernel]+0xADDR") only when on: otherwise their address is the
 * offset within their module and an unnamed one is "[kernel]", so that the
 * outputs do not tell where the kernel lies (KASLR). Off by default.
 */
void symbolizer_set_kernel_addresses(struct symbolizer *s, bool on);

/*
 * Ask for kallsyms now rather than at the first kernel frame (its parse costs
 * tens of milliseconds, better spent before sampling starts). false when it
 * could not be had yet: the first kernel frame asks again.
 */
bool symbolizer_load_kernel_symbols(struct symbolizer *s);

/* Why kernel frames are unnamed ("kptr_restrict ..."), or NULL when they can be named. */
const char *symbolizer_kernel_note(const struct symbolizer *s);

void symbolizer_free(struct symbolizer *s);

#endif
