/* The profile model: aggregation, table deduplication, totals, top functions. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "exporter/profile/profile.h"

static struct frame uf(const char *fn, const char *mod, uint64_t map_start, uint64_t off)
{
	struct frame f = {
		.function = fn, .module = mod, .build_id = "abc123",
		.address = map_start + off, .module_offset = off,
		.map_start = map_start, .map_end = map_start + 0x100000, .symbolized = true,
	};
	return f;
}

static struct frame kf(const char *fn, uint64_t addr)
{
	struct frame f = {
		.function = fn, .module = "[kernel.kallsyms]", .address = addr,
		.module_offset = addr - 0xffffffff81000000ULL, .kernel = true, .symbolized = true,
	};
	return f;
}

static void test_aggregation(void **state)
{
	struct profile *p = profile_new();
	struct frame st[] = { kf("do_syscall_64", 0xffffffff81001000ULL),
			      uf("write", "/lib/libc.so.6", 0x7f0000000000ULL, 0x1000),
			      uf("main", "/usr/bin/app", 0x400000, 0x2000) };
	struct profile_totals t;
	const struct profile_stack *s;

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile_add_sample(p, 10, 10, "app", st, 3, false, 1, 100), 0);
	assert_int_equal(profile_add_sample(p, 10, 10, "app", st, 3, false, 2, 200), 0);
	assert_int_equal(profile_stack_count(p), 1);
	s = profile_stack_at(p, 0);
	assert_int_equal(s->count, 3);
	assert_int_equal(s->cpu_ns, 300);
	assert_int_equal(s->tid, 10);
	/* Another thread of the same process merges; the tid becomes unknown. */
	assert_int_equal(profile_add_sample(p, 10, 11, "app", st, 3, false, 1, 100), 0);
	assert_int_equal(profile_stack_count(p), 1);
	assert_int_equal(profile_stack_at(p, 0)->tid, 0);
	/* Another pid, another comm, a truncated copy, a shorter stack: all distinct. */
	assert_int_equal(profile_add_sample(p, 11, 11, "app", st, 3, false, 1, 100), 0);
	assert_int_equal(profile_add_sample(p, 10, 10, "app2", st, 3, false, 1, 100), 0);
	assert_int_equal(profile_add_sample(p, 10, 10, "app", st, 3, true, 1, 100), 0);
	assert_int_equal(profile_add_sample(p, 10, 10, "app", st, 2, false, 1, 100), 0);
	assert_int_equal(profile_stack_count(p), 5);
	assert_true(profile_stack_at(p, 3)->truncated);
	assert_false(profile_stack_at(p, 0)->truncated);

	profile_get_totals(p, &t);
	assert_int_equal(t.samples, 8);
	assert_int_equal(t.cpu_ns, 800);
	assert_int_equal(t.stacks, 5);
	assert_int_equal(t.pids, 2);
	assert_true(t.memory_bytes > 0);
	assert_int_equal(profile_period_ns(p), 100);
	profile_set_period(p, 52631578);
	assert_int_equal(profile_period_ns(p), 52631578);

	/* Bad arguments. */
	assert_int_equal(profile_add_sample(p, 1, 1, "x", st, 3, false, 0, 0), -EINVAL);
	assert_int_equal(profile_add_sample(p, 1, 1, "x", NULL, 3, false, 1, 0), -EINVAL);
	profile_free(p);
}

