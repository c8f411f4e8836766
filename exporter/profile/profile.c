/*
 * The profile model: interned tables behind open-addressing hash indexes.
 * A host profile has 100k+ distinct stacks, so nothing here scans a table.
 */
#include "exporter/profile/profile.h"
#include "exporter/profile/profile_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array_grow.h"
#include "common/hash.h"

/* Which table a lookup key belongs to; the eq callback reads it. */
struct profile_key {
	const struct profile *p;
	const struct profile_mapping *mapping;
	const struct profile_function *function;
	const struct profile_location *location;
	const struct profile_stack *stack;
	const uint32_t *locs;
};

typedef bool (*profile_eq_fn)(const struct profile_key *key, uint32_t idx);

static uint64_t profile_mix(uint64_t h, uint64_t v)
{
	/* boost's hash_combine, then splitmix64's finaliser: cheap and well spread. */
	return hash_mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

static int profile_htab_reserve(struct profile_htab *t)
{
	return intern_slots_reserve(&t->slots, &t->cap, t->len);
}

/* The slot holding a match, or the empty slot where it belongs (cap must be > 0). */
static struct intern_slot *profile_htab_find(const struct profile_htab *t, uint32_t hash,
					      profile_eq_fn eq, const struct profile_key *key)
{
	size_t j = hash & (t->cap - 1);

	for (;;) {
		struct intern_slot *s = &t->slots[j];

		if (s->idx1 == 0)
			return s;
		if (s->hash == hash && eq(key, s->idx1 - 1))
			return s;
		j = (j + 1) & (t->cap - 1);
	}
}

static bool profile_mapping_eq(const struct profile_key *k, uint32_t idx)
{
	const struct profile_mapping *m = &k->p->mappings[idx];

	return m->filename == k->mapping->filename && m->build_id == k->mapping->build_id &&
	       m->kernel == k->mapping->kernel;
}

static bool profile_function_eq(const struct profile_key *k, uint32_t idx)
{
	const struct profile_function *f = &k->p->functions[idx];

	return f->name == k->function->name && f->filename == k->function->filename &&
	       f->kernel == k->function->kernel;
}

/* Locations are keyed by (mapping, module_offset) for user frames in a mapping,
 * by address otherwise; the function is part of the key so one location can
 * never name two functions. */
static bool profile_location_eq(const struct profile_key *k, uint32_t idx)
{
	const struct profile_location *l = &k->p->locations[idx];
	const struct profile_location *w = k->location;

	if (l->kernel != w->kernel || l->mapping != w->mapping || l->function != w->function)
		return false;
	if (!w->kernel && w->mapping != PROFILE_NO_MAPPING)
		return l->module_offset == w->module_offset;
	return l->address == w->address;
}

static bool profile_stack_eq(const struct profile_key *k, uint32_t idx)
{
	const struct profile_stack *s = &k->p->stacks[idx];
	const struct profile_stack *w = k->stack;

	if (s->pid != w->pid || s->comm != w->comm || s->truncated != w->truncated ||
	    s->nlocations != w->nlocations)
		return false;
	if (w->nlocations == 0)
		return true;
	return memcmp(&k->p->pool[s->loc_offset], k->locs,
		      (size_t)w->nlocations * sizeof(uint32_t)) == 0;
}

/*
 * Sets of memos given back by sealed or freed profiles, kept for the next
 * ones: a set (~200 KiB) is over malloc's mmap threshold
 * (common/heap_bound.h), so each new one was a fresh mapping, faulted in page
 * by page and unmapped at the seal, twice an interval (the new interval's
 * profile, the window's merge): two thirds of a small window's merge and
 * pprof write (lowprof-write-cost on tmpfs). Clearing a kept one is a
 * memset. Two are kept: those two.
 */
#define PROFILE_MEMO_SPARES 2
static struct profile_memo *profile_memo_spares[PROFILE_MEMO_SPARES];

/* The memos, allocated at the first add after creation or profile_seal(). */
static struct profile_memo *profile_memo(struct profile *p)
{
	unsigned i;

	for (i = 0; p->memo == NULL && i < PROFILE_MEMO_SPARES; i++) {
		if (profile_memo_spares[i] != NULL) {
			p->memo = profile_memo_spares[i];
			profile_memo_spares[i] = NULL;
			memset(p->memo, 0, sizeof(*p->memo));
		}
	}
	if (p->memo == NULL)
		p->memo = calloc(1, sizeof(*p->memo));
	return p->memo;
}

static void profile_memo_release(struct profile *p)
{
	unsigned i;

	for (i = 0; p->memo != NULL && i < PROFILE_MEMO_SPARES; i++) {
		if (profile_memo_spares[i] == NULL) {
			profile_memo_spares[i] = p->memo;
			p->memo = NULL;
		}
	}
	free(p->memo);
	p->memo = NULL;
}

static int profile_intern(struct profile *p, const char *s, uint32_t *out)
{
	struct profile_memo *m = profile_memo(p);
	size_t h = (size_t)hash_mix64((uint64_t)(uintptr_t)s) & (PROFILE_STR_MEMO - 1);
	int err;

	/* The content is checked too: the pointer may be a buffer reused for another string. */
	if (m != NULL && m->str[h].ptr == s && m->str[h].idx < p->strings.n &&
	    strcmp(intern_str(&p->strings, m->str[h].idx), s) == 0) {
		*out = m->str[h].idx;
		return 0;
	}
	err = intern_add(&p->strings, s, strlen(s), out);
	if (err == 0 && m != NULL) {
		m->str[h].ptr = s;
		m->str[h].idx = *out;
	}
	return err;
}

static int profile_intern_opt(struct profile *p, const char *s, uint32_t *out)
{
	if (s == NULL || s[0] == '\0') {
		*out = 0;
		return 0;
	}
	return profile_intern(p, s, out);
}

/* Insert-or-find shared by the mapping, function and location tables. */
static int profile_table_put(struct profile_htab *t, uint32_t hash, profile_eq_fn eq,
			     const struct profile_key *key, void **arr, size_t *n, size_t *cap,
			     size_t elem, const void *entry, uint32_t *out)
{
	struct intern_slot *slot;
	int err;

	err = profile_htab_reserve(t);
	if (err != 0)
		return err;
	slot = profile_htab_find(t, hash, eq, key);
	if (slot->idx1 != 0) {
		*out = slot->idx1 - 1;
		return 0;
	}
	if (*n >= UINT32_MAX - 1)
		return -ENOMEM;
	err = array_grow(arr, cap, *n + 1, elem);
	if (err != 0)
		return err;
	memcpy((char *)*arr + *n * elem, entry, elem);
	slot->idx1 = (uint32_t)*n + 1;
	slot->hash = hash;
	t->len++;
	*out = (uint32_t)(*n)++;
	return 0;
}

static int profile_put_mapping(struct profile *p, const struct frame *f, uint32_t *out)
{
	struct profile_mapping m = { 0 };
	struct profile_key key = { .p = p, .mapping = &m };
	uint32_t hash;
	int err;

	if (f->kernel) {
		/* All kernel frames share one mapping (pprof and OTLP convention). */
		if (p->kernel_mapping != PROFILE_NO_MAPPING) {
			*out = p->kernel_mapping;
			return 0;
		}
		err = profile_intern(p, PROFILE_KERNEL_MAPPING_NAME, &m.filename);
		m.kernel = true;
	} else {
		err = profile_intern(p, f->module, &m.filename);
		if (err == 0)
			err = profile_intern_opt(p, f->build_id, &m.build_id);
		m.memory_start = f->map_start;
		m.memory_limit = f->map_end;
		m.file_offset = f->map_file_offset;
	}
	if (err != 0)
		return err;
	hash = (uint32_t)profile_mix(profile_mix(m.filename, m.build_id), m.kernel);
	err = profile_table_put(&p->mapping_index, hash, profile_mapping_eq, &key,
				(void **)&p->mappings, &p->nmappings, &p->cap_mappings,
				sizeof(m), &m, out);
	if (err == 0 && f->kernel)
		p->kernel_mapping = *out;
	return err;
}

static uint64_t profile_frame_where(const struct frame *f)
{
	return f->kernel || f->module == NULL ? f->address : f->module_offset;
}

/* NULL without memos (out of memory): every frame is then looked up in full. */
static struct profile_frame_memo *profile_frame_memo_slot(struct profile *p, const struct frame *f)
{
	struct profile_memo *m = profile_memo(p);
	uint64_t h = hash_mix64(profile_frame_where(f) ^ hash_mix64((uint64_t)(uintptr_t)f->function));

	return m != NULL ? &m->frame[h & (PROFILE_FRAME_MEMO - 1)] : NULL;
}

/* The memo's location is f's: same fields, same strings, and the location's own key matches.
 * The strings' bytes are compared unless the entry was made under epoch, the
 * strings epoch f's strings are promised under: then the same address is the
 * same live string, unchanged (profile_add_sample_epoch). */
static bool profile_frame_memo_hit(const struct profile *p, const struct profile_frame_memo *e,
				   const struct frame *f, uint64_t epoch)
{
	const struct profile_location *loc;
	const struct profile_function *fn;
	uint64_t where = profile_frame_where(f);

	if (e->loc1 == 0 || e->loc1 > p->nlocations || e->function != f->function ||
	    e->module != f->module || e->build_id != f->build_id || e->where != where ||
	    e->kernel != f->kernel || e->symbolized != f->symbolized)
		return false;
	loc = &p->locations[e->loc1 - 1];
	if (loc->kernel != f->kernel || loc->function >= p->nfunctions ||
	    (f->kernel || loc->mapping == PROFILE_NO_MAPPING ? loc->address : loc->module_offset) != where)
		return false;
	fn = &p->functions[loc->function];
	if (fn->kernel != f->kernel || fn->symbolized != f->symbolized)
		return false;
	if (epoch != 0 && e->epoch == epoch)
		return true;
	if (strcmp(intern_str(&p->strings, fn->name), f->function != NULL ? f->function : "[unknown]") != 0 ||
	    strcmp(intern_str(&p->strings, fn->filename), f->module != NULL ? f->module : "") != 0)
		return false;
	if (!f->kernel && loc->mapping != PROFILE_NO_MAPPING &&
	    (loc->mapping >= p->nmappings ||
	     strcmp(intern_str(&p->strings, p->mappings[loc->mapping].build_id),
		    f->build_id != NULL ? f->build_id : "") != 0))
		return false;
	return true;
}

static int profile_put_frame_new(struct profile *p, const struct frame *f, uint32_t *out);

/* f's location, through the memo; epoch: the strings epoch f's strings are
 * promised under, 0 none. */
static int profile_put_frame(struct profile *p, const struct frame *f, uint64_t epoch,
			     uint32_t *out)
{
	struct profile_frame_memo *e = profile_frame_memo_slot(p, f);
	int err;

	if (e != NULL && profile_frame_memo_hit(p, e, f, epoch)) {
		/* Checked byte by byte if it had to be: trusted under this epoch now. */
		if (epoch != 0)
			e->epoch = epoch;
		*out = e->loc1 - 1;
		return 0;
	}
	err = profile_put_frame_new(p, f, out);
	if (err == 0 && e != NULL) {
		e->function = f->function;
		e->module = f->module;
		e->build_id = f->build_id;
		e->where = profile_frame_where(f);
		e->kernel = f->kernel;
		e->symbolized = f->symbolized;
		e->epoch = epoch;
		e->loc1 = *out + 1;
	}
	return err;
}

static int profile_put_frame_new(struct profile *p, const struct frame *f, uint32_t *out)
{
	struct profile_function fn = { 0 };
	struct profile_location loc = { 0 };
	struct profile_key key = { .p = p };
	uint32_t hash, func_idx;
	int err;

	err = profile_intern(p, f->function != NULL ? f->function : "[unknown]", &fn.name);
	if (err == 0)
		err = profile_intern_opt(p, f->module, &fn.filename);
	if (err != 0)
		return err;
	fn.system_name = fn.name;
	fn.kernel = f->kernel;
	fn.symbolized = f->symbolized;
	key.function = &fn;
	hash = (uint32_t)profile_mix(profile_mix(fn.name, fn.filename), fn.kernel);
	err = profile_table_put(&p->function_index, hash, profile_function_eq, &key,
				(void **)&p->functions, &p->nfunctions, &p->cap_functions,
				sizeof(fn), &fn, &func_idx);
	if (err != 0)
		return err;

	loc.mapping = PROFILE_NO_MAPPING;
	if (f->kernel || f->module != NULL) {
		err = profile_put_mapping(p, f, &loc.mapping);
		if (err != 0)
			return err;
	}
	loc.function = func_idx;
	loc.address = f->address;
	loc.module_offset = f->module_offset;
	loc.kernel = f->kernel;
	if (!loc.kernel && loc.mapping != PROFILE_NO_MAPPING)
		hash = (uint32_t)profile_mix(profile_mix(loc.mapping, loc.module_offset), func_idx);
	else
		hash = (uint32_t)profile_mix(profile_mix(loc.kernel, loc.address), func_idx);
	key.location = &loc;
	return profile_table_put(&p->location_index, hash, profile_location_eq, &key,
				 (void **)&p->locations, &p->nlocations, &p->cap_locations,
				 sizeof(loc), &loc, out);
}

static int profile_note_pid(struct profile *p, uint32_t pid)
{
	struct profile_htab *t = &p->pid_set;
	struct intern_slot *slot;
	size_t j;
	int err;

	if (pid == PROFILE_PID_GONE)
		return 0; /* no process; and pid + 1 would be the empty slot */
	err = profile_htab_reserve(t);
	if (err != 0)
		return err;
	/* Probe by value: pids are unique keys, no side table needed. */
	j = (size_t)profile_mix(0, pid) & (t->cap - 1);
	for (;;) {
		slot = &t->slots[j];
		if (slot->idx1 == 0 || slot->idx1 == pid + 1)
			break;
		j = (j + 1) & (t->cap - 1);
	}
	if (slot->idx1 == 0) {
		slot->idx1 = pid + 1;
		slot->hash = (uint32_t)profile_mix(0, pid);
		t->len++;
	}
	return 0;
}

bool profile_has_pid(const struct profile *p, uint32_t pid)
{
	const struct profile_htab *t = &p->pid_set;
	size_t j;

	if (t->cap == 0 || pid == PROFILE_PID_GONE)
		return false;
	j = (size_t)profile_mix(0, pid) & (t->cap - 1);
	for (;;) {
		const struct intern_slot *slot = &t->slots[j];

		if (slot->idx1 == 0)
			return false;
		if (slot->idx1 == pid + 1)
			return true;
		j = (j + 1) & (t->cap - 1);
	}
}

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));
	uint32_t empty;

	static uint64_t next_id;

	if (p == NULL)
		return NULL;
	/* The exporter is one thread: no atomics needed. */
	p->id = ++next_id;
	p->kernel_mapping = PROFILE_NO_MAPPING;
	p->other_location = PROFILE_NO_MAPPING;
	/* pprof and OTLP both require string 0 to be "". */
	if (profile_intern(p, "", &empty) != 0) {
		profile_free(p);
		return NULL;
	}
	return p;
}

