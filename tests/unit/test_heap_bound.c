/*
 * heap_bound_trim: free heap below the top is given back to the kernel only
 * when it grew by more than HEAP_BOUND_TRIM_THRESHOLD since the last trim;
 * less stays resident, for the next write to reuse without faulting it in
 * again, and what was given back is not given back again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/heap_bound.h"

#define CHUNK 4096 /* past the tcache and fastbins: freed chunks coalesce */

/* AddressSanitizer brings its own allocator: glibc's heap, which
 * heap_bound_trim reads and trims, is not where malloc(3) goes then. */
#if defined(__SANITIZE_ADDRESS__)
#define MALLOC_REPLACED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MALLOC_REPLACED 1
#endif
#endif

static bool malloc_replaced(void)
{
#ifdef MALLOC_REPLACED
	print_message("skipped: AddressSanitizer replaces glibc's malloc, the heap this trims\n");
	return true;
#else
	return false;
#endif
}

static long resident_kib(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &size, &resident), 2);
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Allocates bytes in CHUNK pieces, touched, then one piece above them that
 * stays (so what is freed is below the top), frees the pieces, and returns
 * the piece that pins the top. */
static void *free_below_top(size_t bytes)
{
	size_t n = bytes / CHUNK;
	void **pieces = calloc(n, sizeof(*pieces));
	void *pin;

	assert_non_null(pieces);
	for (size_t i = 0; i < n; i++) {
		pieces[i] = malloc(CHUNK);
		assert_non_null(pieces[i]);
		memset(pieces[i], 0x5a, CHUNK);
	}
	pin = malloc(CHUNK);
	assert_non_null(pin);
	for (size_t i = 0; i < n; i++)
		free(pieces[i]);
	free(pieces);
	return pin;
}

static void test_small_free_stays(void **state)
{
	void *pin;
	long before, after;

	(void)state;
	if (malloc_replaced())
		skip();
	pin = free_below_top(HEAP_BOUND_TRIM_THRESHOLD / 4);
	before = resident_kib();
	assert_false(heap_bound_trim());
	after = resident_kib();
	/* Nothing given back: the pages are still there for the next use. */
	assert_true(after >= before - 16);
	free(pin);
}

static void test_large_free_given_back(void **state)
{
	void *pin;
	long before, after;

	(void)state;
	if (malloc_replaced())
		skip();
	pin = free_below_top(4 * HEAP_BOUND_TRIM_THRESHOLD);
	before = resident_kib();
	assert_true(heap_bound_trim());
	after = resident_kib();
	/* Most of the 4 MiB freed below the top left the process. */
	assert_true(before - after >= 3 * HEAP_BOUND_TRIM_THRESHOLD / 1024);
	/* Given back once: the same free chunks (their pages gone) are not
	 * trimmed again, and reused and freed again they stay resident. */
	assert_false(heap_bound_trim());
	free(pin);
	pin = free_below_top(HEAP_BOUND_TRIM_THRESHOLD / 2);
	assert_false(heap_bound_trim());
	free(pin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_free_stays),
		cmocka_unit_test(test_large_free_given_back),
	};

	heap_bound();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
