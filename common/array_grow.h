/* Growing a malloc'd array geometrically. */
#ifndef LOWPROF_COMMON_ARRAY_GROW_H
#define LOWPROF_COMMON_ARRAY_GROW_H

#include <stddef.h>

/*
 * Make *ptr (of *cap elements of elem bytes) hold at least need elements,
 * doubling from 64. 0, or -ENOMEM (also when the size would overflow);
 * *ptr and *cap are unchanged on failure.
 */
int array_grow(void **ptr, size_t *cap, size_t need, size_t elem);

#endif
