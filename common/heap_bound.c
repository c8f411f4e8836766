#include "common/heap_bound.h"

#include <malloc.h>

void heap_bound(void)
{
	/* Failing only on values out of range: these are not. */
	(void)mallopt(M_MMAP_THRESHOLD, HEAP_BOUND_MMAP_THRESHOLD);
	(void)mallopt(M_TRIM_THRESHOLD, HEAP_BOUND_TRIM_THRESHOLD);
}

/* The heap's free bytes below its top after the last trim, lowered to the
 * least seen since: what malloc_trim gave back stays counted as free (its
 * chunks are still in the bins, only their pages are gone), so it is the
 * growth past this that is resident and worth giving back. */
static size_t heap_bound_trimmed_free;

bool heap_bound_trim(void)
{
	struct mallinfo2 mi = mallinfo2();
	/* fordblks counts the top's free bytes too (keepcost): free(3) trims
	 * the top past the threshold itself. */
	size_t below_top = mi.fordblks - mi.keepcost;

	if (below_top <= heap_bound_trimmed_free + HEAP_BOUND_TRIM_THRESHOLD) {
		if (below_top < heap_bound_trimmed_free)
			heap_bound_trimmed_free = below_top;
		return false;
	}
	malloc_trim(0);
	heap_bound_trimmed_free = below_top;
	return true;
}
