#include "exporter/symbols/symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/hash.h"
#include "common/intern.h"
#include "common/log.h"
#include "common/mono_clock.h"
#include "exporter/symbols/elf_symbols.h"
#include "exporter/symbols/kallsyms.h"
#include "exporter/symbols/proc_maps.h"
#include "exporter/symbols/proc_source.h"
#include "exporter/symbols/symbolizer_internal.h"

/* A pid's maps are re-read for an unknown address at most this often. */
#define SYM_MAPS_REFRESH_NS NSEC_PER_SEC
/* A file we could not open (process gone, no access) is tried again after this. */
#define SYM_FILE_RETRY_NS (10 * NSEC_PER_SEC)
/* A file by identity the loader does not know yet (it registers one when BPF
 * first asks for its table, at its next pass, and a sample of it can come
 * first): asked again after 1, 2 and 4 s before SYM_FILE_RETRY_NS. */
#define SYM_NOT_YET_TRIES 3
/* Files named by identity have a key space of their own: a mapping's device
 * never has this bit. */
#define SYM_DEV_BY_ID (1ULL << 63)

static const char SYM_UNKNOWN[] = "[unknown]";
static const char SYM_VDSO[] = "[vdso]";
static const char SYM_ANON[] = "[anon]";

static void lru_unlink(struct lru *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
}

static void lru_push_front(struct lru *head, struct lru *n)
{
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
}

/* The symbolizer's copy of str, valid until symbolizer_free; NULL when out of memory. */
const char *sym_intern(struct symbolizer *s, const char *str)
{
	uint32_t idx;

	if (intern_add(&s->strings, str, strlen(str), &idx) != 0)
		return NULL;
	return intern_str(&s->strings, idx);
}

const char *sym_internf(struct symbolizer *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return sym_intern(s, buf);
}

static struct sym_pid **pid_slot(struct symbolizer *s, uint32_t pid)
{
	struct sym_pid **pp = &s->pids[hash_mix64(pid) & (SYM_BUCKETS - 1)];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->hnext;
	return pp;
}

static void pid_remove(struct symbolizer *s, struct sym_pid *p)
{
	struct sym_pid **pp = pid_slot(s, p->pid);

	*pp = p->hnext;
	lru_unlink(&p->lru);
	s->maps_bytes -= proc_maps_memory(p->maps);
	proc_maps_free(p->maps);
	free(p);
	s->npids--;
}

static struct sym_file **file_slot(struct symbolizer *s, uint64_t dev, uint64_t inode, uint32_t gen)
{
	struct sym_file **pp = &s->files[hash_mix64(dev * 31 + inode + ((uint64_t)gen << 40)) &
					 (SYM_BUCKETS - 1)];

	while (*pp && ((*pp)->dev != dev || (*pp)->inode != inode || (*pp)->gen != gen))
		pp = &(*pp)->hnext;
	return pp;
}

static void file_remove(struct symbolizer *s, struct sym_file *f)
{
	struct sym_file **pp = file_slot(s, f->dev, f->inode, f->gen);

	*pp = f->hnext;
	lru_unlink(&f->lru);
	elf_symbols_free(f->elf);
	elf_symbols_free(f->debug);
	s->file_bytes -= f->bytes;
	free(f);
	s->nfiles--;
}

static void sym_evict(struct symbolizer *s)
{
	while (s->npids > s->max_pids) {
		pid_remove(s, (struct sym_pid *)s->pid_lru.prev);
		s->stats.evictions++;
	}
	/* The newest file stays, however big: the frame being named needs it. */
	while (s->nfiles > s->max_files || (s->file_bytes > s->max_file_bytes && s->nfiles > 1)) {
		file_remove(s, (struct sym_file *)s->file_lru.prev);
		s->stats.evictions++;
	}
}

/* Parse the maps behind fd (or nothing for -errno) into p; on failure (process
 * gone) the maps already held are kept. Closes fd. */
