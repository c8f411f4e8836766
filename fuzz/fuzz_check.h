/* An invariant check that holds in every build type (assert() is compiled out
 * of RelWithDebInfo): a broken invariant is a finding, so abort. */
#ifndef LOWPROF_FUZZ_CHECK_H
#define LOWPROF_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                                 \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                  \
			abort();                                                         \
		}                                                                        \
	} while (0)

#endif