void profile_free(struct profile *p)
{
	if (p == NULL)
		return;
	intern_free(&p->strings);
	free(p->mappings);
	free(p->mapping_index.slots);
	free(p->functions);
	free(p->function_index.slots);
	free(p->locations);
	free(p->location_index.slots);
	free(p->stacks);
	free(p->stack_index.slots);
	free(p->pool);
	free(p->pid_set.slots);
	free(p->scratch);
	profile_memo_release(p);
	free(p);
}

/* *arr (n used of *cap, elem bytes each) cut to n; unchanged if realloc fails. */
static void profile_shrink(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *q;

	if (*cap <= n)
		return;
	if (n == 0) {
		free(*arr);
		*arr = NULL;
		*cap = 0;
		return;
	}
	q = realloc(*arr, n * elem);
	if (q != NULL) {
		*arr = q;
		*cap = n;
	}
}

void profile_seal(struct profile *p)
{
	if (p == NULL)
		return;
	profile_memo_release(p);
	free(p->scratch);
	p->scratch = NULL;
	p->cap_scratch = 0;
	profile_shrink((void **)&p->mappings, &p->cap_mappings, p->nmappings, sizeof(*p->mappings));
	profile_shrink((void **)&p->functions, &p->cap_functions, p->nfunctions,
		       sizeof(*p->functions));
	profile_shrink((void **)&p->locations, &p->cap_locations, p->nlocations,
		       sizeof(*p->locations));
	profile_shrink((void **)&p->stacks, &p->cap_stacks, p->nstacks, sizeof(*p->stacks));
	profile_shrink((void **)&p->pool, &p->cap_pool, p->npool, sizeof(*p->pool));
}

