/* unwind_maps: row allocation, the per-file cache and its unwind_files entries. */
#include "loader/unwind_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "bpf/lowprof.skel.h"
#include "common/log.h"
#include "common/mono_clock.h"

/* The BPF side mirrors these (bpf/unwind_dwarf.bpf.h): one layout, checked here. */
_Static_assert(sizeof(struct lowprof_unwind_row) == sizeof(struct unwind_row), "row size");
_Static_assert(UNWIND_CFA_END == 5 && UNWIND_CFA_SIGNAL == 4 && UNWIND_CFA_PLT == 3 &&
		       UNWIND_RBP_AT_CFA == 1,
	       "unwind kinds mirrored in bpf/unwind_dwarf.bpf.h");
_Static_assert((1u << LOWPROF_UNWIND_ROW_STEPS) > UNWIND_TABLE_MAX_ROWS, "row search steps");

uint32_t unwind_maps_capacity(unsigned table_mb)
{
	uint64_t rows = ((uint64_t)table_mb << 20) / sizeof(struct lowprof_unwind_row);

	if (rows < 1)
		rows = 1;
	if (rows > UINT32_MAX / 2)
		rows = UINT32_MAX / 2;
	return (uint32_t)rows;
}

static uint32_t um_chunks_for(uint32_t rows)
{
	return (rows + LOWPROF_UNWIND_CHUNK_ROWS - 1) / LOWPROF_UNWIND_CHUNK_ROWS;
}

int unwind_maps_size(struct lowprof_bpf *skel, unsigned table_mb)
{
	return bpf_map__set_max_entries(skel->maps.unwind_rows,
					um_chunks_for(unwind_maps_capacity(table_mb)));
}

/* Index words per row the index may cost at most; sparser tables go without one. */
#define UM_INDEX_WORDS_PER_ROW 2
#define UM_INDEX_WORDS_MIN 18

size_t unwind_maps_page_index(const struct unwind_row *rows, size_t n, uint32_t *words, size_t max)
{
	uint64_t page0, npages, p;
	size_t r = 0;

	if (max < 1)
		return 0;
	words[0] = 0;
	if (n == 0)
		return 1;
	page0 = rows[0].pc >> LOWPROF_UNWIND_PAGE_SHIFT;
	npages = (rows[n - 1].pc >> LOWPROF_UNWIND_PAGE_SHIFT) - page0 + 1;
	if (max < 3 || npages > max - 3 || npages > UINT32_MAX - 3)
		return 1;
	words[0] = (uint32_t)npages;
	for (p = 0; p <= npages; p++) {
		uint64_t start = (page0 + p) << LOWPROF_UNWIND_PAGE_SHIFT;

		while (r + 1 < n && rows[r + 1].pc <= start)
			r++;
		words[1 + p] = (uint32_t)r;
	}
	/* The walker treats a pc past the last page as in page npages: [n - 1, n - 1]. */
	words[2 + npages] = (uint32_t)(n - 1);
	return (size_t)npages + 3;
}

static void um_free_remove(struct unwind_maps *um, size_t i)
{
	memmove(&um->free[i], &um->free[i + 1], (um->nfree - i - 1) * sizeof(*um->free));
	um->nfree--;
}

/* The first len rows of free range i are taken; an emptied range goes. */
static void um_free_take_head(struct unwind_maps *um, size_t i, uint32_t len)
{
	um->free[i].start += len;
	um->free[i].len -= len;
	if (um->free[i].len == 0)
		um_free_remove(um, i);
}

