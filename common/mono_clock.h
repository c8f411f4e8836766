/* The monotonic clock every program times itself with. */
#ifndef LOWPROF_COMMON_MONO_CLOCK_H
#define LOWPROF_COMMON_MONO_CLOCK_H

#include <stdint.h>

#ifndef NSEC_PER_MSEC
#define NSEC_PER_MSEC 1000000ULL
#endif
#ifndef NSEC_PER_SEC
#define NSEC_PER_SEC 1000000000ULL
#endif

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t mono_ns(void);
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t mono_ms(void);
/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID: user + system) in
 * nanoseconds; 0 if the clock cannot be read. What a piece of work cost. */
uint64_t thread_cpu_ns(void);

#endif