/* The one location samples past the max-stacks cap fold into (see profile.h). */
static int profile_other_location(struct profile *p, uint32_t *out)
{
	struct frame f = { .function = PROFILE_OTHER_STACKS_NAME };
	int err;

	if (p->other_location != PROFILE_NO_MAPPING) {
		*out = p->other_location;
		return 0;
	}
	err = profile_put_frame(p, &f, 0, out);
	if (err == 0)
		p->other_location = *out;
	return err;
}

/* Samples of a stack already in p. */
static void profile_stack_add_count(struct profile *p, struct profile_stack *s, uint32_t tid,
				    uint64_t count, uint64_t cpu_ns, bool folded)
{
	s->count += count;
	s->cpu_ns += cpu_ns;
	if (s->tid != tid)
		s->tid = 0; /* several threads: the pid label still holds */
	p->samples += count;
	p->cpu_ns += cpu_ns;
	if (folded)
		p->folded_samples += count;
	if (s->pid == PROFILE_PID_GONE)
		p->gone_samples += count;
}

/*
 * Adds count samples of the stack whose location indices (leaf first) are
 * locs[0..n): the common end of profile_add_sample and profile_merge.
 * locs may be p->scratch. *idx (when not NULL): the stack they went to
 * (the process's folded one past the cap), PROFILE_NO_STACK when dropped.
 */