static void pid_take_maps(struct symbolizer *s, struct sym_pid *p, int fd, uint64_t now)
{
	struct proc_maps *m = NULL;
	char err[256];
	int rc;

	p->read_at_ns = now;
	s->stats.maps_reads++;
	if (fd < 0)
		return;
	rc = proc_maps_read_fd(fd, "maps", &m, err, sizeof(err));
	close(fd);
	if (rc != 0)
		return;
	s->maps_bytes += proc_maps_memory(m);
	s->maps_bytes -= proc_maps_memory(p->maps);
	proc_maps_free(p->maps);
	p->maps = m;
	p->gen = ++s->gen_counter;
}

static void pid_read_maps(struct symbolizer *s, struct sym_pid *p, uint64_t now)
{
	pid_take_maps(s, p, proc_source_open_maps(s->src, p->pid), now);
}

/* A new cache entry for pid (not cached yet), without its maps. NULL: out of memory. */
static struct sym_pid *pid_new(struct symbolizer *s, struct sym_pid **pp, uint32_t pid)
{
	struct sym_pid *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->gen = ++s->gen_counter;
	*pp = p;
	lru_push_front(&s->pid_lru, &p->lru);
	s->npids++;
	return p;
}

static struct sym_pid *pid_get(struct symbolizer *s, uint32_t pid, uint64_t now)
{
	struct sym_pid **pp = pid_slot(s, pid);
	struct sym_pid *p = *pp;

	if (p) {
		lru_unlink(&p->lru);
		lru_push_front(&s->pid_lru, &p->lru);
		p->used_ns = now;
		/* Dropped for another image (symbolizer_note_image): read at once. */
		if (p->read_at_ns == 0)
			pid_read_maps(s, p, now);
		return p;
	}
	p = pid_new(s, pp, pid);
	if (!p)
		return NULL;
	p->used_ns = now;
	pid_read_maps(s, p, now);
	sym_evict(s);
	return p;
}

void symbolizer_prefetch_pids(struct symbolizer *s, const uint32_t *pids, size_t n)
{
	uint32_t want[SYMBOLIZER_PREFETCH_MAX];
	int fds[SYMBOLIZER_PREFETCH_MAX];
	uint64_t now = mono_ns();
	size_t i, j, k = 0;

	for (i = 0; i < n && k < SYMBOLIZER_PREFETCH_MAX; i++) {
		if (*pid_slot(s, pids[i]) != NULL)
			continue;
		for (j = 0; j < k && want[j] != pids[i]; j++)
			;
		if (j == k)
			want[k++] = pids[i];
	}
	if (k == 0)
		return;
	proc_source_open_maps_many(s->src, want, k, fds);
	for (i = 0; i < k; i++) {
		struct sym_pid **pp = pid_slot(s, want[i]);
		struct sym_pid *p = pid_new(s, pp, want[i]);

		if (p == NULL) {
			if (fds[i] >= 0)
				close(fds[i]);
			continue;
		}
		p->used_ns = now;
		pid_take_maps(s, p, fds[i], now);
	}
	sym_evict(s);
}

/*
 * A stripped binary (no .symtab) may have its full symbol table in a separate
 * debug file found by build id, as Debian's -dbgsym packages install them.
 * Accepted only when its own build id is the same.
 */
static struct elf_symbols *file_debug_symbols(struct symbolizer *s, const char *build_id)
{
	struct elf_symbols *dbg = NULL;
	char err[128];
	const char *id;
	int fd;

	if (strlen(build_id) < 3)
		return NULL;
	fd = proc_source_open_debug_file(s->src, build_id);
	if (fd < 0)
		return NULL;
	if (elf_symbols_open_fd(fd, &dbg, err, sizeof(err)) == 0) {
		id = elf_symbols_build_id(dbg);
		if (id == NULL || strcmp(id, build_id) != 0 || elf_symbols_count(dbg) == 0) {
			elf_symbols_free(dbg);
			dbg = NULL;
		}
	}
	close(fd);
	return dbg;
}

/*
 * The cache entry for a file key, most recently used now. *load true when the
 * file is to be (re)read: new, or failed before and due for a retry. NULL when
 * out of memory.
 */
