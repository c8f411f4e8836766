#include "common/array_grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int array_grow(void **ptr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem != 0 && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*ptr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*ptr = p;
	*cap = ncap;
	return 0;
}
