#include "exporter/symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/array_grow.h"
#include "common/errbuf.h"
#include "exporter/symbols/symtab_common.h"

/* /proc/kallsyms is 10-20 MiB on big kernels; refuse anything absurd. */
#define KALLSYMS_MAX_FILE (256u << 20)

/*
 * kallsyms has no sizes. A symbol ends where the next symbol of any type
 * begins; the last symbol of a module (or of the whole table) has no
 * successor in the same region, so it is given this much room and no more,
 * rather than swallowing every address up to the next module.
 */
#define KALLSYMS_TAIL_MAX (64 * 1024)
#define KALLSYMS_CORE UINT16_MAX
/* Module indices are 16 bits: a line naming a module past this many is skipped. */
#define KALLSYMS_MAX_MODULES (UINT16_MAX - 1)

/*
 * A line while parsing. Non-text symbols are kept until the sort: they bound
 * the text symbols before them. Freed once the table is built.
 */
struct ks_line {
	uint64_t addr;
	uint32_t name_off; /* into the text being parsed (text symbols only) */
	uint16_t module;   /* index into modules, or KALLSYMS_CORE */
	char type;
};

/* A line of kallsyms is about 45 bytes on x86-64 (16 digits, the type, a
 * name, a module for some): the parse's line array starts sized for the
 * whole text at this many bytes a line, so that it rarely grows (each
 * doubling copied it, and its pages were faulted in again). */
#define KALLSYMS_BYTES_PER_LINE_GUESS 32

/*
 * A kept text symbol: 16 bytes, the address first (symtab_upto). A host's
 * kallsyms holds 100k+ of them for the exporter's whole life, so neither an
 * end address nor a name pointer is stored: the extent is at most
 * KALLSYMS_TAIL_MAX (size - 1 fits 16 bits) and the name an offset.
 */
struct ks_sym {
	uint64_t addr;
	uint32_t name_off;
	uint16_t size_m1; /* covers [addr, addr + size_m1 + 1) */
	uint16_t module;
};

struct ks_module {
	uint32_t name_off; /* into the text while parsing, then into strtab */
	uint32_t name_len; /* while parsing */
	uint64_t base;
};

struct kallsyms {
	struct ks_sym *syms;
	size_t count;
	struct ks_module *modules;
	size_t nmodules, modules_cap;
	/* Names, built exactly sized once parsed; a name that ends the previous
	 * symbol's (__pfx_NAME, then NAME 16 bytes on: half of a 6.x kernel's
	 * text symbols) points into it rather than being stored twice. */
	char *strtab;
	size_t str_len;
	size_t malformed;
	size_t nonzero; /* lines whose address was not zero */
	size_t lines;   /* well-formed lines of any type */
	uint64_t core_base;
	/* While parsing only. Names are not copied: a line keeps its name's
	 * place in the text, and only the kept names are copied, once, into
	 * strtab (copying every name into a growing buffer first was half of
	 * the parse's time with its page faults). */
	const char *text;
	size_t text_len;
	struct ks_line *tmp;
	size_t tmp_count, tmp_cap;
	size_t name_bytes; /* text symbols' and modules' names, a NUL each: strtab's bound */
};

/* The length of the name at text offset off: up to the blank or line end
 * that ended it when parsed, or a NUL byte in it (names are C strings). */
static size_t ks_name_len(const struct kallsyms *k, uint32_t off)
{
	const char *p = k->text + off, *end = k->text + k->text_len;
	const char *q = p;

	while (q < end && *q != '\t' && *q != ' ' && *q != '\n' && *q != '\0')
		q++;
	return (size_t)(q - p);
}

