/* unwind_build: find an ELF file's unwind sections with libelf, run the CFI
 * parser over them and merge the per-FDE rows into one sorted table. */
#include "unwind/eh_frame.h"

#include "common/array_grow.h"
#include "common/errbuf.h"
#include "unwind/unwind_table.h"

#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The largest section libelf is asked to read (or to inflate a compressed
 * one to): a section header may claim any size, and a sparse file makes a
 * huge claim cheap. */
#define UNWIND_MAX_SECTION_SIZE (256u * 1024 * 1024)


/* One FDE's rows, as collected before sorting. */
struct span {
	uint64_t start, end;
	size_t first;   /* index into collect.rows */
	size_t n;
	uint8_t prio;   /* 0: .eh_frame, 1: .debug_frame (loses ties) */
	size_t seq;     /* section order, for a stable sort */
};

struct collect {
	struct unwind_row *rows;
	size_t nrows, cap;
	struct span *spans;
	size_t nspans, scap;
	uint8_t prio;
};

struct section_ref {
	const uint8_t *data;
	size_t size;
	uint64_t addr;
	bool found;
};

static int collect_fde(void *arg, const struct eh_frame_fde *fde, const struct unwind_row *rows,
		       size_t nrows, char *err, size_t errlen)
{
	struct collect *col = arg;
	struct span *s;

	if (col->nrows + nrows > UNWIND_TABLE_MAX_ROWS)
		return errbuf_fail(-EINVAL, err, errlen, "more than %u rows", UNWIND_TABLE_MAX_ROWS);
	if (array_grow((void **)&col->rows, &col->cap, col->nrows + nrows, sizeof(*rows)) < 0 ||
	    array_grow((void **)&col->spans, &col->scap, col->nspans + 1, sizeof(*s)) < 0)
		return errbuf_fail(-ENOMEM, err, errlen, "out of memory");
	memcpy(col->rows + col->nrows, rows, nrows * sizeof(*rows));
	s = &col->spans[col->nspans];
	s->start = fde->pc_begin;
	s->end = fde->pc_end;
	s->first = col->nrows;
	s->n = nrows;
	s->prio = col->prio;
	s->seq = col->nspans;
	col->nspans++;
	col->nrows += nrows;
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static bool same_rule(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->cfa_kind == b->cfa_kind && a->cfa_off == b->cfa_off &&
	       a->rbp_off == b->rbp_off && a->rbp_kind == b->rbp_kind;
}

static void append(struct unwind_table *t, const struct unwind_row *r)
{
	/* A row that repeats its predecessor's rule adds nothing: merge. */
	if (t->nrows > 0 && same_rule(&t->rows[t->nrows - 1], r))
		return;
	t->rows[t->nrows++] = *r;
}

/* Sort the FDEs and lay their rows end to end; an address between two FDEs
 * gets a NONE row so it never inherits the previous function's rule. */
static int merge(struct collect *col, struct unwind_table *t, char *err, size_t errlen)
{
	uint64_t covered = 0;
	bool any = false;

	if (col->nspans > 0)
		qsort(col->spans, col->nspans, sizeof(*col->spans), span_cmp);
	/* At most every row plus one gap row per FDE. */
	t->rows = calloc(col->nrows + col->nspans + 1, sizeof(*t->rows));
	if (!t->rows)
		return errbuf_fail(-ENOMEM, err, errlen, "out of memory");
	for (size_t i = 0; i < col->nspans; i++) {
		const struct span *s = &col->spans[i];
		struct unwind_row gap = { .pc = covered, .cfa_kind = UNWIND_CFA_NONE };

		/* Overlap: the FDE sorted first (lower address, or .eh_frame on a
		 * tie) wins, and the later one is dropped whole. */
		if (any && s->start < covered)
			continue;
		if (any && s->start > covered) {
			append(t, &gap);
			t->stats.n_gap++;
		}
		for (size_t k = 0; k < s->n; k++)
			append(t, &col->rows[s->first + k]);
		covered = s->end;
		any = true;
		t->stats.n_fde_used++;
	}
	if (any) {
		struct unwind_row tail = { .pc = covered, .cfa_kind = UNWIND_CFA_NONE };

		append(t, &tail);
	}
	if (t->nrows > UNWIND_TABLE_MAX_ROWS)
		return errbuf_fail(-EINVAL, err, errlen, "more than %u rows", UNWIND_TABLE_MAX_ROWS);
	for (size_t i = 0; i < t->nrows; i++) {
		switch (t->rows[i].cfa_kind) {
		case UNWIND_CFA_PLT:
			t->stats.n_plt++;
			break;
		case UNWIND_CFA_SIGNAL:
			t->stats.n_signal++;
			break;
		case UNWIND_CFA_END:
			t->stats.n_end++;
			break;
		case UNWIND_CFA_UNSUPPORTED:
			t->stats.n_unsupported++;
			break;
		}
	}
	return 0;
}

/* Section contents, decompressing a SHF_COMPRESSED .debug_frame in place. */
static int section_data(Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
			struct section_ref *ref, char *err, size_t errlen)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS)
		return 0; /* a separate debug file's placeholder */
	/* Checked before a byte is read: libelf reads a section whole (a
	 * compressed one too, for its compression header). */
	if (sh->sh_size > UNWIND_MAX_SECTION_SIZE)
		return errbuf_fail(-EINVAL, err, errlen, "%s: %llu bytes", name, (unsigned long long)sh->sh_size);
	if (sh->sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		if (!gelf_getchdr(scn, &ch) || ch.ch_size > UNWIND_MAX_SECTION_SIZE)
			return errbuf_fail(-EINVAL, err, errlen, "%s: bad compression header", name);
		if (elf_compress(scn, 0, 0) < 0)
			return errbuf_fail(-EINVAL, err, errlen, "%s: %s", name, elf_errmsg(-1));
	}
	d = elf_getdata(scn, NULL);
	if (!d)
		return errbuf_fail(-EINVAL, err, errlen, "%s: %s", name, elf_errmsg(-1));
	if (d->d_size > 0 && !d->d_buf)
		return errbuf_fail(-EINVAL, err, errlen, "%s: no data", name);
	if (d->d_size > UNWIND_MAX_SECTION_SIZE)
		return errbuf_fail(-EINVAL, err, errlen, "%s: %zu bytes", name, d->d_size);
	ref->data = d->d_buf;
	ref->size = d->d_size;
	ref->addr = sh->sh_addr;
	ref->found = true;
	return 0;
}