static int profile_add_locs(struct profile *p, uint32_t pid, uint32_t tid, uint32_t comm,
			    const uint32_t *locs, size_t n, bool truncated, uint64_t count,
			    uint64_t cpu_ns, bool folded, uint32_t *idx)
{
	struct profile_stack w = { 0 };
	struct profile_key key = { .p = p, .stack = &w, .locs = locs };
	struct intern_slot *slot;
	uint64_t hash;
	uint32_t other;
	size_t i;
	int err;

	w.pid = pid;
	w.tid = tid;
	w.comm = comm;
	w.truncated = truncated;
	w.nlocations = (uint32_t)n;
	w.count = count;
	w.cpu_ns = cpu_ns;

	/* One multiply a location, one full mix at the end (as the stack cache
	 * hashes): every sample not added through a memo, and every stack of
	 * every merge, comes here. */
	hash = profile_mix(profile_mix(pid, w.comm), ((uint64_t)truncated << 32) | n);
	for (i = 0; i < n; i++)
		hash = (hash ^ locs[i]) * 0x9e3779b97f4a7c15ULL;
	hash = hash_mix64(hash);

	err = profile_htab_reserve(&p->stack_index);
	if (err != 0)
		return err;
	slot = profile_htab_find(&p->stack_index, (uint32_t)hash, profile_stack_eq, &key);
	if (slot->idx1 != 0) {
		if (idx != NULL)
			*idx = slot->idx1 - 1;
		profile_stack_add_count(p, &p->stacks[slot->idx1 - 1], tid, count, cpu_ns, folded);
		return 0;
	}
	if (p->max_stacks != 0 && p->nstacks >= p->max_stacks && !folded) {
		/* Past the cap: the process keeps its samples, under one frame. */
		err = profile_other_location(p, &other);
		if (err != 0)
			return err;
		return profile_add_locs(p, pid, 0, comm, &other, 1, false, count, cpu_ns, true, idx);
	}
	if (idx != NULL)
		*idx = PROFILE_NO_STACK;
	if (p->nstacks >= UINT32_MAX - 1 ||
	    (p->max_stacks != 0 && p->nstacks >= p->max_stacks + PROFILE_FOLD_ROOM(p->max_stacks))) {
		p->dropped_samples += count;
		p->dropped_cpu_ns += cpu_ns;
		return -ENOSPC;
	}
	err = array_grow((void **)&p->pool, &p->cap_pool, p->npool + n, sizeof(uint32_t));
	if (err == 0)
		err = array_grow((void **)&p->stacks, &p->cap_stacks, p->nstacks + 1,
				   sizeof(*p->stacks));
	if (err == 0)
		err = profile_note_pid(p, pid);
	if (err != 0)
		return err;
	if (n > 0)
		memmove(&p->pool[p->npool], locs, n * sizeof(uint32_t));
	w.loc_offset = p->npool;
	p->npool += n;
	p->stacks[p->nstacks] = w;
	if (idx != NULL)
		*idx = (uint32_t)p->nstacks;
	slot->idx1 = (uint32_t)p->nstacks + 1;
	slot->hash = (uint32_t)hash;
	p->stack_index.len++;
	p->nstacks++;
	p->samples += count;
	p->cpu_ns += cpu_ns;
	if (folded)
		p->folded_samples += count;
	if (pid == PROFILE_PID_GONE) {
		p->gone_samples += count;
		p->gone_stacks++;
	}
	return 0;
}

