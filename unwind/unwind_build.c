/* unwind_build: find an ELF file's unwind sections with libelf, run the CFI
 * parser over them and merge the per-FDE rows into one sorted table. */
#include "unwind/eh_frame.h"

#include "common/array_grow.h"
#include "common/errbuf.h"
#include "unwind/unwind_table.h"

#include <elf.h>
#include <endian.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest section libelf is asked to read (or to inflate a compressed
 * one to): a section header may claim any size, and a sparse file makes a
 * huge claim cheap. */
#define UNWIND_MAX_SECTION_SIZE (256u * 1024 * 1024)

/*
 * The most section headers a file may have.  elf_begin() allocates and
 * initialises libelf's state for every section header the file declares
 * (about 200 bytes each) before any other check can run, and with extended
 * numbering (e_shnum 0, the count in section 0's sh_size) a sparse file can
 * declare billions for free: 16M of them cost 3.4 GB.  So the count is read
 * with pread, and checked, before libelf is given the file (preflight()).
 *
 * 65536: every count e_shnum itself can hold (at most 65535) passes, so only
 * extended numbering can be refused, and that only ever appears in
 * relocatable objects (-ffunction-sections -fdata-sections C++ or Pascal
 * .o files, kernel modules): linking merges input sections into a few dozen
 * output sections.  On a Debian 12 host with compilers and their libraries
 * installed, the most in any executable is 48, in any shared library 74 (a
 * few hundred at most with --emit-relocs or many custom sections), and
 * 28,362 in a .o.  No process maps a .o to run it.  At the cap libelf holds
 * about 13 MiB, plus 4 MiB of section headers once they are read.
 */
#define UNWIND_MAX_SECTIONS 65536u


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

/* Where preflight() reads: a file (pread) or an image in memory. */
struct elf_source {
	int fd;
	const uint8_t *image; /* NULL: read fd */
	uint64_t size;        /* of the file (fstat) or the image */
};

