/*
 * Keeping a long-lived process's heap at what it uses.
 *
 * glibc serves a large allocation (128 KiB by default) with its own mmap,
 * but once such a block is freed it raises that threshold (up to 32 MiB) and
 * the heap's trim threshold with it (twice that): from then on the large
 * buffers live in the heap, and what they leave at its top is never given
 * back. Measured in the loader under churn: 24 MiB of free heap held for
 * good after the start-up tables, 0.8 MiB in use. Fixing both thresholds
 * turns the adjustment off: large buffers come and go with mmap/munmap, and
 * the heap's top is trimmed past 1 MiB.
 *
 * Why 1 MiB and not less: what the top gives back, the next use faults in
 * again, page by page, and a fault is dear (about 20 us on a VM with shadow
 * page tables). A pprof write (zlib's 256 KiB of state, the encoder's
 * tables) grew the heap and gave it back every time at a quarter MiB: 30
 * small writes in a row took 1099 faults and 1.47 ms each; at 1 MiB, 294
 * faults and 0.93 ms (docs/BENCHMARKS.md, "Cheaper wakes at rest").
 */
#ifndef LOWPROF_COMMON_HEAP_BOUND_H
#define LOWPROF_COMMON_HEAP_BOUND_H

#include <stdbool.h>

#define HEAP_BOUND_MMAP_THRESHOLD (128 * 1024)
#define HEAP_BOUND_TRIM_THRESHOLD (1024 * 1024)

/* At a program's start, before anything large is allocated. */
void heap_bound(void);

/*
 * After a large free (a window's intervals, a table, kallsyms' text): give
 * the heap's free pages back, but only when the free bytes below its top
 * grew by more than HEAP_BOUND_TRIM_THRESHOLD since the last trim. A small write freed
 * and trimmed each time faults the same pages in again at the next one: at
 * rest that was most of a roll's page faults (docs/BENCHMARKS.md, "Trimmed
 * only when it pays"). Returns whether it trimmed.
 */
bool heap_bound_trim(void);

#endif