static void test_dedup(void **state)
{
	struct profile *p = profile_new();
	/* Two processes map libc at different addresses: same (mapping, offset). */
	struct frame a[] = { uf("memcpy", "/lib/libc.so.6", 0x7f0000000000ULL, 0x1500),
			     uf("main", "/usr/bin/app", 0x400000, 0x2000) };
	struct frame b[] = { uf("memcpy", "/lib/libc.so.6", 0x7f1111110000ULL, 0x1500),
			     uf("run", "/usr/bin/other", 0x400000, 0x3000) };
	/* Kernel frames, one in a module: all share the one kernel mapping. */
	struct frame k[] = { kf("schedule", 0xffffffff81002000ULL), kf("schedule", 0xffffffff81002000ULL),
			     { .function = "nft_do_chain", .module = "nf_tables",
			       .address = 0xffffffffc0001000ULL, .kernel = true },
			     { .function = "[unknown]", .module = NULL, .address = 0x1234 } };
	const struct profile_location *l0, *l2;
	const struct profile_mapping *m;
	uint32_t idx, i;

	(void)state;
	assert_int_equal(profile_add_sample(p, 1, 1, "app", a, 2, false, 1, 1), 0);
	assert_int_equal(profile_add_sample(p, 2, 2, "other", b, 2, false, 1, 1), 0);
	assert_int_equal(profile_add_sample(p, 3, 3, "k", k, 4, false, 1, 1), 0);
	assert_int_equal(profile_stack_count(p), 3);
	/* memcpy, main, run, schedule, nft_do_chain, [unknown] */
	assert_int_equal(profile_function_count(p), 6);
	/* libc, app, other, kernel */
	assert_int_equal(profile_mapping_count(p), 4);
	/* memcpy(1, shared), main, run, schedule(1, same address), nft, unknown */
	assert_int_equal(profile_location_count(p), 6);
	l0 = profile_location_at(p, profile_stack_locations(p, profile_stack_at(p, 0))[0]);
	l2 = profile_location_at(p, profile_stack_locations(p, profile_stack_at(p, 1))[0]);
	assert_ptr_equal(l0, l2);
	/* Both kernel locations point at the one [kernel.kallsyms] mapping. */
	for (i = 0; i < 3; i++) {
		const uint32_t *locs = profile_stack_locations(p, profile_stack_at(p, 2));

		m = profile_mapping_at(p, profile_location_at(p, locs[i])->mapping);
		assert_non_null(m);
		assert_true(m->kernel);
		assert_string_equal(profile_string(p, m->filename), PROFILE_KERNEL_MAPPING_NAME);
	}
	assert_int_equal(profile_location_at(p, profile_stack_locations(p, profile_stack_at(p, 2))[3])->mapping,
			 PROFILE_NO_MAPPING);
	m = profile_mapping_at(p, l0->mapping);
	assert_string_equal(profile_string(p, m->build_id), "abc123");
	assert_int_equal(m->memory_start, 0x7f0000000000ULL); /* first seen */
	/* Strings are interned once; index 0 is "". */
	assert_string_equal(profile_string(p, 0), "");
	assert_true(profile_string_lookup(p, "memcpy", &idx));
	assert_string_equal(profile_string(p, idx), "memcpy");
	assert_false(profile_string_lookup(p, "nope", &idx));
	{
		size_t n = profile_string_count(p), j, hits = 0;

		for (j = 0; j < n; j++)
			hits += strcmp(profile_string(p, (uint32_t)j), "/lib/libc.so.6") == 0;
		assert_int_equal(hits, 1);
	}
	profile_free(p);
}

static void test_order_and_top(void **state)
{
	struct profile *p = profile_new();
	struct frame s1[] = { uf("leaf_a", "/bin/x", 0x400000, 1), uf("mid", "/bin/x", 0x400000, 2),
			      uf("main", "/bin/x", 0x400000, 3) };
	struct frame s2[] = { uf("leaf_b", "/bin/x", 0x400000, 4), uf("main", "/bin/x", 0x400000, 3) };
	struct profile_top_entry top[5];
	const struct profile_stack *s;
	size_t n;

	(void)state;
	assert_int_equal(profile_add_sample(p, 1, 1, "x", s1, 3, false, 6, 6), 0);
	assert_int_equal(profile_add_sample(p, 1, 1, "x", s2, 2, false, 3, 3), 0);
	assert_int_equal(profile_add_sample(p, 2, 2, "y", s2, 2, false, 1, 1), 0);
	s = profile_stack_at(p, 0);
	assert_string_equal(profile_string(p, profile_stack_function(p, s, 0, PROFILE_ROOT_FIRST)->name), "main");
	assert_string_equal(profile_string(p, profile_stack_function(p, s, 0, PROFILE_LEAF_FIRST)->name), "leaf_a");
	assert_string_equal(profile_string(p, profile_stack_function(p, s, 1, PROFILE_ROOT_FIRST)->name), "mid");

	n = profile_top_functions(p, 5, top);
	assert_int_equal(n, 2); /* main and mid are never a leaf */
	assert_string_equal(top[0].name, "leaf_a");
	assert_int_equal(top[0].self_samples, 6);
	assert_true(top[0].self_pct > 59.99 && top[0].self_pct < 60.01);
	assert_string_equal(top[1].name, "leaf_b");
	assert_int_equal(top[1].self_samples, 4);
	assert_true(top[1].self_pct > 39.99 && top[1].self_pct < 40.01);
	assert_string_equal(top[1].module, "/bin/x");
	assert_int_equal(profile_top_functions(p, 1, top), 1);
	profile_free(p);
}