/* Modules list their symbols together, so comparing with the last one seen is enough. */
/* Returns 0, 1 when past KALLSYMS_MAX_MODULES (the line is skipped), or -errno. */
static int ks_module_index(struct kallsyms *k, const char *name, size_t len, uint16_t *idx)
{
	size_t i;
	int ret;

	for (i = k->nmodules; i > 0; i--) {
		const struct ks_module *m = &k->modules[i - 1];

		if (m->name_len == len && memcmp(k->text + m->name_off, name, len) == 0) {
			*idx = (uint16_t)(i - 1);
			return 0;
		}
		if (k->nmodules - i >= 4)
			break;
	}
	if (k->nmodules >= KALLSYMS_MAX_MODULES)
		return 1;
	ret = array_grow((void **)&k->modules, &k->modules_cap, k->nmodules + 1, sizeof(*k->modules));
	if (ret)
		return ret;
	k->modules[k->nmodules] = (struct ks_module){ .name_off = (uint32_t)(name - k->text),
						      .name_len = (uint32_t)len,
						      .base = UINT64_MAX };
	k->name_bytes += len + 1;
	*idx = (uint16_t)k->nmodules++;
	return 0;
}

static bool ks_is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * One line, without its newline. Returns 0 when kept or ignored, 1 when
 * malformed, negative on allocation failure.
 */