int profile_add_sample(struct profile *p, uint32_t pid, uint32_t tid, const char *comm,
		       const struct frame *frames, size_t nframes, bool truncated,
		       uint64_t count, uint64_t cpu_ns)
{
	return profile_add_sample_epoch(p, 0, pid, tid, comm, frames, nframes, truncated, count,
					cpu_ns);
}

int profile_add_sample_epoch(struct profile *p, uint64_t strings_epoch, uint32_t pid,
			     uint32_t tid, const char *comm, const struct frame *frames,
			     size_t nframes, bool truncated, uint64_t count, uint64_t cpu_ns)
{
	uint32_t comm_idx;
	size_t i;
	int err;

	if (p == NULL || (frames == NULL && nframes > 0) || count == 0)
		return -EINVAL;
	if (nframes > PROFILE_MAX_FRAMES) {
		/* Keep the leaf side; the cut root side is what [truncated] stands for. */
		nframes = PROFILE_MAX_FRAMES;
		truncated = true;
	}
	err = array_grow((void **)&p->scratch, &p->cap_scratch, nframes + 1, sizeof(uint32_t));
	if (err != 0)
		return err;
	err = profile_intern(p, comm != NULL ? comm : "", &comm_idx);
	if (err != 0)
		return err;
	for (i = 0; i < nframes; i++) {
		err = profile_put_frame(p, &frames[i], strings_epoch, &p->scratch[i]);
		if (err != 0)
			return err;
	}
	return profile_add_locs(p, pid, tid, comm_idx, p->scratch, nframes, truncated, count,
				cpu_ns, false, NULL);
}