/* file_size: the file's (or image's) size, known without reading it. */
static int build_elf(Elf *elf, size_t file_size, struct unwind_table *out, char *err,
		     size_t errlen)
{
	struct section_ref eh = { 0 }, hdr = { 0 }, dbg = { 0 };
	struct dwarf_ptr_bases bases = { 0 };
	struct collect col;
	struct eh_frame_counts counts;
	GElf_Ehdr eh_hdr;
	GElf_Shdr str_sh;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int rc = -EINVAL;

	memset(&col, 0, sizeof(col));
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh_hdr)) {
		errbuf_fail(-EINVAL, err, errlen, "not an ELF file");
		goto cleanup;
	}
	if (eh_hdr.e_ident[EI_CLASS] != ELFCLASS64 || eh_hdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh_hdr.e_machine != EM_X86_64) {
		errbuf_fail(-EINVAL, err, errlen, "not a 64-bit little-endian x86_64 ELF file");
		goto cleanup;
	}
	/* libelf silently shows no sections when the header table lies past
	 * the end of the file (a truncated file): refuse that explicitly.
	 * Files without section headers (sstrip) are refused as well; reading
	 * PT_GNU_EH_FRAME alone is not supported. (Not elf_rawfile() for the
	 * size: on a file it reads the whole file, whatever its size.) */
	if (eh_hdr.e_shoff == 0 || eh_hdr.e_shentsize == 0 || eh_hdr.e_shoff > file_size ||
	    (file_size - eh_hdr.e_shoff) / eh_hdr.e_shentsize < eh_hdr.e_shnum) {
		errbuf_fail(-EINVAL, err, errlen, "no section header table within the file");
		goto cleanup;
	}
	if (elf_getshdrstrndx(elf, &shstrndx) < 0) {
		errbuf_fail(-EINVAL, err, errlen, "no section name table: %s", elf_errmsg(-1));
		goto cleanup;
	}
	/* The first elf_strptr() reads the name table whole. */
	if (!gelf_getshdr(elf_getscn(elf, shstrndx), &str_sh)) {
		errbuf_fail(-EINVAL, err, errlen, "no section name table: %s", elf_errmsg(-1));
		goto cleanup;
	}
	if (str_sh.sh_type != SHT_NOBITS && str_sh.sh_size > UNWIND_MAX_SECTION_SIZE) {
		errbuf_fail(-EINVAL, err, errlen, "section name table: %llu bytes",
			    (unsigned long long)str_sh.sh_size);
		goto cleanup;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		struct section_ref *ref = NULL;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".eh_frame") == 0 && !eh.found)
			ref = &eh;
		else if (strcmp(name, ".eh_frame_hdr") == 0 && !hdr.found)
			ref = &hdr;
		else if (strcmp(name, ".debug_frame") == 0 && !dbg.found)
			ref = &dbg;
		else if (strcmp(name, ".text") == 0)
			bases.text = sh.sh_addr;
		else if (strcmp(name, ".got") == 0)
			bases.data = sh.sh_addr;
		if (ref && section_data(scn, &sh, name, ref, err, errlen) < 0)
			goto cleanup;
	}

	out->stats.hdr_fde_count = -1;
	if (hdr.found) {
		uint64_t ptr, count;

		/* Only a statistic and a cross-check: the full walk of .eh_frame
		 * finds every FDE anyway, and does not trust the header's table. */
		if (eh_frame_hdr_parse(hdr.data, hdr.size, hdr.addr, &ptr, &count, err, errlen) == 0)
			out->stats.hdr_fde_count = (int64_t)count;
	}
	if (eh.found) {
		struct eh_frame_section sec = {
			.data = eh.data, .size = eh.size, .vaddr = eh.addr,
			.is_debug_frame = false, .bases = bases,
		};

		col.prio = 0;
		if (eh_frame_parse(&sec, collect_fde, &col, &counts, err, errlen) < 0)
			goto cleanup;
		out->stats.n_cie = counts.n_cie_parsed;
		out->stats.n_fde = counts.n_fde;
		out->stats.n_fde_bad_cfi = counts.n_bad_cfi;
	}
	if (dbg.found) {
		struct eh_frame_section sec = {
			.data = dbg.data, .size = dbg.size, .vaddr = dbg.addr,
			.is_debug_frame = true, .bases = bases,
		};

		col.prio = 1;
		if (eh_frame_parse(&sec, collect_fde, &col, &counts, err, errlen) < 0)
			goto cleanup;
		out->stats.n_cie += counts.n_cie_parsed;
		out->stats.n_debug_fde = counts.n_fde;
		out->stats.n_fde_bad_cfi += counts.n_bad_cfi;
	}
	if (merge(&col, out, err, errlen) < 0)
		goto cleanup;
	rc = 0;