static int ks_parse_line(struct kallsyms *k, const char *p, const char *end)
{
	uint64_t addr = 0;
	const char *name, *mod = NULL;
	size_t digits = 0, name_len, mod_len = 0;
	uint16_t module = KALLSYMS_CORE;
	char type;
	int ret;

	while (p < end && digits <= 16) {
		char c = *p;
		unsigned v;

		if (c >= '0' && c <= '9')
			v = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = (unsigned)(c - 'A' + 10);
		else
			break;
		addr = addr << 4 | v;
		digits++;
		p++;
	}
	if (digits == 0 || digits > 16 || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return 1;
	type = p[1];
	name = p + 3;
	p = name;
	while (p < end && *p != '\t' && *p != ' ')
		p++;
	name_len = (size_t)(p - name);
	if (name_len == 0)
		return 1;
	while (p < end && (*p == '\t' || *p == ' '))
		p++;
	if (p < end) {
		const char *close;

		if (*p != '[')
			return 1;
		mod = p + 1;
		close = memchr(mod, ']', (size_t)(end - mod));
		if (!close || close == mod)
			return 1;
		mod_len = (size_t)(close - mod);
		for (p = close + 1; p < end; p++)
			if (*p != ' ' && *p != '\t' && *p != '\r')
				return 1;
	}
	if (mod) {
		ret = ks_module_index(k, mod, mod_len, &module);
		if (ret)
			return ret;
	}
	k->lines++;
	if (addr != 0)
		k->nonzero++;
	/* Non-text symbols are kept for now: they bound the text symbols before them. */
	ret = array_grow((void **)&k->tmp, &k->tmp_cap, k->tmp_count + 1, sizeof(*k->tmp));
	if (ret)
		return ret;
	k->tmp[k->tmp_count] = (struct ks_line){ .addr = addr, .module = module, .type = type };
	if (ks_is_text(type)) {
		k->tmp[k->tmp_count].name_off = (uint32_t)(name - k->text);
		k->name_bytes += name_len + 1;
	}
	k->tmp_count++;
	return 0;
}

/* Among aliases at one address: global before local, T before W, then line order. */
static int ks_rank(char type)
{
	switch (type) {
	case 'T': return 0;
	case 'W': return 1;
	case 't': return 2;
	default: return 3;
	}
}

/* Appends len bytes of name and a NUL to the final strtab, sized by the caller. */
static uint32_t ks_put_name(struct kallsyms *k, const char *name, size_t len)
{
	uint32_t off = (uint32_t)k->str_len;

	memcpy(k->strtab + off, name, len);
	k->strtab[off + len] = '\0';
	k->str_len += len + 1;
	return off;
}

/*
 * Sort, compute extents, drop non-text symbols and aliases, and build the
 * final table and names exactly sized; the parse's arrays are freed.
 */
static int ks_finish(struct kallsyms *k)
{
	size_t i, j, n = 0, prev_len = 0;
	uint32_t prev_off = 0;
	bool have_core = false, have_prev = false;
	struct ks_sym sym;

	_Static_assert(sizeof(struct ks_sym) == sizeof(struct ks_line),
		       "symbols are written over the lines they come from");

	/* Stable: aliases stay in line order, which breaks ks_rank's ties. */
	if (symtab_sort_by_addr(k->tmp, k->tmp_count, sizeof(*k->tmp)))
		return -ENOMEM;
	/* The names at most the parse's. The symbols are written over the lines
	 * (both 16 bytes; the n-th kept one comes from line n or a later one,
	 * read before it is written), not into fresh pages. */
	k->strtab = malloc(k->name_bytes + 1);
	if (!k->strtab)
		return -ENOMEM;
	for (i = 0; i < k->tmp_count; i = j) {
		struct ks_line best = k->tmp[i];
		uint64_t size = KALLSYMS_TAIL_MAX;
		const char *name;
		size_t len;

		for (j = i + 1; j < k->tmp_count && k->tmp[j].addr == best.addr; j++) {
			if (ks_is_text(k->tmp[j].type) &&
			    (!ks_is_text(best.type) || ks_rank(k->tmp[j].type) < ks_rank(best.type)))
				best = k->tmp[j];
		}
		if (!ks_is_text(best.type))
			continue;
		/* Up to the next symbol of any type in the same region (above best.addr). */
		if (j < k->tmp_count && k->tmp[j].module == best.module &&
		    k->tmp[j].addr - best.addr < size)
			size = k->tmp[j].addr - best.addr;
		name = k->text + best.name_off;
		len = ks_name_len(k, best.name_off);
		sym = (struct ks_sym){ .addr = best.addr, .size_m1 = (uint16_t)(size - 1),
				       .module = best.module };
		if (have_prev && len <= prev_len &&
		    memcmp(k->strtab + prev_off + (prev_len - len), name, len) == 0) {
			sym.name_off = prev_off + (uint32_t)(prev_len - len);
		} else {
			sym.name_off = ks_put_name(k, name, len);
			prev_off = sym.name_off;
			prev_len = len;
			have_prev = true;
		}
		memcpy(&k->tmp[n++], &sym, sizeof(sym));
	}
	k->syms = (struct ks_sym *)(void *)k->tmp;
	k->tmp = NULL;
	k->count = n;
	for (i = 0; i < k->nmodules; i++) {
		const char *m = k->text + k->modules[i].name_off;

		k->modules[i].name_off = ks_put_name(k, m, strnlen(m, k->modules[i].name_len));
		k->modules[i].name_len = 0;
	}
	k->text = NULL;
	/* Give back what sharing and dropping saved (a shrinking realloc cannot fail for good). */
	if (n > 0) {
		struct ks_sym *q = realloc(k->syms, n * sizeof(*k->syms));

		if (q)
			k->syms = q;
	}
	if (k->str_len > 0) {
		char *q = realloc(k->strtab, k->str_len);

		if (q)
			k->strtab = q;
	}
	if (k->nmodules > 0 && k->nmodules < k->modules_cap) {
		struct ks_module *q = realloc(k->modules, k->nmodules * sizeof(*k->modules));

		if (q) {
			k->modules = q;
			k->modules_cap = k->nmodules;
		}
	}
	k->core_base = 0;
	for (i = 0; i < n; i++) {
		struct ks_sym *s = &k->syms[i];

		if (s->module == KALLSYMS_CORE) {
			/* The first core symbol is the lowest, even at address 0. */
			if (!have_core)
				k->core_base = s->addr;
			have_core = true;
		} else if (s->addr < k->modules[s->module].base) {
			k->modules[s->module].base = s->addr;
		}
	}
	return 0;
}

int kallsyms_parse(const char *buf, size_t len, struct kallsyms **out, char *err, size_t errlen)
{
	struct kallsyms *k = calloc(1, sizeof(*k));
	const char *p = buf, *end = buf + len;
	int ret = 0;

	*out = NULL;
	if (!k) {
		errbuf_set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (len > UINT32_MAX) {
		/* Names are kept as 32-bit offsets into the text while parsing. */
		errbuf_set(err, errlen, "kallsyms: %zu bytes, more than a table can index", len);
		ret = -EFBIG;
		goto cleanup;
	}
	k->text = buf;
	k->text_len = len;
	if (array_grow((void **)&k->tmp, &k->tmp_cap, len / KALLSYMS_BYTES_PER_LINE_GUESS + 1,
		       sizeof(*k->tmp))) {
		errbuf_set(err, errlen, "out of memory parsing kallsyms");
		ret = -ENOMEM;
		goto cleanup;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		if (line_end > p) {
			ret = ks_parse_line(k, p, line_end);
			if (ret < 0) {
				errbuf_set(err, errlen, "out of memory parsing kallsyms");
				goto cleanup;
			}
			k->malformed += (size_t)ret;
			ret = 0;
		}
		p = line_end + 1;
	}
	if (k->lines == 0) {
		if (k->malformed)
			errbuf_set(err, errlen, "kallsyms: none of %zu lines is well-formed", k->malformed);
		else
			errbuf_set(err, errlen, "kallsyms: empty input");
		ret = -EINVAL;
		goto cleanup;
	}
	ret = ks_finish(k);
	if (ret < 0) {
		errbuf_set(err, errlen, "out of memory building the kallsyms table");
		goto cleanup;
	}
	*out = k;
	k = NULL;
cleanup:
	kallsyms_free(k);
	return ret;
}

static int ks_parse_text(const char *buf, size_t len, void *out, char *err, size_t errlen)
{
	return kallsyms_parse(buf, len, out, err, errlen);
}

int kallsyms_load(const char *path, struct kallsyms **out, char *err, size_t errlen)
{
	*out = NULL;
	return symtab_load_text(-1, path, KALLSYMS_MAX_FILE, ks_parse_text, out, err, errlen);
}

int kallsyms_load_fd(int fd, const char *name, struct kallsyms **out, char *err, size_t errlen)
{
	*out = NULL;
	return symtab_load_text(fd, name, KALLSYMS_MAX_FILE, ks_parse_text, out, err, errlen);
}

int kallsyms_lookup(const struct kallsyms *k, uint64_t addr, struct kallsyms_result *res)
{
	const struct ks_sym *s;
	size_t lo;

	if (!k || k->count == 0 || kallsyms_restricted(k))
		return -ENOENT;
	/* The last symbol whose address is <= addr. */
	lo = symtab_upto(k->syms, k->count, sizeof(*k->syms), addr);
	if (lo == 0)
		return -ENOENT;
	s = &k->syms[lo - 1];
	if (addr - s->addr > s->size_m1)
		return -ENOENT;
	res->name = k->strtab + s->name_off;
	res->offset = addr - s->addr;
	if (s->module == KALLSYMS_CORE) {
		res->module = NULL;
		res->module_base = k->core_base;
	} else {
		res->module = k->strtab + k->modules[s->module].name_off;
		res->module_base = k->modules[s->module].base;
	}
	return 0;
}

bool kallsyms_restricted(const struct kallsyms *k)
{
	return k && k->lines > 0 && k->nonzero == 0;
}

size_t kallsyms_count(const struct kallsyms *k)
{
	return k ? k->count : 0;
}

size_t kallsyms_malformed(const struct kallsyms *k)
{
	return k ? k->malformed : 0;
}

size_t kallsyms_memory(const struct kallsyms *k)
{
	if (!k)
		return 0;
	return sizeof(*k) + k->count * sizeof(*k->syms) + k->modules_cap * sizeof(*k->modules) +
	       k->str_len;
}

uint64_t kallsyms_core_base(const struct kallsyms *k)
{
	return k ? k->core_base : 0;
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->modules);
	free(k->strtab);
	free(k->tmp);
	free(k);
}