/* The stack memo says, if it is still the one for pid, comm and truncated. */
static struct profile_stack *profile_memo_stack(struct profile *p,
						const struct profile_stack_memo *memo, uint32_t pid,
						const char *comm, size_t nframes, bool truncated)
{
	struct profile_stack *s;

	if (*memo->stack == 0 || *memo->stack > p->nstacks)
		return NULL;
	s = &p->stacks[*memo->stack - 1];
	/* The locations too: a stack folded past the cap is another stack. */
	if (s->pid != pid || s->truncated != truncated || s->nlocations != nframes ||
	    strcmp(intern_str(&p->strings, s->comm), comm) != 0 ||
	    (nframes > 0 &&
	     memcmp(&p->pool[s->loc_offset], memo->locs, nframes * sizeof(uint32_t)) != 0))
		return NULL;
	return s;
}

int profile_add_sample_memo(struct profile *p, uint64_t strings_epoch,
			    const struct profile_stack_memo *memo, uint32_t pid, uint32_t tid,
			    const char *comm, const struct frame *frames, size_t nframes,
			    bool truncated, uint64_t count, uint64_t cpu_ns)
{
	struct profile_stack *s;
	uint32_t comm_idx, idx;
	int err;

	if (p == NULL || memo == NULL || memo->owner == NULL || memo->stack == NULL ||
	    (nframes > 0 && memo->locs == NULL) || nframes > PROFILE_MAX_FRAMES || count == 0)
		return profile_add_sample_epoch(p, strings_epoch, pid, tid, comm, frames, nframes,
						truncated, count, cpu_ns);
	if (comm == NULL)
		comm = "";
	if (*memo->owner == p->id) {
		s = profile_memo_stack(p, memo, pid, comm, nframes, truncated);
		if (s != NULL) {
			profile_stack_add_count(p, s, tid, count, cpu_ns, false);
			return 0;
		}
		err = profile_intern(p, comm, &comm_idx);
		if (err == 0)
			err = profile_add_locs(p, pid, tid, comm_idx, memo->locs, nframes, truncated,
					       count, cpu_ns, false, &idx);
		*memo->stack = err == 0 && idx != PROFILE_NO_STACK ? idx + 1 : 0;
		return err;
	}
	err = profile_add_sample_epoch(p, strings_epoch, pid, tid, comm, frames, nframes, truncated,
				       count, cpu_ns);
	/* Added (or folded past the cap): the frames' locations are in p->scratch. */
	*memo->stack = 0;
	if (err == 0) {
		if (nframes > 0)
			memcpy(memo->locs, p->scratch, nframes * sizeof(*memo->locs));
		*memo->owner = p->id;
	}
	return err;
}

