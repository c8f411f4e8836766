#include "exporter/symbols/elf_symbols.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/array_grow.h"
#include "common/errbuf.h"
#include "exporter/symbols/symtab_common.h"

/* A build-id longer than this is not one any linker writes; refuse to hex it. */
#define ES_BUILD_ID_MAX 64

/*
 * A symbol while reading: aliases are still there. Its name points into
 * libelf's copy of the string section (alive until elf_end, after es_finish)
 * and is name_len bytes, cut at a version's '@' or ELF_SYMBOLS_NAME_MAX:
 * only the names kept are copied, once.
 */
struct es_raw {
	uint64_t addr;
	uint64_t size;
	const char *name;
	uint32_t name_len;
	uint8_t from_dynsym;
	uint8_t bind;
};

/*
 * A kept symbol: 16 bytes, the address first (symtab_upto). A file's table
 * stays while the window uses the file (a libc holds thousands), so the
 * parse's 40-byte entries and their aliases' names are not kept. A size past
 * 32 bits (no real function has one) is held as UINT32_MAX.
 */
struct es_sym {
	uint64_t addr;
	uint32_t name_off;
	uint32_t size;
};

struct es_load {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
	bool exec;
};

struct elf_symbols {
	struct es_sym *syms; /* exactly count of them once read */
	size_t count;
	char *strtab;        /* the kept symbols' names, exactly str_len bytes */
	size_t str_len;
	size_t raw_name_bytes; /* the raw names' bytes, bounded by ELF_SYMBOLS_STRTAB_MAX */
	struct es_raw *raw;  /* while reading only */
	size_t raw_count, raw_cap;
	struct es_load *loads;
	size_t nloads;
	char *build_id;
	bool has_symtab;
	size_t skipped; /* past ELF_SYMBOLS_STRTAB_MAX */
};

static int es_add_sym(struct elf_symbols *e, const char *name, const GElf_Sym *sym, bool dyn)
{
	/* Versioned definitions read "__libc_start_main@@GLIBC_2.34" in a .symtab
	 * (libc's debug file, for one): the function is the part before the '@'. */
	const char *at = name[0] != '@' ? strchr(name, '@') : NULL;
	size_t len = at != NULL ? (size_t)(at - name) : strnlen(name, ELF_SYMBOLS_NAME_MAX + 1);
	int ret;

	/* A crafted file may give every symbol one huge name: each copy is bounded,
	 * and so are all of them together. */
	if (len > ELF_SYMBOLS_NAME_MAX)
		len = ELF_SYMBOLS_NAME_MAX;
	if (e->raw_name_bytes + len + 1 > ELF_SYMBOLS_STRTAB_MAX) {
		e->skipped++;
		return 0;
	}
	ret = array_grow((void **)&e->raw, &e->raw_cap, e->raw_count + 1, sizeof(*e->raw));
	if (ret)
		return ret;
	e->raw[e->raw_count++] = (struct es_raw){
		.addr = sym->st_value, .size = sym->st_size, .name = name, .name_len = (uint32_t)len,
		.from_dynsym = dyn, .bind = (uint8_t)GELF_ST_BIND(sym->st_info),
	};
	e->raw_name_bytes += len + 1;
	return 0;
}

static bool es_range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int es_read_loads(struct elf_symbols *e, Elf *elf, uint64_t size, char *err, size_t errlen)
{
	size_t phnum, i;

	if (elf_getphdrnum(elf, &phnum) != 0) {
		errbuf_set(err, errlen, "bad program headers: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	e->loads = calloc(phnum ? phnum : 1, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			errbuf_set(err, errlen, "program header %zu unreadable: %s", i, elf_errmsg(-1));
			return -EINVAL;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		if (!es_range_ok(ph.p_offset, ph.p_filesz, size)) {
			errbuf_set(err, errlen, "PT_LOAD %zu extends past the end of the image", i);
			return -EINVAL;
		}
		e->loads[e->nloads++] = (struct es_load){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz,
			.exec = (ph.p_flags & PF_X) != 0,
		};
	}
	return 0;
}

/* Returns 1 when a build-id was found in this note data, 0 when not, <0 on error. */
static int es_scan_notes(struct elf_symbols *e, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off, i;
	GElf_Nhdr nh;

	while (off < data->d_size) {
		next = gelf_getnote(data, off, &nh, &name_off, &desc_off);
		if (next == 0)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= ES_BUILD_ID_MAX) {
			const unsigned char *d = (const unsigned char *)data->d_buf + desc_off;

			e->build_id = malloc(nh.n_descsz * 2 + 1);
			if (!e->build_id)
				return -ENOMEM;
			for (i = 0; i < nh.n_descsz; i++)
				snprintf(e->build_id + i * 2, 3, "%02x", d[i]);
			return 1;
		}
		off = next;
	}
	return 0;
}