static void test_limits(void **state)
{
	struct profile *p = profile_new();
	struct frame a = uf("a", "/bin/x", 0x400000, 1), b = uf("b", "/bin/x", 0x400000, 2);
	struct frame deep[PROFILE_MAX_FRAMES + 5];
	struct profile_totals t;
	size_t i;

	(void)state;
	profile_set_max_stacks(p, 1);
	assert_int_equal(profile_add_sample(p, 1, 1, "x", &a, 1, false, 1, 10), 0);
	/* Past the cap: the new stack folds into the process's "[other stacks]". */
	assert_int_equal(profile_add_sample(p, 1, 1, "x", &b, 1, false, 2, 20), 0);
	assert_int_equal(profile_add_sample(p, 1, 1, "x", &a, 1, false, 1, 10), 0);
	profile_get_totals(p, &t);
	assert_int_equal(t.stacks, 2);
	assert_int_equal(t.samples, 4);
	assert_int_equal(t.folded_samples, 2);
	assert_int_equal(t.dropped_samples, 0);
	assert_string_equal(profile_string(p, profile_stack_function(p, profile_stack_at(p, 1), 0,
								     PROFILE_LEAF_FIRST)->name),
			    PROFILE_OTHER_STACKS_NAME);
	/* Another stack of the same process folds into the same one. */
	assert_int_equal(profile_add_sample(p, 1, 2, "x", &deep[0], 0, false, 1, 10), 0);
	profile_get_totals(p, &t);
	assert_int_equal(t.stacks, 2);
	assert_int_equal(t.folded_samples, 3);
	/* The fold room (PROFILE_FOLD_ROOM(1) = 1 stack) is full: a second process's
	 * new stack is dropped and counted. */
	assert_int_equal(profile_add_sample(p, 2, 2, "y", &b, 1, false, 2, 20), -ENOSPC);
	profile_get_totals(p, &t);
	assert_int_equal(t.stacks, 2);
	assert_int_equal(t.samples, 5);
	assert_int_equal(t.dropped_samples, 2);
	assert_int_equal(t.dropped_cpu_ns, 20);
	profile_free(p);

	/* Deeper than PROFILE_MAX_FRAMES: the leaf side is kept, marked truncated. */
	p = profile_new();
	for (i = 0; i < PROFILE_MAX_FRAMES + 5; i++)
		deep[i] = uf(i == 0 ? "leaf" : "f", "/bin/x", 0x400000, i);
	assert_int_equal(profile_add_sample(p, 1, 1, "x", deep, PROFILE_MAX_FRAMES + 5, false, 1, 1), 0);
	assert_int_equal(profile_stack_at(p, 0)->nlocations, PROFILE_MAX_FRAMES);
	assert_true(profile_stack_at(p, 0)->truncated);
	assert_string_equal(profile_string(p, profile_stack_function(p, profile_stack_at(p, 0), 0,
								     PROFILE_LEAF_FIRST)->name), "leaf");
	/* A stack without frames is still a stack. */
	assert_int_equal(profile_add_sample(p, 1, 1, "x", NULL, 0, false, 1, 1), 0);
	assert_int_equal(profile_stack_count(p), 2);
	profile_free(p);
}