/* src's location idx as a frame, its strings src's. */
static void profile_location_frame(const struct profile *src, uint32_t idx, struct frame *f)
{
	const struct profile_location *l = &src->locations[idx];
	const struct profile_function *fn = &src->functions[l->function];
	const struct profile_mapping *m =
		l->mapping != PROFILE_NO_MAPPING ? &src->mappings[l->mapping] : NULL;

	memset(f, 0, sizeof(*f));
	f->function = intern_str(&src->strings, fn->name);
	f->module = fn->filename != 0 ? intern_str(&src->strings, fn->filename) : NULL;
	if (m != NULL && !m->kernel) {
		f->module = intern_str(&src->strings, m->filename);
		f->build_id = m->build_id != 0 ? intern_str(&src->strings, m->build_id) : NULL;
		f->map_start = m->memory_start;
		f->map_end = m->memory_limit;
		f->map_file_offset = m->file_offset;
	}
	f->address = l->address;
	f->module_offset = l->module_offset;
	f->kernel = l->kernel;
	f->symbolized = fn->symbolized;
}

/* pid has a sample in one of live[0..nlive). */
static bool profile_live_pid(const struct profile *const *live, size_t nlive, uint32_t pid)
{
	size_t i;

	for (i = 0; i < nlive; i++) {
		if (profile_has_pid(live[i], pid))
			return true;
	}
	return false;
}

int profile_merge_mapped(struct profile *dst, const struct profile *src, bool fold,
			 const struct profile *const *live, size_t nlive, uint32_t *map)
{
	uint32_t *remap; /* src location -> dst location + 1, 0: not yet */
	const struct profile_stack *s;
	struct frame f;
	uint32_t comm, loc, pid, tid;
	size_t i, j;
	bool folded;
	int err = 0;

	if (dst == NULL || src == NULL || dst == src)
		return -EINVAL;
	/* Filled first: whatever fails below, map says what was added. */
	for (i = 0; map != NULL && i < src->nstacks; i++)
		map[i] = PROFILE_NO_STACK;
	remap = calloc(src->nlocations + 1, sizeof(*remap));
	if (remap == NULL)
		return -ENOMEM;
	/* Stack by stack, in src's order, interning as profile_add_sample would:
	 * merging the intervals of a run in order gives the tables (and so the
	 * files) that adding every sample to one profile gives. */
	for (i = 0; i < src->nstacks && err == 0; i++) {
		s = &src->stacks[i];
		/* All its samples taken off (profile_take_off): nothing to add. */
		if (s->count == 0)
			continue;
		err = array_grow((void **)&dst->scratch, &dst->cap_scratch, s->nlocations + 1,
				 sizeof(uint32_t));
		if (err == 0)
			err = profile_intern(dst, intern_str(&src->strings, s->comm), &comm);
		for (j = 0; j < s->nlocations && err == 0; j++) {
			loc = src->pool[s->loc_offset + j];
			if (remap[loc] == 0) {
				profile_location_frame(src, loc, &f);
				err = profile_put_frame(dst, &f, 0, &remap[loc]);
				if (err == 0)
					remap[loc]++;
			}
			dst->scratch[j] = remap[loc] - 1;
		}
		if (err == 0) {
			pid = s->pid;
			tid = s->tid;
			/* The idle task (pid 0) never goes. */
			if (fold && pid != 0 && pid != PROFILE_PID_GONE &&
			    !profile_live_pid(live, nlive, pid)) {
				pid = PROFILE_PID_GONE;
				tid = 0;
				dst->gone_pid_stacks++;
			}
			/* src's folded samples stay folded, and counted, in dst. */
			folded = s->nlocations == 1 && src->pool[s->loc_offset] == src->other_location;
			/* dst's own, so that a merge of dst knows its folded stacks too. */
			if (folded && dst->other_location == PROFILE_NO_MAPPING)
				dst->other_location = dst->scratch[0];
			err = profile_add_locs(dst, pid, tid, comm, dst->scratch, s->nlocations,
					       s->truncated, s->count, s->cpu_ns, folded,
					       map != NULL ? &map[i] : NULL);
			if (err == -ENOSPC)
				err = 0; /* counted as dropped */
		}
		if (dst->merge_progress != NULL && (i + 1) % PROFILE_MERGE_PROGRESS_STACKS == 0)
			dst->merge_progress(dst->merge_progress_arg);
	}
	free(remap);
	dst->dropped_samples += src->dropped_samples;
	dst->dropped_cpu_ns += src->dropped_cpu_ns;
	dst->gone_pid_stacks += src->gone_pid_stacks;
	return err;
}