static int um_free_insert(struct unwind_maps *um, uint32_t start, uint32_t len)
{
	size_t i, at;

	/* Keep the list sorted and coalesced: find the first range after start. */
	for (at = 0; at < um->nfree && um->free[at].start < start; at++)
		;
	if (at > 0 && um->free[at - 1].start + um->free[at - 1].len == start) {
		um->free[at - 1].len += len;
		if (at < um->nfree && start + len == um->free[at].start) {
			um->free[at - 1].len += um->free[at].len;
			um_free_remove(um, at);
		}
		return 0;
	}
	if (at < um->nfree && start + len == um->free[at].start) {
		um->free[at].start = start;
		um->free[at].len += len;
		return 0;
	}
	if (um->nfree == um->free_cap) {
		size_t ncap = um->free_cap ? um->free_cap * 2 : 64;
		struct unwind_range *n = realloc(um->free, ncap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		um->free = n;
		um->free_cap = ncap;
	}
	for (i = um->nfree; i > at; i--)
		um->free[i] = um->free[i - 1];
	um->free[at].start = start;
	um->free[at].len = len;
	um->nfree++;
	return 0;
}

/* First fit. Returns 0 and the start, or -ENOSPC. */
static int um_alloc(struct unwind_maps *um, uint32_t len, uint32_t *start)
{
	size_t i;

	for (i = 0; i < um->nfree; i++) {
		if (um->free[i].len < len)
			continue;
		*start = um->free[i].start;
		um_free_take_head(um, i, len);
		return 0;
	}
	return -ENOSPC;
}

#define UM_CHUNK_BYTES ((size_t)LOWPROF_UNWIND_CHUNK_ROWS * sizeof(struct lowprof_unwind_row))

static int um_common_init(struct unwind_maps *um, uint32_t capacity)
{
	uint32_t i;

	memset(um, 0, sizeof(*um));
	um->rows_fd = um->files_fd = um->pending_fd = um->stats_fd = um->interp_fd = -1;
	um->capacity = capacity;
	um->max_files = UNWIND_MAPS_MAX_FILES;
	um->max_refused = UNWIND_MAPS_MAX_REFUSED;
	um->refused_ttl_ns = UNWIND_MAPS_REFUSED_TTL_NS;
	um->idle_ttl_ns = UNWIND_MAPS_IDLE_TTL_NS;
	um->idle_checked_ns = mono_ns();
	um->max_chunks = um_chunks_for(capacity);
	um->chunk = calloc(um->max_chunks ? um->max_chunks : 1, sizeof(*um->chunk));
	um->chunk_fd = calloc(um->max_chunks ? um->max_chunks : 1, sizeof(*um->chunk_fd));
	if (um->chunk == NULL || um->chunk_fd == NULL) {
		free(um->chunk);
		free(um->chunk_fd);
		um->chunk = NULL;
		um->chunk_fd = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < um->max_chunks; i++)
		um->chunk_fd[i] = -1;
	return um_free_insert(um, 0, capacity);
}

int unwind_maps_init_mem(struct unwind_maps *um, struct lowprof_unwind_row *rows,
			 uint32_t capacity)
{
	uint32_t i;
	int rc = um_common_init(um, capacity);

	if (rc != 0)
		return rc;
	for (i = 0; i < um->max_chunks; i++)
		um->chunk[i] = rows + (size_t)i * LOWPROF_UNWIND_CHUNK_ROWS;
	um->nchunks = um->max_chunks;
	return 0;
}

bool unwind_maps_ready(const struct unwind_maps *um)
{
	return um->chunk != NULL;
}

/* The bpffs path of chunk k's pin. false when there is none (no pin directory). */
static bool um_chunk_pin_path(const struct unwind_maps *um, uint32_t k, char *path, size_t len)
{
	return um->pin_dir != NULL &&
	       (size_t)snprintf(path, len, "%s/unwind_chunk_%u", um->pin_dir, k) < len;
}

/* Pin chunk k (fd) for the next loader. A failure costs only the adoption
 * of its tables (the next loader drops them and builds them again). */
static void um_chunk_pin(const struct unwind_maps *um, uint32_t k, int fd)
{
	char path[PATH_MAX];

	if (!um_chunk_pin_path(um, k, path, sizeof(path)))
		return;
	unlink(path); /* a pin a kill left without its slot */
	if (bpf_obj_pin(fd, path) != 0)
		log_warn_f("unwind rows: pinning chunk %u at %s: %s", k, path, strerror(errno));
}

static void um_chunk_unpin(const struct unwind_maps *um, uint32_t k)
{
	char path[PATH_MAX];

	if (um_chunk_pin_path(um, k, path, sizeof(path)))
		unlink(path);
}

/* A new chunk k: an mmapable array map, then its slot in unwind_rows. 0 or -errno. */
static int um_chunk_create(struct unwind_maps *um, uint32_t k)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	void *rows;
	int fd, rc;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "lp_unwind_chunk", sizeof(__u32),
			    sizeof(struct lowprof_unwind_row), LOWPROF_UNWIND_CHUNK_ROWS, &opts);
	if (fd < 0)
		return -errno;
	rows = mmap(NULL, UM_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (rows == MAP_FAILED) {
		rc = -errno;
		close(fd);
		return rc;
	}
	/* Pinned before it is installed: a slot is never without its pin for
	 * longer than a kill between the two (the next loader checks both). */
	um_chunk_pin(um, k, fd);
	/* Installed empty: no process entry points at its rows before they are written. */
	if (bpf_map_update_elem(um->rows_fd, &k, &fd, BPF_ANY) != 0) {
		rc = -errno;
		um_chunk_unpin(um, k);
		munmap(rows, UM_CHUNK_BYTES);
		close(fd);
		return rc;
	}
	um->chunk[k] = rows;
	um->chunk_fd[k] = fd;
	um->nchunks++;
	return 0;
}