static double test_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_many_stacks(void **state)
{
	struct profile *p = profile_new();
	char names[64][16];
	struct frame st[12];
	struct profile_totals t;
	double t0, elapsed;
	size_t i, k;

	(void)state;
	for (i = 0; i < 64; i++)
		snprintf(names[i], sizeof(names[i]), "fn_%zu", i);
	t0 = test_now();
	for (i = 0; i < 200000; i++) {
		/* 200k distinct stacks over a realistic number of functions. */
		for (k = 0; k < 12; k++) {
			size_t v = (i >> (k * 2)) & 63;

			st[k] = uf(names[(v + k) & 63], k < 6 ? "/lib/libc.so.6" : "/usr/bin/app",
				   0x400000, 0x100 * ((v + k) & 63) + (k < 6 ? 0 : 0x10000));
		}
		st[0].module_offset = 0x100000 + i; /* a distinct leaf address per stack */
		assert_int_equal(profile_add_sample(p, (uint32_t)(i % 500) + 1, 1, "load", st, 12,
						    false, 1, 1000), 0);
	}
	/* And once more: every one aggregates. */
	for (i = 0; i < 200000; i += 1000) {
		for (k = 0; k < 12; k++) {
			size_t v = (i >> (k * 2)) & 63;

			st[k] = uf(names[(v + k) & 63], k < 6 ? "/lib/libc.so.6" : "/usr/bin/app",
				   0x400000, 0x100 * ((v + k) & 63) + (k < 6 ? 0 : 0x10000));
		}
		st[0].module_offset = 0x100000 + i;
		assert_int_equal(profile_add_sample(p, (uint32_t)(i % 500) + 1, 1, "load", st, 12,
						    false, 1, 1000), 0);
	}
	elapsed = test_now() - t0;
	profile_get_totals(p, &t);
	printf("# 200k stacks: %.3f s, %zu bytes (%.1f bytes/stack), %zu locations\n", elapsed,
	       t.memory_bytes, (double)t.memory_bytes / (double)t.stacks, t.locations);
	assert_int_equal(t.stacks, 200000);
	assert_int_equal(t.samples, 200200);
	assert_int_equal(t.pids, 500);
	assert_true(t.functions <= 128); /* 64 names x 2 modules at most */
	/* Linear scans would take minutes here; hash tables take well under a
	 * second (a few under the sanitizers' slowdown, on a loaded machine). */
#ifdef LOWPROF_SANITIZE
	assert_true(elapsed < 60.0);
#else
	assert_true(elapsed < 10.0);
#endif
	profile_free(p);
}

/* Merging profiles in order gives what adding every sample to one profile gives. */
static void test_merge(void **state)
{
	struct frame st[] = { kf("do_syscall_64", 0xffffffff81001000ULL),
			      uf("write", "/lib/libc.so.6", 0x7f0000000000ULL, 0x1000),
			      uf("main", "/usr/bin/app", 0x400000, 0x2000) };
	struct frame o[] = { uf("other", "/usr/bin/app", 0x400000, 0x3000),
			     uf("main", "/usr/bin/app", 0x400000, 0x2000) };
	struct profile *a = profile_new(), *b = profile_new(), *all = profile_new();
	struct profile *m = profile_new();
	struct profile_totals ta, tm;
	size_t i, j;

	(void)state;
	assert_int_equal(profile_add_sample(a, 1, 1, "app", st, 3, false, 1, 10), 0);
	assert_int_equal(profile_add_sample(all, 1, 1, "app", st, 3, false, 1, 10), 0);
	assert_int_equal(profile_add_sample(b, 2, 2, "two", o, 2, false, 3, 30), 0);
	assert_int_equal(profile_add_sample(all, 2, 2, "two", o, 2, false, 3, 30), 0);
	assert_int_equal(profile_add_sample(b, 1, 5, "app", st, 3, false, 1, 10), 0);
	assert_int_equal(profile_add_sample(all, 1, 5, "app", st, 3, false, 1, 10), 0);
	assert_int_equal(profile_merge(m, a), 0);
	assert_int_equal(profile_merge(m, b), 0);
	profile_get_totals(all, &ta);
	profile_get_totals(m, &tm);
	assert_int_equal(tm.samples, ta.samples);
	assert_int_equal(tm.stacks, ta.stacks);
	assert_int_equal(tm.strings, ta.strings);
	assert_int_equal(tm.locations, ta.locations);
	assert_int_equal(tm.mappings, ta.mappings);
	for (i = 0; i < ta.strings; i++)
		assert_string_equal(profile_string(m, (uint32_t)i), profile_string(all, (uint32_t)i));
	for (i = 0; i < ta.stacks; i++) {
		const struct profile_stack *x = profile_stack_at(all, i), *y = profile_stack_at(m, i);

		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->nlocations, y->nlocations);
		for (j = 0; j < x->nlocations; j++) {
			const struct profile_location *lx, *ly;

			lx = profile_location_at(all, profile_stack_locations(all, x)[j]);
			ly = profile_location_at(m, profile_stack_locations(m, y)[j]);
			assert_int_equal(lx->mapping, ly->mapping);
			assert_int_equal(lx->function, ly->function);
			assert_int_equal(lx->address, ly->address);
			assert_int_equal(lx->module_offset, ly->module_offset);
		}
	}
	assert_int_equal(profile_merge(m, m), -EINVAL);
	profile_free(a);
	profile_free(b);
	profile_free(all);
	profile_free(m);
}