static struct sym_file *file_lookup(struct symbolizer *s, uint64_t dev, uint64_t inode, uint32_t gen,
				    uint64_t now, bool *load)
{
	struct sym_file **pp = file_slot(s, dev, inode, gen);
	struct sym_file *f = *pp;

	*load = false;
	if (f) {
		lru_unlink(&f->lru);
		lru_push_front(&s->file_lru, &f->lru);
		f->used_ns = now;
		*load = f->elf == NULL && now >= f->retry_at_ns;
		return f;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = dev;
	f->inode = inode;
	f->gen = gen;
	f->used_ns = now;
	*pp = f;
	lru_push_front(&s->file_lru, &f->lru);
	s->nfiles++;
	*load = true;
	return f;
}

/* Read the symbols behind fd (or note the failure -errno) into f; closes fd. */
static void file_load(struct symbolizer *s, struct sym_file *f, int fd, uint64_t now)
{
	char err[256];

	if (fd < 0) {
		f->retry_at_ns = now + (fd == -EAGAIN ? SYM_AGAIN_RETRY_NS : SYM_FILE_RETRY_NS);
		s->stats.file_errors++;
	} else {
		if (elf_symbols_open_fd(fd, &f->elf, err, sizeof(err)) == 0) {
			if (elf_symbols_build_id(f->elf))
				f->build_id = sym_intern(s, elf_symbols_build_id(f->elf));
			if (f->build_id != NULL && !elf_symbols_has_symtab(f->elf))
				f->debug = file_debug_symbols(s, f->build_id);
		} else {
			/* Not an ELF we can read: it will not become one. */
			f->retry_at_ns = UINT64_MAX;
			s->stats.file_errors++;
		}
		close(fd);
		f->bytes = elf_symbols_memory(f->elf) + elf_symbols_memory(f->debug);
		s->file_bytes += f->bytes;
	}
	sym_evict(s);
	/* With max_files of 1 the entry just made is never the one evicted (it is newest). */
}

static struct sym_file *file_get(struct symbolizer *s, uint32_t pid,
				 const struct proc_maps_entry *e, uint64_t now)
{
	uint64_t dev = ((uint64_t)e->dev_major << 32) | e->dev_minor;
	bool load;
	struct sym_file *f = file_lookup(s, dev, e->inode, 0, now, &load);

	if (f && load)
		file_load(s, f, proc_source_open_mapped_file(s->src, pid, e), now);
	return f;
}

/* A file by the identity BPF reported: asked of the source once (again after
 * a failure, when due), whatever process maps it. */
static struct sym_file *file_get_id(struct symbolizer *s, const struct lowprof_file_id *id,
				    uint64_t now)
{
	char path[4096 + 1];
	struct stat st;
	bool load;
	struct sym_file *f = file_lookup(s, SYM_DEV_BY_ID | id->dev, id->ino, id->gen, now, &load);
	int fd;

	if (!f || !load)
		return f;
	fd = proc_source_open_file(s->src, id, path, sizeof(path));
	if (fd >= 0) {
		if (fstat(fd, &st) == 0 && st.st_size > 0)
			f->size = (uint64_t)st.st_size;
		if (path[0] != '\0')
			f->path = sym_intern(s, path);
	}
	file_load(s, f, fd, now);
	if (fd == -ENOENT && f->not_yet < SYM_NOT_YET_TRIES)
		f->retry_at_ns = now + (SYM_AGAIN_RETRY_NS << f->not_yet++);
	return f;
}

void sym_frame_unknown(struct frame *out, uint64_t addr, bool kernel)
{
	memset(out, 0, sizeof(*out));
	out->function = SYM_UNKNOWN;
	out->address = addr;
	out->kernel = kernel;
}

static const char *sym_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Name out (module and build id set) at file offset off of a file whose
 * symbols are elf (its debug file's debug, either may be NULL): the symbol,
 * else "basename+0xOFF". The binary maps offsets to addresses; its debug
 * file, when there is one, has the full symbol table at the same addresses.
 */
static int sym_name_frame(struct symbolizer *s, struct frame *out, const struct elf_symbols *elf,
			  const struct elf_symbols *debug, const char *module, uint64_t off)
{
	const char *name = NULL, *function;
	uint64_t vaddr;

	if (elf && elf_symbols_file_offset_to_vaddr(elf, off, &vaddr) == 0) {
		if (debug != NULL)
			name = elf_symbols_lookup(debug, vaddr, NULL);
		if (name == NULL)
			name = elf_symbols_lookup(elf, vaddr, NULL);
	}
	if (name) {
		function = sym_intern(s, name);
		out->symbolized = function != NULL;
		if (out->symbolized)
			s->stats.misses--;
	} else {
		function = sym_internf(s, "%s+0x%" PRIx64, sym_basename(module), off);
	}
	if (!function)
		return -ENOMEM;
	out->function = function;
	return 0;
}

/* Is a process's [vdso] mapping the image s->vdso holds (our own, a 64-bit
 * process's)? The kernel maps a 64-bit process's vDSO above 4 GiB, a 32-bit
 * (compat) or x32 process's, another image, below. Such a process's frames
 * come raw (bpf/unwind_fp.bpf.h, fp_walk_compat), and named with our image
 * they got the names of whatever 64-bit function lay at their offsets;
 * unnamed, they are "[vdso]+0xOFFSET", as perf names them. */
static bool sym_vdso_is_ours(const struct proc_maps_entry *e)
{
	return e->start >= (1ull << 32);
}

int symbolizer_user_frame(struct symbolizer *s, uint32_t pid, uint64_t addr, struct frame *out)
{
	uint64_t now = mono_ns(), off;
	const struct proc_maps_entry *e = NULL;
	const struct elf_symbols *elf = NULL, *debug = NULL;
	const char *module, *build_id = NULL;
	struct sym_pid *p;

	sym_frame_unknown(out, addr, false);
	s->stats.lookups++;
	s->stats.misses++; /* taken back below when a name is found */
	p = pid_get(s, pid, now);
	if (!p)
		return -ENOMEM;
	if (p->maps)
		e = proc_maps_find(p->maps, addr);
	if (!e && now - p->read_at_ns >= SYM_MAPS_REFRESH_NS) {
		pid_read_maps(s, p, now);
		if (p->maps)
			e = proc_maps_find(p->maps, addr);
	}
	if (!e)
		return 0;
	out->map_start = e->start;
	out->map_end = e->end;
	out->map_file_offset = e->offset;
	if (e->path[0] == '\0') {
		/* Anonymous memory (JIT code): no file, so the offset is into the mapping. */
		off = addr - e->start;
		module = SYM_ANON;
	} else {
		off = addr - e->start + e->offset;
		module = strcmp(e->path, SYM_VDSO) == 0 ? SYM_VDSO : sym_intern(s, e->path);
	}
	if (!module)
		return -ENOMEM;
	out->module = module;
	out->module_offset = off;
	if (module == SYM_VDSO) {
		if (sym_vdso_is_ours(e)) {
			elf = s->vdso;
			build_id = s->vdso_build_id;
		}
	} else if (e->inode != 0 && e->path[0] == '/' && proc_maps_entry_exec(e)) {
		struct sym_file *f = file_get(s, pid, e, now);

		if (!f)
			return -ENOMEM;
		elf = f->elf;
		debug = f->debug;
		build_id = f->build_id;
	}
	out->build_id = build_id;
	return sym_name_frame(s, out, elf, debug, module, off);
}

/* A frame at offset off of a file named without any process's addresses: the
 * whole file is the mapping (0 to its size), offsets are its addresses. */
static int sym_whole_file_frame(struct symbolizer *s, struct frame *out, const struct elf_symbols *elf,
				const struct elf_symbols *debug, const char *module,
				const char *build_id, uint64_t size, uint64_t off)
{
	out->module = module;
	out->module_offset = off;
	out->map_start = 0;
	out->map_end = size;
	out->map_file_offset = 0;
	out->build_id = build_id;
	return sym_name_frame(s, out, elf, debug, module, off);
}

int symbolizer_file_frame(struct symbolizer *s, const struct lowprof_file_id *id, uint64_t off,
			  struct frame *out)
{
	struct sym_file *f;
	const char *module;

	sym_frame_unknown(out, off, false);
	s->stats.lookups++;
	s->stats.misses++; /* taken back when a name is found */
	f = file_get_id(s, id, mono_ns());
	if (!f)
		return -ENOMEM;
	module = f->path;
	if (module == NULL)
		module = sym_internf(s, "[file %u:%u inode %" PRIu64 "]", id->dev >> 20,
				     id->dev & 0xfffffu, (uint64_t)id->ino);
	if (!module)
		return -ENOMEM;
	if (sym_whole_file_frame(s, out, f->elf, f->debug, module, f->build_id, f->size, off) != 0)
		return -ENOMEM;
	return f->elf == NULL && f->retry_at_ns != UINT64_MAX ? 1 : 0;
}

int symbolizer_vdso_frame(struct symbolizer *s, uint64_t off, struct frame *out)
{
	sym_frame_unknown(out, off, false);
	s->stats.lookups++;
	s->stats.misses++;
	return sym_whole_file_frame(s, out, s->vdso, NULL, SYM_VDSO, s->vdso_build_id, s->vdso_size,
				    off);
}

uint64_t symbolizer_files_generation(const struct symbolizer *s, bool kernel)
{
	if (!kernel)
		return s->strings_gen;
	if (!s->kallsyms_done)
		return 0;
	return s->kernel_gen > s->strings_gen ? s->kernel_gen : s->strings_gen;
}

void symbolizer_set_idle_ns(struct symbolizer *s, uint64_t idle_ns)
{
	s->idle_ns = idle_ns < NSEC_PER_MSEC ? NSEC_PER_MSEC : idle_ns;
}

void symbolizer_set_keep_file_bytes(struct symbolizer *s, size_t keep_bytes)
{
	s->keep_file_bytes = keep_bytes;
}

size_t symbolizer_expire(struct symbolizer *s, uint64_t before_ns)
{
	uint64_t now = mono_ns();
	struct lru *n, *prev;
	size_t dropped = 0;

	if (now > s->idle_ns && now - s->idle_ns > before_ns)
		before_ns = now - s->idle_ns;

	/* Oldest first, from the tail: stop at the first entry used since. */
	for (n = s->pid_lru.prev; n != &s->pid_lru; n = prev) {
		prev = n->prev;
		if (((struct sym_pid *)n)->used_ns >= before_ns)
			break;
		pid_remove(s, (struct sym_pid *)n);
		dropped++;
	}
	for (n = s->file_lru.prev; n != &s->file_lru; n = prev) {
		prev = n->prev;
		if (((struct sym_file *)n)->used_ns >= before_ns)
			break;
		/* The floor: what is left is the newest, and small enough to keep. */
		if (s->keep_file_bytes > 0 && s->file_bytes <= s->keep_file_bytes &&
		    s->nfiles <= SYMBOLIZER_KEEP_FILES)
			break;
		file_remove(s, (struct sym_file *)n);
		dropped++;
	}
	s->stats.expired += dropped;
	return dropped;
}

uint64_t symbolizer_stack_generation(const struct symbolizer *s, uint32_t pid)
{
	const struct sym_pid *p = s->pids[hash_mix64(pid) & (SYM_BUCKETS - 1)];

	while (p != NULL && p->pid != pid)
		p = p->hnext;
	/* Not cacheable yet: kallsyms is still asked for at kernel frames. */
	if (p == NULL || p->maps == NULL || !s->kallsyms_done)
		return 0;
	/* Both only grow from one counter: the larger changes when either does. */
	return p->gen > s->kernel_gen ? p->gen : s->kernel_gen;
}

void symbolizer_note_image(struct symbolizer *s, uint32_t pid, uint16_t image_id)
{
	struct sym_pid **pp = pid_slot(s, pid);
	struct sym_pid *p = *pp;

	if (p == NULL) {
		/* Its maps are read at its first address (pid_get). */
		p = pid_new(s, pp, pid);
		if (p == NULL)
			return;
		p->used_ns = mono_ns();
		p->image_id = image_id;
		p->image_known = true;
		sym_evict(s);
		return;
	}
	if (p->image_known && p->image_id == image_id)
		return;
	if (p->image_known) {
		s->maps_bytes -= proc_maps_memory(p->maps);
		proc_maps_free(p->maps);
		p->maps = NULL;
		p->read_at_ns = 0;
		p->gen = ++s->gen_counter;
		s->stats.image_changes++;
	}
	p->image_id = image_id;
	p->image_known = true;
}

void symbolizer_forget_pid(struct symbolizer *s, uint32_t pid)
{
	struct sym_pid *p = *pid_slot(s, pid);

	if (p)
		pid_remove(s, p);
}

void symbolizer_set_limits(struct symbolizer *s, size_t max_pids, size_t max_files)
{
	s->max_pids = max_pids ? max_pids : 1;
	s->max_files = max_files ? max_files : 1;
	sym_evict(s);
}

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	*out = s->stats;
	out->pids_cached = s->npids;
	out->files_cached = s->nfiles;
	out->kernel_symbols = s->kallsyms ? kallsyms_count(s->kallsyms) : 0;
	out->kernel_restricted = kallsyms_restricted(s->kallsyms);
	out->file_bytes = s->file_bytes;
	out->string_bytes = intern_memory(&s->strings);
	out->kernel_bytes = kallsyms_memory(s->kallsyms);
	out->maps_bytes = s->npids * sizeof(struct sym_pid) + s->maps_bytes;
}

/* Process-wide, so that a symbolizer made after another's end never gives
 * an epoch the other gave (its strings are gone). The exporter has one thread. */
static uint64_t sym_epoch_source;

uint64_t symbolizer_strings_epoch(const struct symbolizer *s)
{
	return s->strings_epoch;
}

struct symbolizer *symbolizer_new(struct proc_source *src, char *err, size_t errlen)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		goto nomem;
	s->pid_lru.prev = s->pid_lru.next = &s->pid_lru;
	s->file_lru.prev = s->file_lru.next = &s->file_lru;
	s->max_pids = SYMBOLIZER_DEFAULT_MAX_PIDS;
	s->max_files = SYMBOLIZER_DEFAULT_MAX_FILES;
	s->max_file_bytes = SYMBOLIZER_DEFAULT_MAX_FILE_BYTES;
	s->idle_ns = SYMBOLIZER_DEFAULT_IDLE_NS;
	s->keep_file_bytes = SYMBOLIZER_DEFAULT_KEEP_FILE_BYTES;
	s->src = src;
	s->strings_gen = ++s->gen_counter;
	s->strings_epoch = ++sym_epoch_source;
	sym_load_vdso(s);
	return s;
nomem:
	errbuf_set(err, errlen, "out of memory creating the symbolizer");
	symbolizer_free(s);
	return NULL;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	while (s->npids)
		pid_remove(s, (struct sym_pid *)s->pid_lru.next);
	while (s->nfiles)
		file_remove(s, (struct sym_file *)s->file_lru.next);
	intern_free(&s->strings);
	kallsyms_free(s->kallsyms);
	elf_symbols_free(s->vdso);
	free(s);
}