cleanup:
	free(col.rows);
	free(col.spans);
	return rc;
}

static int build_common(Elf *elf, size_t file_size, struct unwind_table *out, char *err,
			size_t errlen)
{
	struct unwind_table t;
	int rc;

	memset(&t, 0, sizeof(t));
	rc = build_elf(elf, file_size, &t, err, errlen);
	if (rc == 0)
		rc = unwind_table_validate(&t, err, errlen);
	if (rc < 0) {
		unwind_table_free(&t);
		return rc;
	}
	*out = t;
	return 0;
}

int unwind_table_build_fd(int fd, struct unwind_table *out, char *err, size_t errlen)
{
	struct stat st;
	Elf *elf;
	int rc;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errbuf_fail(-EINVAL, err, errlen, "libelf: %s", elf_errmsg(-1));
	if (fstat(fd, &st) != 0)
		return errbuf_fail(-errno, err, errlen, "fstat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return errbuf_fail(-EINVAL, err, errlen, "not a regular file");
	/* ELF_C_READ copies what it needs with pread rather than mapping the
	 * file: the file's owner truncating it mid-parse cannot SIGBUS us, and
	 * bytes cannot change under the parser once read. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return errbuf_fail(-EINVAL, err, errlen, "not an ELF file: %s", elf_errmsg(-1));
	rc = build_common(elf, (size_t)st.st_size, out, err, errlen);
	elf_end(elf);
	return rc;
}

int unwind_table_build_mem(const void *image, size_t size, struct unwind_table *out,
			   char *err, size_t errlen)
{
	char *copy;
	Elf *elf;
	int rc = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errbuf_fail(-EINVAL, err, errlen, "libelf: %s", elf_errmsg(-1));
	if (size == 0)
		return errbuf_fail(-EINVAL, err, errlen, "not an ELF file: empty");
	/* libelf may write into the image it is given (decompression), so it
	 * works on a private copy. */
	copy = malloc(size);
	if (!copy)
		return errbuf_fail(-ENOMEM, err, errlen, "out of memory");
	memcpy(copy, image, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		errbuf_fail(-EINVAL, err, errlen, "not an ELF file: %s", elf_errmsg(-1));
		goto cleanup;
	}
	rc = build_common(elf, size, out, err, errlen);
	elf_end(elf);
cleanup:
	free(copy);
	return rc;
}