/* n bytes at off, all of them within the source: 0, or -1. */
static int source_read(const struct elf_source *src, uint64_t off, void *buf, size_t n)
{
	size_t done = 0;

	if (off > src->size || src->size - off < n)
		return -1;
	if (src->image) {
		memcpy(buf, src->image + off, n);
		return 0;
	}
	while (done < n) {
		ssize_t r = pread(src->fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

/*
 * What must hold before libelf sees the file (UNWIND_MAX_SECTIONS): an
 * x86_64 ELF64 little-endian header, a section header table of 64-byte
 * entries lying whole within the file, and at most UNWIND_MAX_SECTIONS
 * entries in it, counting extended numbering (section 0's sh_size when
 * e_shnum is 0, its sh_link when e_shstrndx is SHN_XINDEX).  *nsections is
 * the count, to compare with libelf's own once it has read the header.
 */
static int preflight(const struct elf_source *src, uint64_t *nsections, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh0;
	uint64_t shoff, n, strndx;

	if (source_read(src, 0, &eh, sizeof(eh)) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return errbuf_fail(-EINVAL, err, errlen, "not an ELF file");
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    le16toh(eh.e_machine) != EM_X86_64)
		return errbuf_fail(-EINVAL, err, errlen, "not a 64-bit little-endian x86_64 ELF file");
	/* Files without section headers (sstrip) are refused: reading
	 * PT_GNU_EH_FRAME alone is not supported. */
	shoff = le64toh(eh.e_shoff);
	if (shoff == 0)
		return errbuf_fail(-EINVAL, err, errlen, "no section header table within the file");
	if (le16toh(eh.e_shentsize) != sizeof(Elf64_Shdr))
		return errbuf_fail(-EINVAL, err, errlen, "section header size %u, not %zu",
				   le16toh(eh.e_shentsize), sizeof(Elf64_Shdr));
	n = le16toh(eh.e_shnum);
	strndx = le16toh(eh.e_shstrndx);
	if (n == 0 || strndx == SHN_XINDEX) {
		if (source_read(src, shoff, &sh0, sizeof(sh0)) < 0)
			return errbuf_fail(-EINVAL, err, errlen, "no section header table within the file");
		if (n == 0)
			n = le64toh(sh0.sh_size);
		if (strndx == SHN_XINDEX)
			strndx = le32toh(sh0.sh_link);
	}
	if (n > UNWIND_MAX_SECTIONS)
		return errbuf_fail(-EINVAL, err, errlen, "%llu section headers, more than %u",
				   (unsigned long long)n, UNWIND_MAX_SECTIONS);
	/* libelf silently shows no sections when the table lies past the end
	 * of the file (a truncated file): refuse that explicitly. */
	if (shoff > src->size || (src->size - shoff) / sizeof(Elf64_Shdr) < n)
		return errbuf_fail(-EINVAL, err, errlen, "no section header table within the file");
	if (strndx >= n)
		return errbuf_fail(-EINVAL, err, errlen,
				   "no section name table: index %llu of %llu sections",
				   (unsigned long long)strndx, (unsigned long long)n);
	*nsections = n;
	return 0;
}

/* nsections: the section header count preflight() checked. */
static int build_elf(Elf *elf, uint64_t nsections, struct unwind_table *out, char *err,
		     size_t errlen)
{
	struct section_ref eh = { 0 }, hdr = { 0 }, dbg = { 0 };
	struct dwarf_ptr_bases bases = { 0 };
	struct collect col;
	struct eh_frame_counts counts;
	GElf_Ehdr eh_hdr;
	GElf_Shdr str_sh;
	Elf_Scn *scn = NULL;
	size_t shstrndx, shnum;
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
	/* preflight() bounded the section header table before libelf read it;
	 * libelf's count is compared with it (the file's owner may have
	 * rewritten the header in between). */
	if (elf_getshdrnum(elf, &shnum) < 0 || shnum != nsections) {
		errbuf_fail(-EINVAL, err, errlen, "the section header count changed while read");
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
			.is_debug_frame = false, .bases = bases, .prior_rows = col.nrows,
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
			.is_debug_frame = true, .bases = bases, .prior_rows = col.nrows,
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

static int build_common(Elf *elf, uint64_t nsections, struct unwind_table *out, char *err,
			size_t errlen)
{
	struct unwind_table t;
	int rc;

	memset(&t, 0, sizeof(t));
	rc = build_elf(elf, nsections, &t, err, errlen);
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
	struct elf_source src = { .fd = fd };
	uint64_t nsections;
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
	src.size = (uint64_t)st.st_size;
	rc = preflight(&src, &nsections, err, errlen);
	if (rc < 0)
		return rc;
	/* ELF_C_READ copies what it needs with pread rather than mapping the
	 * file: the file's owner truncating it mid-parse cannot SIGBUS us, and
	 * bytes cannot change under the parser once read.  Between preflight()'s
	 * read of the header and libelf's they can: build_elf() refuses the file
	 * when libelf's section count differs, and what libelf allocated for it
	 * in that window is left to the unwinder's address-space cap. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return errbuf_fail(-EINVAL, err, errlen, "not an ELF file: %s", elf_errmsg(-1));
	rc = build_common(elf, nsections, out, err, errlen);
	elf_end(elf);
	return rc;
}

int unwind_table_build_mem(const void *image, size_t size, struct unwind_table *out,
			   char *err, size_t errlen)
{
	struct elf_source src = { .fd = -1, .size = size };
	uint64_t nsections;
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
	/* elf_memory() allocates per section header too (~200 bytes each
	 * beside the image's 64). */
	src.image = (const uint8_t *)copy;
	rc = preflight(&src, &nsections, err, errlen);
	if (rc < 0)
		goto cleanup;
	rc = -EINVAL;
	elf = elf_memory(copy, size);
	if (!elf) {
		errbuf_fail(-EINVAL, err, errlen, "not an ELF file: %s", elf_errmsg(-1));
		goto cleanup;
	}
	rc = build_common(elf, nsections, out, err, errlen);
	elf_end(elf);
cleanup:
	free(copy);
	return rc;
}