static void test_utf8(void **state)
{
	(void)state;
	assert_int_equal(profile_utf8_len((const unsigned char *)"a", 1), 1);
	assert_int_equal(profile_utf8_len((const unsigned char *)"\xc3\xa9", 2), 2);
	assert_int_equal(profile_utf8_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
	assert_int_equal(profile_utf8_len((const unsigned char *)"\xf0\x9f\x94\xa5", 4), 4);
	assert_int_equal(profile_utf8_len((const unsigned char *)"\xc0\xaf", 2), 0);      /* overlong */
	assert_int_equal(profile_utf8_len((const unsigned char *)"\xed\xa0\x80", 3), 0);  /* surrogate */
	assert_int_equal(profile_utf8_len((const unsigned char *)"\xe2\x82", 2), 0);      /* cut short */
	assert_int_equal(profile_utf8_len((const unsigned char *)"\xff", 1), 0);
	assert_int_equal(profile_utf8_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
}

/* The leaf function's name of stack i. */
static const char *leaf_name(const struct profile *p, size_t i)
{
	const struct profile_location *l =
		profile_location_at(p, profile_stack_locations(p, profile_stack_at(p, i))[0]);

	return profile_string(p, profile_function_at(p, l->function)->name);
}

/*
 * Frames under a strings epoch (profile_add_sample_epoch): a known frame
 * finds its location by its strings' addresses; the same buffers rewritten
 * are taken for their new content once the epoch changes, and whenever an
 * add gives no epoch, or found the entry without one.
 */
static void test_strings_epoch(void **state)
{
	struct profile *p = profile_new();
	char name[32], mod[32];
	struct frame f;

	(void)state;
	strcpy(name, "alpha");
	strcpy(mod, "/lib/a.so");
	f = uf(name, mod, 0x7f0000000000ULL, 0x1000);
	assert_int_equal(profile_add_sample_epoch(p, 7, 1, 1, "app", &f, 1, false, 1, 1), 0);
	assert_int_equal(profile_add_sample_epoch(p, 7, 1, 1, "app", &f, 1, false, 1, 1), 0);
	assert_int_equal(profile_stack_count(p), 1);
	assert_int_equal(profile_stack_at(p, 0)->count, 2);

	/* Under one epoch an address is its content: the buffer rewritten
	 * without a new epoch (what the promise rules out) still gets alpha's
	 * location, which shows that no bytes were compared. */
	strcpy(name, "omega");
	assert_int_equal(profile_add_sample_epoch(p, 7, 1, 1, "app", &f, 1, false, 1, 1), 0);
	assert_int_equal(profile_stack_count(p), 1);

	/* A new epoch: the same address may hold another string now. */
	strcpy(name, "beta");
	assert_int_equal(profile_add_sample_epoch(p, 8, 1, 1, "app", &f, 1, false, 1, 1), 0);
	assert_int_equal(profile_stack_count(p), 2);
	assert_string_equal(leaf_name(p, 1), "beta");
	assert_string_equal(leaf_name(p, 0), "alpha");

	/* No epoch: the bytes are compared. */
	strcpy(name, "gamma");
	assert_int_equal(profile_add_sample(p, 1, 1, "app", &f, 1, false, 1, 1), 0);
	assert_int_equal(profile_stack_count(p), 3);
	assert_string_equal(leaf_name(p, 2), "gamma");

	/* gamma's entry was made without an epoch: an add under epoch 8 checks
	 * its bytes before trusting it (delta is not gamma). */
	strcpy(name, "delta");
	assert_int_equal(profile_add_sample_epoch(p, 8, 1, 1, "app", &f, 1, false, 1, 1), 0);
	assert_int_equal(profile_stack_count(p), 4);
	assert_string_equal(leaf_name(p, 3), "delta");
	/* ... and, checked, trusts it from then on under that epoch. */
	assert_int_equal(profile_add_sample_epoch(p, 8, 1, 1, "app", &f, 1, false, 1, 1), 0);
	assert_int_equal(profile_stack_count(p), 4);
	assert_int_equal(profile_stack_at(p, 3)->count, 2);

	/* The module's bytes count too: another file under a new epoch. */
	strcpy(mod, "/lib/b.so");
	assert_int_equal(profile_add_sample_epoch(p, 9, 1, 1, "app", &f, 1, false, 1, 1), 0);
	assert_int_equal(profile_stack_count(p), 5);
	assert_int_equal(profile_mapping_count(p), 2);
	profile_free(p);
}

/* The name of stack idx's frame i, leaf first. */
static const char *frame_name(const struct profile *p, size_t idx, uint32_t i)
{
	const struct profile_stack *s = profile_stack_at(p, idx);

	return profile_string(p, profile_stack_function(p, s, i, PROFILE_LEAF_FIRST)->name);
}

/* A stack's locations kept beside its frames (a stack cache entry's memo):
 * the next sample into the same profile is added by them, frames unread; a
 * memo of another profile is never used, but written over. */
static void test_locs_memo(void **state)
{
	struct frame st[] = { kf("do_syscall_64", 0xffffffff81001000ULL),
			      uf("write", "/lib/libc.so.6", 0x7f0000000000ULL, 0x1000),
			      uf("main", "/usr/bin/app", 0x400000, 0x2000) };
	struct frame other[] = { uf("leaf", "/usr/bin/app", 0x400000, 0x3000),
				 uf("caller", "/usr/bin/app", 0x400000, 0x4000),
				 uf("main", "/usr/bin/app", 0x400000, 0x2000) };
	struct profile *p = profile_new(), *q = profile_new();
	uint64_t owner = 0;
	uint32_t stack = 0, locs[3];
	struct profile_stack_memo memo = { &owner, &stack, locs };

	(void)state;
	assert_non_null(p);
	assert_non_null(q);
	/* The first add finds the locations frame by frame and keeps them. */
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 10, "app", st, 3, false, 1, 100),
			 0);
	assert_int_not_equal(owner, 0);
	assert_int_equal(profile_stack_count(p), 1);
	assert_memory_equal(locs, profile_stack_locations(p, profile_stack_at(p, 0)),
			    sizeof(locs));
	/* The next one is added by the memo: other frames passed with it are
	 * not read (only a caller whose frames stay as they are keeps a memo). */
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 10, "app", other, 3, false, 2,
						 200), 0);
	assert_int_equal(profile_stack_count(p), 1);
	assert_int_equal(profile_stack_at(p, 0)->count, 3);
	assert_int_equal(profile_stack_at(p, 0)->cpu_ns, 300);
	/* pid, comm and the truncated flag still tell stacks apart. */
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 11, 11, "app", st, 3, true, 1, 100),
			 0);
	assert_int_equal(profile_stack_count(p), 2);
	assert_string_equal(frame_name(p, 1, 0), "do_syscall_64");
	assert_string_equal(frame_name(p, 1, 2), "main");
	/* Another profile (ids are never shared) goes by the frames and takes
	 * the memo over: p's memo no longer holds, p goes by frames as well. */
	assert_int_equal(profile_add_sample_memo(q, 0, &memo, 10, 10, "app", other, 3, false, 1,
						 100), 0);
	assert_string_equal(frame_name(q, 0, 0), "leaf");
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 10, "app", other, 3, false, 1,
						 100), 0);
	assert_int_equal(profile_stack_count(p), 3);
	assert_string_equal(frame_name(p, 2, 0), "leaf");
	assert_string_equal(frame_name(p, 2, 1), "caller");
	profile_free(q);
	/* A profile made after q is freed (maybe at q's address) is not q. */
	q = profile_new();
	assert_non_null(q);
	assert_int_equal(profile_add_sample_memo(q, 0, &memo, 10, 10, "app", st, 3, false, 1, 100),
			 0);
	assert_string_equal(frame_name(q, 0, 0), "do_syscall_64");
	profile_free(q);
	profile_free(p);
}