int profile_merge(struct profile *dst, const struct profile *src)
{
	return profile_merge_mapped(dst, src, false, NULL, 0, NULL);
}

bool profile_take_off(struct profile *p, uint32_t idx, uint64_t count, uint64_t cpu_ns)
{
	struct profile_stack *s;

	if (idx >= p->nstacks)
		return false;
	s = &p->stacks[idx];
	count = count < s->count ? count : s->count;
	cpu_ns = cpu_ns < s->cpu_ns ? cpu_ns : s->cpu_ns;
	s->count -= count;
	s->cpu_ns -= cpu_ns;
	p->samples -= count;
	p->cpu_ns -= cpu_ns;
	if (s->nlocations == 1 && p->pool[s->loc_offset] == p->other_location)
		p->folded_samples -= count < p->folded_samples ? count : p->folded_samples;
	if (s->pid == PROFILE_PID_GONE)
		p->gone_samples -= count < p->gone_samples ? count : p->gone_samples;
	return s->count == 0;
}

void profile_take_off_dropped(struct profile *p, uint64_t dropped_samples, uint64_t dropped_cpu_ns,
			      uint64_t gone_pid_stacks)
{
	p->dropped_samples -= dropped_samples < p->dropped_samples ? dropped_samples
								   : p->dropped_samples;
	p->dropped_cpu_ns -= dropped_cpu_ns < p->dropped_cpu_ns ? dropped_cpu_ns : p->dropped_cpu_ns;
	p->gone_pid_stacks -= gone_pid_stacks < p->gone_pid_stacks ? gone_pid_stacks
								   : p->gone_pid_stacks;
}

void profile_set_merge_progress(struct profile *p, void (*progress)(void *arg), void *arg)
{
	p->merge_progress = progress;
	p->merge_progress_arg = arg;
}

void profile_set_max_stacks(struct profile *p, size_t max_stacks)
{
	p->max_stacks = max_stacks;
}

void profile_set_time(struct profile *p, uint64_t start_unix_ns, uint64_t end_unix_ns)
{
	p->start_ns = start_unix_ns;
	p->end_ns = end_unix_ns;
}

void profile_get_time(const struct profile *p, uint64_t *start_unix_ns, uint64_t *end_unix_ns)
{
	if (start_unix_ns != NULL)
		*start_unix_ns = p->start_ns;
	if (end_unix_ns != NULL)
		*end_unix_ns = p->end_ns;
}

void profile_set_period(struct profile *p, uint64_t period_ns)
{
	p->period_ns = period_ns;
}

uint64_t profile_period_ns(const struct profile *p)
{
	if (p->period_ns != 0)
		return p->period_ns;
	if (p->samples == 0)
		return 0;
	/* The rate changes with the load tier, so the mean is the honest "typical" one. */
	return p->cpu_ns / p->samples;
}

bool profile_string_lookup(const struct profile *p, const char *s, uint32_t *idx)
{
	return intern_find(&p->strings, s, strlen(s), idx);
}

const char *const profile_stop_names[PROFILE_STOP_REASONS] = {
	NULL, "[no unwind table]", "[unwind failed]", "[no frame pointers]", "[no mapping]",
	"[anonymous code]", "[in execve]", "[user stack skipped]", "[no stack]",
};

const char *const profile_stop_keys[PROFILE_STOP_REASONS] = {
	NULL, "no_unwind_table", "unwind_failed", "no_frame_pointers", "no_mapping",
	"anonymous_code", "in_execve", "user_stack_skipped", "no_stack",
};

unsigned profile_stop_reason(const struct profile *p, const struct profile_function *f)
{
	const char *name;
	unsigned r;

	if (f->kernel || f->symbolized || f->filename != 0)
		return 0;
	name = profile_string(p, f->name);
	for (r = 1; r < PROFILE_STOP_REASONS; r++) {
		if (strcmp(name, profile_stop_names[r]) == 0)
			return r;
	}
	return 0;
}
