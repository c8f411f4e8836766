/* stack_cache: hits for the same pid, addresses and generation; misses otherwise; bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "exporter/symbols/stack_cache.h"

static void fill(struct frame *f, size_t n)
{
	static const char *names[] = {"main", "work", "leaf"};
	size_t i;

	memset(f, 0, n * sizeof(*f));
	for (i = 0; i < n; i++) {
		f[i].function = names[i % 3];
		f[i].module = "/bin/app";
		f[i].address = 0x1000 + i;
	}
}

/* The frames of a hit, or NULL. */
static const struct frame *get(struct stack_cache *c, uint32_t pid, const uint64_t *addrs,
			       size_t naddrs, uint64_t gen, size_t *nframes)
{
	struct stack_cache_hit hit;

	if (!stack_cache_lookup(c, pid, addrs, naddrs, gen, &hit))
		return NULL;
	*nframes = hit.nframes;
	return hit.frames;
}

static void test_hit_and_misses(void **state)
{
	struct stack_cache *c = stack_cache_new(16);
	uint64_t key[] = {1, 0xffffffff81000000ULL, 0x401000, 0x402000};
	uint64_t other[] = {1, 0xffffffff81000000ULL, 0x401000, 0x402008};
	struct frame in[3];
	const struct frame *out;
	struct stack_cache_stats st;
	size_t n = 0;

	(void)state;
	assert_non_null(c);
	fill(in, 3);
	assert_null(get(c, 42, key, 4, 7, &n));
	assert_int_equal(stack_cache_put(c, 42, key, 4, 7, in, 3), 0);
	out = get(c, 42, key, 4, 7, &n);
	assert_non_null(out);
	assert_int_equal(n, 3);
	assert_memory_equal(in, out, sizeof(in));
	/* Another generation (the pid's maps changed), pid, address or length: a miss. */
	assert_null(get(c, 42, key, 4, 8, &n));
	assert_null(get(c, 43, key, 4, 7, &n));
	assert_null(get(c, 42, other, 4, 7, &n));
	assert_null(get(c, 42, key, 3, 7, &n));
	/* Generation 0 is "not settled": never stored, never matched. */
	assert_int_equal(stack_cache_put(c, 42, other, 4, 0, in, 3), 0);
	assert_null(get(c, 42, other, 4, 0, &n));
	stack_cache_stats(c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.stores, 1);
	assert_true(st.bytes > 0);
	stack_cache_free(c);
}

/* A full cache replaces slots: its memory stays bounded by the slot count. */
static void test_bounded(void **state)
{
	struct stack_cache *c = stack_cache_new(4);
	struct stack_cache_stats st;
	struct frame in[3];
	uint64_t key[2];
	size_t one, i;

	(void)state;
	fill(in, 3);
	key[0] = 0;
	key[1] = 0;
	assert_int_equal(stack_cache_put(c, 1, key, 2, 1, in, 3), 0);
	stack_cache_stats(c, &st);
	one = st.bytes;
	for (i = 0; i < 1000; i++) {
		key[1] = i;
		assert_int_equal(stack_cache_put(c, 1, key, 2, 1, in, 3), 0);
	}
	stack_cache_stats(c, &st);
	assert_true(st.bytes <= 4 * one);
	stack_cache_free(c);
}

/* An entry's memos: empty when stored, kept across hits (they are the
 * entry's, each with room for its frames, apart from each other), gone with
 * the entry. */
static void test_locs_memo(void **state)
{
	struct stack_cache *c = stack_cache_new(16);
	uint64_t key[] = {1, 0x401000, 0x402000};
	struct stack_cache_hit hit;
	struct frame in[3];
	uint32_t m;

	(void)state;
	assert_non_null(c);
	fill(in, 3);
	assert_false(stack_cache_lookup(c, 7, key, 3, 1, &hit));
	assert_int_equal(stack_cache_put(c, 7, key, 3, 1, in, 3), 0);
	assert_true(stack_cache_lookup(c, 7, key, 3, 1, &hit));
	assert_int_equal(hit.nframes, 3);
	assert_memory_equal(hit.frames, in, sizeof(in));
	for (m = 0; m < STACK_CACHE_MEMOS; m++) {
		assert_int_equal(*hit.memo[m].owner, 0);
		assert_int_equal(*hit.memo[m].stack, 0);
		*hit.memo[m].owner = 42 + m;
		*hit.memo[m].stack = 3 + m;
		hit.memo[m].locs[0] = 5 + m;
		hit.memo[m].locs[2] = 9 + m;
	}
	assert_true(stack_cache_lookup(c, 7, key, 3, 1, &hit));
	for (m = 0; m < STACK_CACHE_MEMOS; m++) {
		assert_int_equal(*hit.memo[m].owner, 42 + m);
		assert_int_equal(*hit.memo[m].stack, 3 + m);
		assert_int_equal(hit.memo[m].locs[0], 5 + m);
		assert_int_equal(hit.memo[m].locs[2], 9 + m);
	}
	/* Stored again (new frames for the key): a new entry, empty memos. */
	assert_int_equal(stack_cache_put(c, 7, key, 3, 1, in, 3), 0);
	assert_true(stack_cache_lookup(c, 7, key, 3, 1, &hit));
	for (m = 0; m < STACK_CACHE_MEMOS; m++) {
		assert_int_equal(*hit.memo[m].owner, 0);
		assert_int_equal(*hit.memo[m].stack, 0);
	}
	stack_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit_and_misses),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_locs_memo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