/* The memo's stack: a sample of the same pid, comm and truncation goes to
 * it directly; any other (the cache is shared across pids), or a memo that
 * names another stack, finds its own stack as without it, and the memo
 * follows. */
static uint64_t samples_of(const struct profile *p)
{
	struct profile_totals t;

	profile_get_totals(p, &t);
	return t.samples;
}

static void test_stack_memo(void **state)
{
	struct frame st[] = { uf("leaf", "/usr/bin/app", 0x400000, 0x3000),
			      uf("main", "/usr/bin/app", 0x400000, 0x2000) };
	struct frame one[] = { uf("main", "/usr/bin/app", 0x400000, 0x2000) };
	struct profile *p = profile_new();
	uint64_t owner = 0, owner1 = 0;
	uint32_t stack = 0, stack1 = 0, locs[2], locs1[1];
	struct profile_stack_memo memo = { &owner, &stack, locs };
	struct profile_stack_memo memo1 = { &owner1, &stack1, locs1 };

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 10, "app", st, 2, false, 1, 100),
			 0);
	assert_int_equal(stack, 0); /* added by frames: no stack kept yet */
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 10, "app", st, 2, false, 1, 100),
			 0);
	assert_int_equal(stack, 1);
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 12, "app", st, 2, false, 1, 100),
			 0);
	assert_int_equal(profile_stack_count(p), 1);
	assert_int_equal(profile_stack_at(p, 0)->count, 3);
	assert_int_equal(profile_stack_at(p, 0)->tid, 0); /* two threads */
	assert_int_equal(samples_of(p), 3);
	/* Another pid of the same binaries: its own stack, the memo follows it. */
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 20, 20, "app", st, 2, false, 1, 100),
			 0);
	assert_int_equal(profile_stack_count(p), 2);
	assert_int_equal(stack, 2);
	assert_int_equal(profile_stack_at(p, 1)->pid, 20);
	/* Back to pid 10: its stack again, not pid 20's. */
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 10, "app", st, 2, false, 1, 100),
			 0);
	assert_int_equal(profile_stack_count(p), 2);
	assert_int_equal(profile_stack_at(p, 0)->count, 4);
	assert_int_equal(profile_stack_at(p, 1)->count, 1);
	assert_int_equal(stack, 1);
	/* A new comm for the pid (prctl), and the truncated flag: new stacks. */
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 10, "worker", st, 2, false, 1,
						 100), 0);
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 10, "worker", st, 2, true, 1, 100),
			 0);
	assert_int_equal(profile_stack_count(p), 4);
	assert_int_equal(profile_stack_at(p, 0)->count, 4);
	/* A memo naming a stack of the same pid and comm but other frames (one
	 * frame, as a stack folded past the cap has), or no stack at all, is
	 * not followed. */
	assert_int_equal(profile_add_sample_memo(p, 0, &memo1, 10, 10, "app", one, 1, false, 1, 100),
			 0);
	assert_int_equal(profile_stack_count(p), 5);
	stack1 = 1;
	assert_int_equal(profile_add_sample_memo(p, 0, &memo1, 10, 10, "app", one, 1, false, 1, 100),
			 0);
	assert_int_equal(profile_stack_count(p), 5);
	assert_int_equal(profile_stack_at(p, 0)->count, 4);
	assert_int_equal(profile_stack_at(p, 4)->count, 2);
	assert_int_equal(stack1, 5);
	stack = 1000;
	assert_int_equal(profile_add_sample_memo(p, 0, &memo, 10, 10, "app", st, 2, false, 1, 100),
			 0);
	assert_int_equal(profile_stack_at(p, 0)->count, 5);
	assert_int_equal(stack, 1);
	assert_int_equal(samples_of(p), 10);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aggregation),
		cmocka_unit_test(test_dedup),
		cmocka_unit_test(test_order_and_top),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_many_stacks),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_strings_epoch),
		cmocka_unit_test(test_locs_memo),
		cmocka_unit_test(test_stack_memo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