void symbolizer_set_max_file_bytes(struct symbolizer *s, size_t max_bytes)
{
	s->max_file_bytes = max_bytes;
	sym_evict(s);
}

size_t symbolizer_memory(const struct symbolizer *s)
{
	return sizeof(*s) + s->file_bytes + intern_memory(&s->strings) +
	       kallsyms_memory(s->kallsyms) + s->npids * sizeof(struct sym_pid) + s->maps_bytes;
}

int symbolizer_trim_strings(struct symbolizer *s, size_t max_bytes)
{
	struct intern fresh, old;
	struct sym_file *f;
	struct lru *n;

	if (intern_memory(&s->strings) <= max_bytes)
		return 0;
	/* Start a new table, and take into it the strings the caches keep. */
	old = s->strings;
	memset(&fresh, 0, sizeof(fresh));
	s->strings = fresh;
	for (n = s->file_lru.next; n != &s->file_lru; n = n->next) {
		f = (struct sym_file *)n;
		if (f->build_id != NULL)
			f->build_id = sym_intern(s, f->build_id);
		if (f->path != NULL)
			f->path = sym_intern(s, f->path);
	}
	if (s->vdso_build_id != NULL)
		s->vdso_build_id = sym_intern(s, s->vdso_build_id);
	intern_free(&old);
	/* Stacks symbolized before point into the freed table: none may be reused. */
	s->kernel_gen = ++s->gen_counter;
	s->strings_gen = s->kernel_gen;
	s->strings_epoch = ++sym_epoch_source;
	s->stats.string_trims++;
	return 1;
}
