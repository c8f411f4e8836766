#include "common/heap_bound.h"

#include <malloc.h>

void heap_bound(void)
{
	/* Failing only on values out of range: these are not. */
	(void)mallopt(M_MMAP_THRESHOLD, HEAP_BOUND_MMAP_THRESHOLD);
	(void)mallopt(M_TRIM_THRESHOLD, HEAP_BOUND_TRIM_THRESHOLD);
}
