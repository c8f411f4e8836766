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
 * the heap's top is trimmed past a quarter MiB.
 */
#ifndef LOWPROF_COMMON_HEAP_BOUND_H
#define LOWPROF_COMMON_HEAP_BOUND_H

#define HEAP_BOUND_MMAP_THRESHOLD (128 * 1024)
#define HEAP_BOUND_TRIM_THRESHOLD (256 * 1024)

/* At a program's start, before anything large is allocated. */
void heap_bound(void);

#endif