static int es_read_symtab(struct elf_symbols *e, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			  char *err, size_t errlen)
{
	bool dyn = sh->sh_type == SHT_DYNSYM;
	size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT), n, i;
	Elf_Data *data = elf_getdata(scn, NULL);
	int ret;

	if (!data || entsize == 0 || sh->sh_entsize != entsize) {
		errbuf_set(err, errlen, "%s unreadable: %s", dyn ? ".dynsym" : ".symtab",
			 data ? "bad entry size" : elf_errmsg(-1));
		return -EINVAL;
	}
	n = data->d_size / entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_value == 0)
			continue;
		/* elf_strptr bounds-checks st_name against the string section. */
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		ret = es_add_sym(e, name, &sym, dyn);
		if (ret)
			return ret;
	}
	if (!dyn)
		e->has_symtab = true;
	return 0;
}

static int es_read_sections(struct elf_symbols *e, Elf *elf, uint64_t size,
			    char *err, size_t errlen)
{
	Elf_Scn *scn = NULL;
	int ret;

	/* Check every section's bytes lie in the image first: this is what refuses truncation. */
	for (scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			errbuf_set(err, errlen, "section header unreadable: %s", elf_errmsg(-1));
			return -EINVAL;
		}
		if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL &&
		    !es_range_ok(sh.sh_offset, sh.sh_size, size)) {
			errbuf_set(err, errlen, "section %zu extends past the end of the image",
				 elf_ndxscn(scn));
			return -EINVAL;
		}
	}
	for (scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
			ret = es_read_symtab(e, elf, scn, &sh, err, errlen);
			if (ret)
				return ret;
		} else if (sh.sh_type == SHT_NOTE && !e->build_id) {
			Elf_Data *data = elf_getdata(scn, NULL);

			ret = data ? es_scan_notes(e, data) : 0;
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* Images without section headers still carry their build-id in PT_NOTE. */
static int es_read_phdr_notes(struct elf_symbols *e, Elf *elf)
{
	size_t phnum, i;
	int ret;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return 0;
	for (i = 0; i < phnum && !e->build_id; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!data)
			continue;
		ret = es_scan_notes(e, data);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int es_leading_underscores(const struct es_raw *r)
{
	uint32_t n = 0;

	while (n < r->name_len && r->name[n] == '_')
		n++;
	return (int)n;
}

static int es_bind_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/*
 * Is x the preferred name over y, its alias at the same address? .symtab
 * over .dynsym, sized over unsized, fewer leading underscores ("getpid" over
 * "__getpid"), global over weak over local, then by name for determinism.
 */
static bool es_preferred(const struct es_raw *x, const struct es_raw *y)
{
	int ux, uy, r;

	if (x->from_dynsym != y->from_dynsym)
		return x->from_dynsym < y->from_dynsym;
	if ((x->size == 0) != (y->size == 0))
		return x->size != 0;
	ux = es_leading_underscores(x);
	uy = es_leading_underscores(y);
	if (ux != uy)
		return ux < uy;
	r = es_bind_rank(x->bind) - es_bind_rank(y->bind);
	if (r)
		return r < 0;
	r = memcmp(x->name, y->name, x->name_len < y->name_len ? x->name_len : y->name_len);
	if (r)
		return r < 0;
	return x->name_len < y->name_len;
}

/* The sort's entry: an address, the raw symbol it came from, and (once its
 * aliases are merged) the size it keeps. */
struct es_order {
	uint64_t addr;
	uint32_t raw;
	uint32_t size;
};

/*
 * Sort, merge aliases, and keep 16-byte symbols and their names exactly sized.
 * Only 16-byte (address, index) pairs are sorted, by address alone; sorting
 * the 40-byte raw entries with a comparison that read names was most of the
 * time to read a libc's debug file (10,000 symbols). es_preferred then picks
 * the name among each address's aliases, which are few.
 */
static int es_finish(struct elf_symbols *e)
{
	struct es_order *order;
	size_t i, j, n = 0, len = 0;
	char *names;

	if (e->raw_count == 0)
		return 0;
	/* ELF_SYMBOLS_STRTAB_MAX bounds the symbols far below 2^32. */
	order = malloc(e->raw_count * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < e->raw_count; i++) {
		order[i] = (struct es_order){ .addr = e->raw[i].addr, .raw = (uint32_t)i };
	}
	if (symtab_sort_by_addr(order, e->raw_count, sizeof(*order))) {
		free(order);
		return -ENOMEM;
	}
	/* One entry per address, written at n <= i: over entries already read. */
	for (i = 0; i < e->raw_count; i = j) {
		const struct es_raw *best = &e->raw[order[i].raw];
		uint64_t size = best->size;

		for (j = i + 1; j < e->raw_count && order[j].addr == order[i].addr; j++) {
			const struct es_raw *alias = &e->raw[order[j].raw];

			if (alias->size > size)
				size = alias->size;
			if (es_preferred(alias, best))
				best = alias;
		}
		/* An unsized name covers what a sized alias says the function does. */
		if (best->size != 0)
			size = best->size;
		order[n++] = (struct es_order){
			.addr = best->addr, .raw = (uint32_t)(best - e->raw),
			.size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
		};
		len += best->name_len + 1;
	}
	e->syms = malloc(n * sizeof(*e->syms));
	names = malloc(len);
	if (!e->syms || !names) {
		free(names);
		free(order);
		return -ENOMEM;
	}
	for (i = 0, len = 0; i < n; i++) {
		const struct es_raw *kept = &e->raw[order[i].raw];

		memcpy(names + len, kept->name, kept->name_len);
		names[len + kept->name_len] = '\0';
		e->syms[i] = (struct es_sym){ .addr = order[i].addr, .name_off = (uint32_t)len,
					      .size = order[i].size };
		len += kept->name_len + 1;
	}
	free(order);
	e->count = n;
	e->strtab = names;
	e->str_len = len;
	free(e->raw);
	e->raw = NULL;
	e->raw_count = e->raw_cap = 0;
	return 0;
}

static int es_read(Elf *elf, uint64_t size, struct elf_symbols **out, char *err, size_t errlen)
{
	struct elf_symbols *e = NULL;
	GElf_Ehdr eh;
	size_t shnum;
	int ret = -EINVAL;

	if (elf_kind(elf) != ELF_K_ELF) {
		errbuf_set(err, errlen, "not an ELF image");
		goto cleanup;
	}
	if (!gelf_getehdr(elf, &eh)) {
		errbuf_set(err, errlen, "bad ELF header: %s", elf_errmsg(-1));
		goto cleanup;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		errbuf_set(err, errlen, "ELF type %u is neither executable nor shared object",
			 (unsigned)eh.e_type);
		goto cleanup;
	}
	/*
	 * libelf quietly reports zero sections when the section header table lies
	 * past the end of the file, so compare with the header's own count.
	 */
	if (elf_getshdrnum(elf, &shnum) != 0 || (eh.e_shnum != 0 && shnum != eh.e_shnum) ||
	    (eh.e_shoff != 0 && shnum == 0) ||
	    (shnum > 0 && !es_range_ok(eh.e_shoff, (uint64_t)shnum * eh.e_shentsize, size)) ||
	    !es_range_ok(eh.e_phoff, (uint64_t)eh.e_phnum * eh.e_phentsize, size)) {
		errbuf_set(err, errlen, "ELF header tables extend past the end of the image");
		goto cleanup;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		ret = -ENOMEM;
		goto cleanup;
	}
	ret = es_read_loads(e, elf, size, err, errlen);
	if (!ret)
		ret = es_read_sections(e, elf, size, err, errlen);
	if (!ret && !e->build_id)
		ret = es_read_phdr_notes(e, elf);
	if (ret == -ENOMEM)
		errbuf_set(err, errlen, "out of memory reading ELF symbols");
	if (ret)
		goto cleanup;
	if (e->nloads == 0) {
		errbuf_set(err, errlen, "ELF image has no PT_LOAD segment");
		ret = -EINVAL;
		goto cleanup;
	}
	ret = es_finish(e);
	if (ret) {
		errbuf_set(err, errlen, "out of memory reading ELF symbols");
		goto cleanup;
	}
	*out = e;
	e = NULL;
cleanup:
	elf_symbols_free(e);
	return ret;
}

int elf_symbols_open_fd(int fd, struct elf_symbols **out, char *err, size_t errlen)
{
	struct stat st;
	Elf *elf;
	int ret;

	*out = NULL;
	if (fstat(fd, &st) != 0) {
		errbuf_set(err, errlen, "fstat: %s", strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		errbuf_set(err, errlen, "not a regular file");
		return -EINVAL;
	}
	elf_version(EV_CURRENT);
	/*
	 * ELF_C_READ rather than READ_MMAP: libelf preads only the sections we
	 * ask for, and a file truncated under us gives a short read, not SIGBUS.
	 */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		errbuf_set(err, errlen, "elf_begin: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	ret = es_read(elf, (uint64_t)st.st_size, out, err, errlen);
	elf_end(elf);
	return ret;
}

int elf_symbols_open_mem(const void *image, size_t len, struct elf_symbols **out,
			 char *err, size_t errlen)
{
	char *copy;
	Elf *elf;
	int ret;

	*out = NULL;
	if (!image || len == 0) {
		errbuf_set(err, errlen, "empty ELF image");
		return -EINVAL;
	}
	/* A private copy: libelf may convert data in place, and the source may be read-only. */
	copy = malloc(len);
	if (!copy) {
		errbuf_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(copy, image, len);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, len);
	if (!elf) {
		errbuf_set(err, errlen, "elf_memory: %s", elf_errmsg(-1));
		free(copy);
		return -EINVAL;
	}
	ret = es_read(elf, len, out, err, errlen);
	elf_end(elf);
	free(copy);
	return ret;
}

const char *elf_symbols_lookup(const struct elf_symbols *e, uint64_t vaddr, uint64_t *offset)
{
	const struct es_sym *s;
	size_t lo;

	if (!e || e->count == 0)
		return NULL;
	lo = symtab_upto(e->syms, e->count, sizeof(*e->syms), vaddr);
	if (lo == 0)
		return NULL;
	s = &e->syms[lo - 1];
	if (s->size != 0 && vaddr - s->addr >= s->size)
		return NULL;
	if (offset)
		*offset = vaddr - s->addr;
	return e->strtab + s->name_off;
}

int elf_symbols_file_offset_to_vaddr(const struct elf_symbols *e, uint64_t off, uint64_t *vaddr)
{
	int pass;
	size_t i;

	/* Executable segments first: that is where sampled instructions live. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < e->nloads; i++) {
			const struct es_load *l = &e->loads[i];

			if ((pass == 0) != l->exec)
				continue;
			if (off >= l->offset && off - l->offset < l->filesz) {
				*vaddr = off - l->offset + l->vaddr;
				return 0;
			}
		}
	}
	return -ENOENT;
}

const char *elf_symbols_build_id(const struct elf_symbols *e)
{
	return e ? e->build_id : NULL;
}

size_t elf_symbols_count(const struct elf_symbols *e)
{
	return e ? e->count : 0;
}

bool elf_symbols_has_symtab(const struct elf_symbols *e)
{
	return e && e->has_symtab;
}

void elf_symbols_free(struct elf_symbols *e)
{
	if (!e)
		return;
	free(e->syms);
	free(e->strtab);
	free(e->raw);
	free(e->loads);
	free(e->build_id);
	free(e);
}

size_t elf_symbols_memory(const struct elf_symbols *e)
{
	if (e == NULL)
		return 0;
	return sizeof(*e) + e->count * sizeof(*e->syms) + e->str_len +
	       e->raw_cap * sizeof(*e->raw) +
	       e->nloads * sizeof(*e->loads) + (e->build_id != NULL ? strlen(e->build_id) + 1 : 0);
}

size_t elf_symbols_skipped(const struct elf_symbols *e)
{
	return e->skipped;
}