/* The chunks holding rows [start, start + len) exist. 0 or -errno. */
static int um_chunks_ensure(struct unwind_maps *um, uint32_t start, uint32_t len)
{
	uint32_t k, last = (start + len - 1) >> LOWPROF_UNWIND_CHUNK_SHIFT;
	int rc;

	for (k = start >> LOWPROF_UNWIND_CHUNK_SHIFT; k <= last && k < um->max_chunks; k++) {
		if (um->chunk[k] != NULL)
			continue;
		rc = um_chunk_create(um, k);
		if (rc != 0) {
			log_warn_f("unwind rows: a new %zu KiB chunk: %s", UM_CHUNK_BYTES / 1024,
				   strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* Copy n row slots to [start, start + n), across chunk boundaries. */
static void um_write(struct unwind_maps *um, uint32_t start, const void *src, size_t n)
{
	const char *p = src;

	while (n > 0) {
		uint32_t off = start & (LOWPROF_UNWIND_CHUNK_ROWS - 1);
		size_t piece = LOWPROF_UNWIND_CHUNK_ROWS - off;

		if (piece > n)
			piece = n;
		memcpy(&um->chunk[start >> LOWPROF_UNWIND_CHUNK_SHIFT][off], p,
		       piece * sizeof(struct lowprof_unwind_row));
		p += piece * sizeof(struct lowprof_unwind_row);
		start += (uint32_t)piece;
		n -= piece;
	}
}

int unwind_maps_init(struct unwind_maps *um, struct lowprof_bpf *skel, const char *pin_dir,
		     char *err, size_t errlen)
{
	uint32_t chunks = bpf_map__max_entries(skel->maps.unwind_rows);

	uint64_t capacity = (uint64_t)chunks * LOWPROF_UNWIND_CHUNK_ROWS;

	if (capacity > UINT32_MAX / 2)
		capacity = UINT32_MAX / 2;
	if (um_common_init(um, (uint32_t)capacity) != 0)
		return errbuf_fail(-ENOMEM, err, errlen, "out of memory");
	um->rows_fd = bpf_map__fd(skel->maps.unwind_rows);
	um->files_fd = bpf_map__fd(skel->maps.unwind_files);
	um->pending_fd = bpf_map__fd(skel->maps.unwind_pending);
	um->stats_fd = bpf_map__fd(skel->maps.unwind_stats);
	um->interp_fd = bpf_map__fd(skel->maps.unwind_interp);
	um->files_gen = skel->bss ? (volatile uint64_t *)&skel->bss->unwind_files_gen : NULL;
	um->ncpus = libbpf_num_possible_cpus();
	if (pin_dir != NULL && (um->pin_dir = strdup(pin_dir)) == NULL) {
		unwind_maps_fini(um);
		return errbuf_fail(-ENOMEM, err, errlen, "out of memory");
	}
	return 0;
}

void unwind_maps_fini(struct unwind_maps *um)
{
	size_t i;

	for (i = 0; i < um->max_chunks && um->chunk_fd != NULL; i++) {
		if (um->chunk_fd[i] < 0)
			continue;
		munmap(um->chunk[i], UM_CHUNK_BYTES);
		close(um->chunk_fd[i]);
	}
	free(um->chunk);
	free(um->chunk_fd);
	for (i = 0; i < um->nfiles; i++)
		free(um->files[i]);
	free(um->files);
	free(um->free);
	free(um->dropped);
	free(um->pin_dir); /* the pins stay: for the next loader, or removed with the directory */
	memset(um, 0, sizeof(*um));
	um->rows_fd = um->files_fd = um->pending_fd = um->stats_fd = um->interp_fd = -1;
}

int unwind_maps_check_table(const struct unwind_table *t, const struct unwinder_segment *seg,
			    uint32_t nseg, char *err, size_t errlen)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	uint32_t i;
	size_t r;

	if (unwind_table_validate(t, err, errlen) != 0)
		return -EINVAL;
	if (nseg == 0 || nseg > UNWINDER_MAX_SEGMENTS)
		return errbuf_fail(-EINVAL, err, errlen, "%u executable segments", nseg);
	for (i = 0; i < nseg; i++) {
		if (seg[i].memsz == 0 || seg[i].vaddr + seg[i].memsz < seg[i].vaddr)
			return errbuf_fail(-EINVAL, err, errlen, "executable segment %u is empty or wraps", i);
		if (seg[i].vaddr < lo)
			lo = seg[i].vaddr;
		if (seg[i].vaddr + seg[i].memsz > hi)
			hi = seg[i].vaddr + seg[i].memsz;
	}
	/* A gap row may sit just past the code (it closes the last FDE). */
	for (r = 0; r < t->nrows; r++) {
		const struct unwind_row *row = &t->rows[r];

		if (row->cfa_kind == UNWIND_CFA_NONE && row->pc >= lo && row->pc <= hi)
			continue;
		if (row->pc < lo || row->pc >= hi)
			return errbuf_fail(-EINVAL, err, errlen,
				       "row %zu at 0x%llx outside the executable segments [0x%llx, 0x%llx)",
				       r, (unsigned long long)row->pc, (unsigned long long)lo,
				       (unsigned long long)hi);
	}
	return 0;
}

static bool um_key_eq(const struct lowprof_file_id *a, const struct lowprof_file_id *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->gen == b->gen;
}

static void um_file_remove(struct unwind_maps *um, size_t i, bool dropped);

struct unwind_file *unwind_maps_find(struct unwind_maps *um, const struct lowprof_file_id *key)
{
	size_t i;

	for (i = 0; i < um->nfiles; i++) {
		if (um_key_eq(&um->files[i]->key, key))
			return um->files[i];
	}
	return NULL;
}

void unwind_maps_entry(const struct unwind_file *f, struct lowprof_unwind_file *e)
{
	uint32_t i;

	memset(e, 0, sizeof(*e));
	e->flags = f->flags;
	if (f->state != UNWIND_FILE_READY) {
		e->flags |= LOWPROF_UNWIND_FILE_NO_ROWS;
		return;
	}
	e->first_row = f->first_row;
	e->nrows = f->nrows;
	e->first_pc = f->first_pc;
	e->npages = f->npages;
	/* More executable segments than the walker translates: no table, frame pointers. */
	if (f->nsegments > LOWPROF_UNWIND_FILE_SEGS) {
		e->nrows = 0;
		e->flags |= LOWPROF_UNWIND_FILE_NO_ROWS;
		return;
	}
	e->nsegs = f->nsegments;
	for (i = 0; i < f->nsegments; i++) {
		e->seg[i].off = f->seg[i].offset;
		e->seg[i].vaddr = f->seg[i].vaddr;
		e->seg[i].size = f->seg[i].filesz;
	}
	e->ehdr_hash = f->mark.ehdr_hash;
	e->build_id_vaddr = f->mark.build_id_vaddr;
	e->build_id = f->mark.build_id;
}

int unwind_maps_file_mark(int fd, const struct unwinder_build_id *bid,
			  struct unwind_file_mark *mark)
{
	__u64 w[LOWPROF_EHDR_BYTES / 8];
	uint8_t at[UNWINDER_BUILD_ID_BYTES];

	memset(mark, 0, sizeof(*mark));
	if (pread(fd, w, sizeof(w), 0) != (ssize_t)sizeof(w) || memcmp(w, "\177ELF", 4) != 0)
		return -1;
	/* A vaddr of 0 would be the header itself; past 4 GiB, not the walker's. */
	if (bid->offset == 0 || bid->offset > INT64_MAX || bid->vaddr == 0 || bid->vaddr > UINT32_MAX ||
	    pread(fd, at, sizeof(at), (off_t)bid->offset) != (ssize_t)sizeof(at) ||
	    memcmp(at, bid->bytes, sizeof(at)) != 0)
		return -1;
	mark->ehdr_hash = lowprof_ehdr_hash(w);
	mark->build_id_vaddr = (uint32_t)bid->vaddr;
	memcpy(&mark->build_id, at, sizeof(mark->build_id));
	return 0;
}

/* A ready table's unwind_interp entry (the walker's way to the dynamic
 * loader and the libraries in its list), for a file the caller trusts with it (interp_trust.h): one whose
 * header hashes as another's takes the entry over. */
static void um_interp_publish(struct unwind_maps *um, const struct unwind_file *f)
{
	if (um->interp_fd < 0 || f->mark.ehdr_hash == 0 || f->mark.build_id_vaddr == 0 ||
	    f->state != UNWIND_FILE_READY)
		return;
	if (bpf_map_update_elem(um->interp_fd, &f->mark.ehdr_hash, &f->key, BPF_ANY) != 0)
		log_warn_f("unwind_interp update: %s", strerror(errno));
}

/* ... and removed with the table, unless another file took it over. */
static void um_interp_remove(struct unwind_maps *um, const struct unwind_file *f)
{
	struct lowprof_file_id id;

	if (um->interp_fd < 0 || f->mark.ehdr_hash == 0)
		return;
	if (bpf_map_lookup_elem(um->interp_fd, &f->mark.ehdr_hash, &id) == 0 && um_key_eq(&id, &f->key))
		bpf_map_delete_elem(um->interp_fd, &f->mark.ehdr_hash);
}

/* Rows with a CFA from RBP, below which a file is taken to keep no frame
 * pointers: compiled with them, a third or more of the rows are. */
#define UM_FP_ROWS_PERCENT 5
/* A lazy-binding PLT's first entry (push, jmp: no call) before its stubs. */
#define UM_PLT0_BYTES 16

static bool um_row_is(const struct unwind_row *r, uint8_t cfa_kind, int32_t cfa_off,
		      uint8_t rbp_kind)
{
	return r->cfa_kind == cfa_kind && r->cfa_off == cfa_off && r->rbp_kind == rbp_kind &&
	       (rbp_kind != UNWIND_RBP_AT_CFA || r->rbp_off == -16);
}

/*
 * Could a call be made at row i's pcs without a frame pointer set up? Code
 * compiled with frame pointers calls only where CFA = RBP + 16 and RBP is
 * saved at CFA - 16. Its other rows are the entry and exits (CFA = RSP + 8:
 * nothing pushed, and a call there would leave the stack misaligned), the
 * prologue between `push %rbp` and `mov %rsp,%rbp` (a row followed by the
 * RBP one; code without frame pointers that pushes RBP to use it never
 * computes the CFA from it), and the PLT (a stub jumps, it does not call).
 * Any other rule (a frameless function that pushed or reserved something,
 * RBP kept elsewhere, a signal trampoline, CFI the rows cannot express) may
 * hold a call that a frame-pointer step would get wrong.
 */
static bool um_row_calls_without_fp(const struct unwind_table *t, size_t i)
{
	const struct unwind_row *r = &t->rows[i], *next = i + 1 < t->nrows ? &t->rows[i + 1] : NULL;

	switch (r->cfa_kind) {
	case UNWIND_CFA_NONE:
	case UNWIND_CFA_END:
	case UNWIND_CFA_PLT:
		return false;
	case UNWIND_CFA_RBP:
		return !um_row_is(r, UNWIND_CFA_RBP, 16, UNWIND_RBP_AT_CFA);
	case UNWIND_CFA_RSP:
		if (r->cfa_off == 8)
			return r->rbp_kind == UNWIND_RBP_UNDEFINED ||
			       (r->rbp_kind == UNWIND_RBP_AT_CFA && r->rbp_off != -16);
		if (um_row_is(r, UNWIND_CFA_RSP, 16, UNWIND_RBP_AT_CFA))
			return next == NULL || !um_row_is(next, UNWIND_CFA_RBP, 16, UNWIND_RBP_AT_CFA);
		if ((r->cfa_off == 16 || r->cfa_off == 24) && r->rbp_kind == UNWIND_RBP_SAME) {
			/* PLT0 pushes, then jumps: its rows end at the first stub's,
			 * within PLT0's bytes (rows have distinct pcs: a few rows). */
			size_t j = i + 1;

			while (j < t->nrows && t->rows[j].cfa_kind == UNWIND_CFA_RSP &&
			       t->rows[j].pc - r->pc <= UM_PLT0_BYTES)
				j++;
			return j == t->nrows || t->rows[j].cfa_kind != UNWIND_CFA_PLT ||
			       t->rows[j].pc - r->pc > UM_PLT0_BYTES;
		}
		return true;
	default: /* SIGNAL, UNSUPPORTED */
		return true;
	}
}

uint32_t unwind_maps_fp_flags(const struct unwind_table *t)
{
	size_t i, rbp = 0, rows = 0;
	bool fp_calls = true;

	for (i = 0; i < t->nrows; i++) {
		if (fp_calls && um_row_calls_without_fp(t, i))
			fp_calls = false;
		if (t->rows[i].cfa_kind == UNWIND_CFA_NONE)
			continue;
		rows++;
		if (t->rows[i].cfa_kind == UNWIND_CFA_RBP)
			rbp++;
	}
	if (rows > 0 && rbp * 100 < rows * UM_FP_ROWS_PERCENT)
		return LOWPROF_UNWIND_FILE_NO_FP;
	return fp_calls && rbp > 0 ? LOWPROF_UNWIND_FILE_FP_CALLS : 0;
}

/* Tell the walker that unwind_files changed: its per-CPU copies of entries
 * go at its next sample (bpf/unwind_vma.bpf.h, walk_memos). */
static void um_files_changed(struct unwind_maps *um)
{
	if (um->files_gen != NULL)
		__atomic_fetch_add(um->files_gen, 1, __ATOMIC_SEQ_CST);
}

/* Every deletion from unwind_files goes through here: the bump comes before
 * the caller's UM_REUSE_DELAY_US wait, so no copy outlives it. */
static void um_files_delete(struct unwind_maps *um, const struct lowprof_file_id *key)
{
	if (um->files_fd >= 0)
		bpf_map_delete_elem(um->files_fd, key);
	um_files_changed(um);
}

/* The walker's entry for f: written after f's rows, so it never sees a range
 * before its rows are in place. */
static void um_publish(struct unwind_maps *um, const struct unwind_file *f)
{
	struct lowprof_unwind_file e;

	if (um->files_fd >= 0) {
		unwind_maps_entry(f, &e);
		if (bpf_map_update_elem(um->files_fd, &f->key, &e, BPF_ANY) != 0)
			log_warn_f("unwind_files update: %s", strerror(errno));
	}
	um_files_changed(um);
	um_interp_publish(um, f);
}

/* A table unused since idle_ttl_ns before now (stamps: mono_ns >> 30). */
static bool um_idle(const struct unwind_maps *um, const struct unwind_file *f, uint64_t now_ns)
{
	return f->state == UNWIND_FILE_READY &&
	       f->last_used + (um->idle_ttl_ns >> 30) <= (now_ns >> 30);
}

/* The walker's last use of each table (its stamp in unwind_files), into
 * last_used; with idle_at_ns, of the tables that look idle then only. Our
 * copy of a stamp is never newer than the walker's, so a table that is not
 * idle by it is not idle: the idle check looks up those few (one bpf call
 * each), not every table every time. */
static void um_refresh_last_used(struct unwind_maps *um, uint64_t idle_at_ns)
{
	struct lowprof_unwind_file e;
	size_t i;

	if (um->files_fd < 0)
		return;
	for (i = 0; i < um->nfiles; i++) {
		struct unwind_file *f = um->files[i];

		if (f->state == UNWIND_FILE_READY && (idle_at_ns == 0 || um_idle(um, f, idle_at_ns)) &&
		    bpf_map_lookup_elem(um->files_fd, &f->key, &e) == 0 && e.last_used > f->last_used)
			f->last_used = e.last_used;
	}
}

/* The least recently used entry (of state only_state, or any when
 * only_state < 0), or SIZE_MAX. */
static size_t um_lru_victim(const struct unwind_maps *um, int only_state)
{
	size_t i, victim = SIZE_MAX;

	for (i = 0; i < um->nfiles; i++) {
		const struct unwind_file *f = um->files[i];

		if (only_state >= 0 && (int)f->state != only_state)
			continue;
		if (victim == SIZE_MAX || f->last_used < um->files[victim]->last_used)
			victim = i;
	}
	return victim;
}

static struct unwind_file *um_file_new(struct unwind_maps *um, const struct lowprof_file_id *key)
{
	struct unwind_file *f;
	size_t victim;

	if (um->max_files > 0 && um->nfiles >= um->max_files) {
		um_refresh_last_used(um, 0);
		victim = um_lru_victim(um, -1);
		if (victim == SIZE_MAX)
			return NULL;
		um_file_remove(um, victim, true);
		um->cache_evictions++;
	}
	if (um->nfiles == um->files_cap) {
		size_t ncap = um->files_cap ? um->files_cap * 2 : 64;
		struct unwind_file **n = realloc(um->files, ncap * sizeof(*n));

		if (n == NULL)
			return NULL;
		um->files = n;
		um->files_cap = ncap;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	f->key = *key;
	/* New tables count as just used: the walker's stamps are in the same
	 * unit (about seconds of the monotonic clock). */
	f->last_used = mono_ns() >> 30;
	um->files[um->nfiles++] = f;
	return f;
}

/* A table used this recently (units of 2^30 ns, the walker's stamp: about
 * half a minute) is not evicted to make room for another. */
#define UM_EVICT_MIN_IDLE 30

/* The walker may be using f's rows right now (it copied the entry): after
 * the entry is gone, wait longer than any walk before the rows are reused. */
#define UM_REUSE_DELAY_US 2000

/* dropped: the file goes (its identity is handed to the caller), not only
 * its table. waited: the caller waited UM_REUSE_DELAY_US since deleting the
 * entry itself (several files removed at once wait once). */
static void um_file_remove_waited(struct unwind_maps *um, size_t i, bool dropped, bool waited)
{
	struct unwind_file *f = um->files[i];

	if (f->state == UNWIND_FILE_REFUSED && um->nrefused > 0)
		um->nrefused--;
	um_interp_remove(um, f);
	if (!waited)
		um_files_delete(um, &f->key);
	if (f->state == UNWIND_FILE_READY && f->nslots > 0) {
		if (um->files_fd >= 0 && !waited)
			usleep(UM_REUSE_DELAY_US);
		/* On failure the range leaks (counted as used): harmless, only ENOMEM. */
		if (um_free_insert(um, f->first_row, f->nslots) != 0)
			log_warn_f("free list: out of memory");
	}
	if (dropped && um->ndropped == um->dropped_cap) {
		size_t ncap = um->dropped_cap ? um->dropped_cap * 2 : 16;
		struct lowprof_file_id *n = realloc(um->dropped, ncap * sizeof(*n));

		if (n != NULL) {
			um->dropped = n;
			um->dropped_cap = ncap;
		}
	}
	if (dropped && um->ndropped < um->dropped_cap)
		um->dropped[um->ndropped++] = f->key;
	free(f);
	um->files[i] = um->files[--um->nfiles];
}

static void um_file_remove(struct unwind_maps *um, size_t i, bool dropped)
{
	um_file_remove_waited(um, i, dropped, false);
}

/*
 * Evict tables, least recently used first, until len rows fit; a table the
 * walker used within UM_EVICT_MIN_IDLE is never a victim. Without that rule
 * two large files in use (a compiler and its libraries on a build host) evict
 * each other at every sample of the other, and each time every small table
 * goes with them: the tables of the files being sampled, rebuilt again and
 * again, at a parse of the large file each time. With it the newcomer does not
 * fit (UNWIND_FILE_NO_SPACE, frame pointers for it) until the tables in use
 * go cold.
 */
static int um_alloc_evicting(struct unwind_maps *um, uint32_t len, uint32_t *start)
{
	uint64_t now = mono_ns() >> 30, room = 0;
	size_t i, victim;
	bool refreshed = false;

	while (um_alloc(um, len, start) != 0) {
		if (!refreshed) {
			um_refresh_last_used(um, 0);
			refreshed = true;
			/* Evict nothing when even every evictable table would not make
			 * room: the newcomer would go without rows all the same. */
			for (i = 0; i < um->nfree; i++)
				room += um->free[i].len;
			for (i = 0; i < um->nfiles; i++) {
				const struct unwind_file *f = um->files[i];

				if (f->state == UNWIND_FILE_READY && f->last_used + UM_EVICT_MIN_IDLE <= now)
					room += f->nslots;
			}
			if (room < len)
				return -ENOSPC;
		}
		victim = SIZE_MAX;
		for (i = 0; i < um->nfiles; i++) {
			struct unwind_file *f = um->files[i];

			if (f->state != UNWIND_FILE_READY || f->nslots == 0)
				continue;
			if (f->last_used + UM_EVICT_MIN_IDLE > now)
				continue;
			if (victim == SIZE_MAX || f->last_used < um->files[victim]->last_used)
				victim = i;
		}
		if (victim == SIZE_MAX)
			return -ENOSPC;
		um_file_remove(um, victim, true);
		um->evictions++;
	}
	return 0;
}

struct unwind_file *unwind_maps_add(struct unwind_maps *um, const struct lowprof_file_id *key,
				    const struct unwind_table *t,
				    const struct unwinder_segment *seg, uint32_t nseg,
				    const struct unwind_file_mark *mark)
{
	struct unwind_file *f;
	uint32_t *words = NULL;
	size_t nwords = 0, slots, max;
	uint32_t start;

	size_t i;

	/* A file known without a table (its refusal expired meanwhile, or it
	 * did not fit before) is replaced. */
	for (i = 0; i < um->nfiles; i++) {
		if (um_key_eq(&um->files[i]->key, key)) {
			um_file_remove(um, i, false);
			break;
		}
	}
	f = um_file_new(um, key);
	if (f == NULL)
		return NULL;
	f->nsegments = nseg;
	memcpy(f->seg, seg, nseg * sizeof(*seg));
	if (mark != NULL)
		f->mark = *mark;
	f->flags = unwind_maps_fp_flags(t);
	f->state = UNWIND_FILE_NO_SPACE;
	f->refused_ns = mono_ns();
	if (t->nrows == 0 || t->nrows > um->capacity)
		goto out;
	max = t->nrows * UM_INDEX_WORDS_PER_ROW + UM_INDEX_WORDS_MIN;
	/* Whole row slots of four words, zero-padded. */
	words = calloc(max + 3, sizeof(*words));
	if (words == NULL)
		goto out;
	nwords = unwind_maps_page_index(t->rows, t->nrows, words, max);
	slots = t->nrows + (nwords + 3) / 4;
	if (slots > um->capacity || um_alloc_evicting(um, (uint32_t)slots, &start) != 0)
		goto out;
	if (um_chunks_ensure(um, start, (uint32_t)slots) != 0) {
		um_free_insert(um, start, (uint32_t)slots);
		goto out;
	}
	/*
	 * Rows and index first, then the entry that points at them: the BPF
	 * walker never sees a range before its rows are in place. The same row
	 * layout on both sides (asserted above).
	 */
	um_write(um, start, t->rows, t->nrows);
	um_write(um, start + (uint32_t)t->nrows, words, slots - t->nrows);
	f->first_row = start;
	f->nrows = (uint32_t)t->nrows;
	f->nslots = (uint32_t)slots;
	f->first_pc = t->rows[0].pc;
	f->npages = words[0];
	f->state = UNWIND_FILE_READY;
out:
	free(words);
	um_publish(um, f);
	return f;
}

void unwind_maps_mark_unused(struct unwind_maps *um, const struct lowprof_file_id *key)
{
	struct unwind_file *f = unwind_maps_find(um, key);

	/* Evictable at once, though not idle long enough to expire: the walker's
	 * first use stamps it as used. */
	if (f != NULL)
		f->last_used = (mono_ns() >> 30) - UM_EVICT_MIN_IDLE;
}

struct unwind_file *unwind_maps_add_refused(struct unwind_maps *um,
					    const struct lowprof_file_id *key, uint64_t ttl_ns)
{
	struct unwind_file *f;
	size_t victim;

	f = unwind_maps_find(um, key);
	if (f != NULL)
		return f;
	if (um->max_refused > 0 && um->nrefused >= um->max_refused) {
		victim = um_lru_victim(um, UNWIND_FILE_REFUSED);
		if (victim != SIZE_MAX) {
			um_file_remove(um, victim, true);
			um->cache_evictions++;
		}
	}
	f = um_file_new(um, key);
	if (f != NULL) {
		f->state = UNWIND_FILE_REFUSED;
		/* Expires at refused_ns + refused_ttl_ns: a shorter ttl starts it earlier. */
		f->refused_ns = mono_ns() - (ttl_ns < um->refused_ttl_ns ? um->refused_ttl_ns - ttl_ns : 0);
		um->nrefused++;
		um_publish(um, f);
	}
	return f;
}

uint32_t unwind_maps_empty_chunks(const struct unwind_maps *um, uint32_t *out, uint32_t max)
{
	uint32_t n = 0, k, end;
	size_t i;

	/* The free list is sorted and coalesced: a chunk holds no row exactly
	 * when one free range covers it whole. */
	for (i = 0; i < um->nfree; i++) {
		const struct unwind_range *r = &um->free[i];

		k = (r->start + LOWPROF_UNWIND_CHUNK_ROWS - 1) >> LOWPROF_UNWIND_CHUNK_SHIFT;
		end = (uint32_t)(((uint64_t)r->start + r->len) >> LOWPROF_UNWIND_CHUNK_SHIFT);
		for (; k < end && k < um->max_chunks && n < max; k++) {
			if (um->chunk[k] != NULL)
				out[n++] = k;
		}
	}
	return n;
}

/* Chunks without rows leave unwind_rows and the kernel (a map the loader
 * created: a test's plain buffer stays). A range there later makes it again. */
static void um_release_empty_chunks(struct unwind_maps *um)
{
	uint32_t *empty, n, i, k;

	if (um->rows_fd < 0 || um->nchunks == 0)
		return;
	empty = calloc(um->nchunks, sizeof(*empty));
	if (empty == NULL)
		return;
	n = unwind_maps_empty_chunks(um, empty, um->nchunks);
	for (i = 0; i < n; i++) {
		k = empty[i];
		if (um->chunk_fd[k] < 0)
			continue;
		if (bpf_map_delete_elem(um->rows_fd, &k) != 0) {
			log_warn_f("unwind rows: freeing chunk %u: %s", k, strerror(errno));
			continue;
		}
		um_chunk_unpin(um, k);
		munmap(um->chunk[k], UM_CHUNK_BYTES);
		close(um->chunk_fd[k]);
		um->chunk[k] = NULL;
		um->chunk_fd[k] = -1;
		um->nchunks--;
		um->chunks_released++;
	}
	free(empty);
}

/* Tables the walker has not used for idle_ttl_ns: their entries deleted
 * first, one wait for walks in progress, then their ranges and chunks freed. */
static void um_expire_idle(struct unwind_maps *um, uint64_t now_ns)
{
	size_t i = 0, n = 0;

	um_refresh_last_used(um, now_ns);
	for (i = 0; i < um->nfiles; i++) {
		if (um_idle(um, um->files[i], now_ns)) {
			um_files_delete(um, &um->files[i]->key);
			n++;
		}
	}
	if (n == 0)
		return;
	if (um->files_fd >= 0)
		usleep(UM_REUSE_DELAY_US);
	i = 0;
	while (i < um->nfiles) {
		if (um_idle(um, um->files[i], now_ns)) {
			um_file_remove_waited(um, i, true, true);
			um->idle_expired++;
			continue;
		}
		i++;
	}
	um_release_empty_chunks(um);
}

void unwind_maps_expire(struct unwind_maps *um, uint64_t now_ns)
{
	size_t i = 0;

	if (now_ns - um->idle_checked_ns >= UNWIND_MAPS_IDLE_CHECK_NS) {
		um->idle_checked_ns = now_ns;
		um_expire_idle(um, now_ns);
	}

	while (i < um->nfiles) {
		struct unwind_file *f = um->files[i];

		/* Refused files, and tables over the budget (retried when asked again). */
		if (f->state != UNWIND_FILE_READY && now_ns - f->refused_ns >= um->refused_ttl_ns) {
			um_file_remove(um, i, true);
			um->refused_expired++;
			continue;
		}
		i++;
	}
}

/* Take [start, start + len) out of the free list: 0, or -EINVAL when some
 * of it is not free (another entry holds it). */
static int um_free_take(struct unwind_maps *um, uint32_t start, uint32_t len)
{
	size_t i;

	for (i = 0; i < um->nfree; i++) {
		uint32_t r_start = um->free[i].start, r_len = um->free[i].len;
		uint64_t r_end = (uint64_t)r_start + r_len, end = (uint64_t)start + len;

		if (start < r_start || end > r_end)
			continue;
		if (start == r_start) {
			um_free_take_head(um, i, len);
			return 0;
		}
		/* The head stays in place, the tail (if any) goes back as its own
		 * range (by index: the insert may move the list). */
		um->free[i].len = start - r_start;
		if (end < r_end && um_free_insert(um, (uint32_t)end, (uint32_t)(r_end - end)) != 0) {
			um->free[i].len = r_len;
			return -ENOMEM;
		}
		return 0;
	}
	return -EINVAL;
}

/* Rows [start, start + len) all lie in mapped chunks. */
static bool um_chunks_mapped(const struct unwind_maps *um, uint32_t start, uint32_t len)
{
	uint32_t k;

	if (len == 0 || (uint64_t)start + len > um->capacity)
		return false;
	for (k = start >> LOWPROF_UNWIND_CHUNK_SHIFT; k <= (start + len - 1) >> LOWPROF_UNWIND_CHUNK_SHIFT; k++) {
		if (k >= um->max_chunks || um->chunk[k] == NULL)
			return false;
	}
	return true;
}

int unwind_maps_adopt_entry(struct unwind_maps *um, const struct lowprof_file_id *key,
			    const struct lowprof_unwind_file *e)
{
	const uint32_t *words;
	struct unwind_file *f;
	uint32_t at, npages, nwords, slots, i;
	uint64_t max_words;

	if ((e->flags & LOWPROF_UNWIND_FILE_NO_ROWS) || e->nrows == 0 || e->nsegs == 0 ||
	    e->nsegs > LOWPROF_UNWIND_FILE_SEGS || e->nrows > um->capacity ||
	    !um_chunks_mapped(um, e->first_row, e->nrows + 1) || unwind_maps_find(um, key) != NULL)
		return -EINVAL;
	/* The page index follows the rows; its first word sizes it (unwind_maps_page_index). */
	at = e->first_row + e->nrows;
	words = (const uint32_t *)&um->chunk[at >> LOWPROF_UNWIND_CHUNK_SHIFT]
					   [at & (LOWPROF_UNWIND_CHUNK_ROWS - 1)];
	npages = words[0];
	max_words = (uint64_t)e->nrows * UM_INDEX_WORDS_PER_ROW + UM_INDEX_WORDS_MIN;
	if (npages > 0 && (uint64_t)npages + 3 > max_words)
		return -EINVAL;
	nwords = npages > 0 ? npages + 3 : 1;
	slots = e->nrows + (nwords + 3) / 4;
	if (slots < e->nrows || !um_chunks_mapped(um, e->first_row, slots))
		return -EINVAL;
	if (um_free_take(um, e->first_row, slots) != 0)
		return -EINVAL;
	f = um_file_new(um, key);
	if (f == NULL) {
		um_free_insert(um, e->first_row, slots);
		return -EINVAL;
	}
	f->state = UNWIND_FILE_READY;
	f->first_row = e->first_row;
	f->nrows = e->nrows;
	f->nslots = slots;
	/* From the rows and the index themselves, not from the entry. */
	f->first_pc = um->chunk[e->first_row >> LOWPROF_UNWIND_CHUNK_SHIFT]
			       [e->first_row & (LOWPROF_UNWIND_CHUNK_ROWS - 1)].pc;
	f->npages = npages;
	f->flags = e->flags;
	f->mark.ehdr_hash = e->ehdr_hash;
	f->mark.build_id_vaddr = e->build_id_vaddr;
	f->mark.build_id = e->build_id;
	f->nsegments = e->nsegs;
	for (i = 0; i < e->nsegs; i++) {
		f->seg[i].offset = e->seg[i].off;
		f->seg[i].vaddr = e->seg[i].vaddr;
		f->seg[i].filesz = e->seg[i].size;
		f->seg[i].memsz = e->seg[i].size;
	}
	/* The walker's stamp; a table it never used is evictable at once, as a
	 * start-up table is (unwind_maps_mark_unused). */
	if (e->last_used != 0)
		f->last_used = e->last_used;
	else
		f->last_used = (mono_ns() >> 30) - UM_EVICT_MIN_IDLE;
	f->adopted = true;
	/* unwind_interp is the new program's own (not pinned): filled again. */
	um_interp_publish(um, f);
	return 0;
}

/* Map chunk k again when its pin is the map in its slot; otherwise clear
 * both. Counts into out. */
static void um_adopt_chunk(struct unwind_maps *um, uint32_t k, struct unwind_maps_adoption *out)
{
	struct bpf_map_info info;
	__u32 info_len = sizeof(info), slot_id = 0;
	bool have_slot = bpf_map_lookup_elem(um->rows_fd, &k, &slot_id) == 0;
	char path[PATH_MAX];
	int fd = -1;
	void *rows;

	if (um_chunk_pin_path(um, k, path, sizeof(path)))
		fd = bpf_obj_get(path);
	if (!have_slot && fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (have_slot && fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &info_len) == 0 &&
	    info.id == slot_id && info.type == BPF_MAP_TYPE_ARRAY &&
	    info.value_size == sizeof(struct lowprof_unwind_row) &&
	    info.max_entries == LOWPROF_UNWIND_CHUNK_ROWS && (info.map_flags & BPF_F_MMAPABLE)) {
		rows = mmap(NULL, UM_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (rows != MAP_FAILED) {
			um->chunk[k] = rows;
			um->chunk_fd[k] = fd;
			um->nchunks++;
			out->chunks++;
			return;
		}
	}
	/* A kill between pin and slot, or a pin that failed: neither is used.
	 * Entries with rows there are refused below, and the slot is made again
	 * when a range reaches it. */
	if (have_slot)
		bpf_map_delete_elem(um->rows_fd, &k);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	out->chunks_dropped++;
}

int unwind_maps_adopt(struct unwind_maps *um, struct unwind_maps_adoption *out)
{
	struct lowprof_file_id *keys = NULL, key, *prev = NULL;
	struct lowprof_unwind_file e;
	size_t nkeys = 0, cap = 0, i;
	uint32_t k;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (um->pin_dir == NULL || um->rows_fd < 0 || um->files_fd < 0)
		return 0;
	for (k = 0; k < um->max_chunks; k++)
		um_adopt_chunk(um, k, out);
	/* Keys first: deleting while walking would restart the walk. */
	while (bpf_map_get_next_key(um->files_fd, prev, &key) == 0) {
		if (nkeys == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct lowprof_file_id *n = realloc(keys, ncap * sizeof(*n));

			if (n == NULL) {
				rc = -ENOMEM;
				break;
			}
			keys = n;
			cap = ncap;
		}
		keys[nkeys++] = key;
		prev = &keys[nkeys - 1];
	}
	for (i = 0; i < nkeys; i++) {
		if (bpf_map_lookup_elem(um->files_fd, &keys[i], &e) == 0 &&
		    unwind_maps_adopt_entry(um, &keys[i], &e) == 0) {
			out->files++;
			out->rows += e.nrows;
			continue;
		}
		um_files_delete(um, &keys[i]);
		out->entries_dropped++;
	}
	free(keys);
	/* A walk may still hold a refused entry: wait it out before any of the
	 * rows it named are handed out again. */
	if (out->entries_dropped > 0)
		usleep(UM_REUSE_DELAY_US);
	um_release_empty_chunks(um);
	return rc;
}

size_t unwind_maps_drop_unseen(struct unwind_maps *um)
{
	size_t i, n = 0;

	for (i = 0; i < um->nfiles; i++) {
		if (um->files[i]->adopted) {
			um_files_delete(um, &um->files[i]->key);
			n++;
		}
	}
	if (n == 0)
		return 0;
	if (um->files_fd >= 0)
		usleep(UM_REUSE_DELAY_US);
	i = 0;
	while (i < um->nfiles) {
		if (um->files[i]->adopted) {
			um_file_remove_waited(um, i, true, true);
			continue;
		}
		i++;
	}
	um_release_empty_chunks(um);
	return n;
}

void unwind_maps_usage(const struct unwind_maps *um, struct unwind_maps_usage *u)
{
	size_t i;
	uint64_t free_rows = 0;

	memset(u, 0, sizeof(*u));
	for (i = 0; i < um->nfree; i++)
		free_rows += um->free[i].len;
	u->rows_capacity = um->capacity;
	u->budget_bytes = (uint64_t)um->capacity * sizeof(struct lowprof_unwind_row);
	u->allocated_bytes = (uint64_t)um->nchunks * UM_CHUNK_BYTES;
	u->rows_used = um->capacity - free_rows;
	for (i = 0; i < um->nfiles; i++) {
		switch (um->files[i]->state) {
		case UNWIND_FILE_READY:
			u->files_ready++;
			break;
		case UNWIND_FILE_REFUSED:
			u->files_refused++;
			break;
		case UNWIND_FILE_NO_SPACE:
			u->files_no_space++;
			break;
		}
	}
	u->evictions = um->evictions;
}

int unwind_maps_read_stats(struct unwind_maps *um, struct lowprof_unwind_stats *sum)
{
	struct lowprof_unwind_stats *per_cpu;
	__u32 zero = 0;
	int i, rc = 0;

	memset(sum, 0, sizeof(*sum));
	if (um->stats_fd < 0 || um->ncpus <= 0)
		return -EINVAL;
	per_cpu = calloc((size_t)um->ncpus, sizeof(*per_cpu));
	if (per_cpu == NULL)
		return -ENOMEM;
	if (bpf_map_lookup_elem(um->stats_fd, &zero, per_cpu) != 0) {
		rc = -errno;
		goto out;
	}
	for (i = 0; i < um->ncpus; i++) {
		const __u64 *a = (const __u64 *)&per_cpu[i];
		__u64 *b = (__u64 *)sum;
		size_t k;

		/* Every field is a __u64 counter. */
		for (k = 0; k < sizeof(*sum) / sizeof(__u64); k++)
			b[k] += a[k];
	}
out:
	free(per_cpu);
	return rc;
}
