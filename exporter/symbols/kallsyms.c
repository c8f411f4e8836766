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
#define KALLSYMS_CORE ((uint32_t)-1)

struct ks_sym {
	uint64_t addr;
	uint64_t end;
	uint32_t name_off; /* into strtab while building; resolved below */
	uint32_t module;   /* index into modules, or KALLSYMS_CORE */
	uint32_t seq;      /* line order, to keep the sort stable */
	char type;
	const char *name;
};

struct ks_module {
	uint32_t name_off;
	const char *name;
	uint64_t base;
};

struct kallsyms {
	struct ks_sym *syms;
	size_t count, cap;
	struct ks_module *modules;
	size_t nmodules, modules_cap;
	char *strtab;
	size_t str_len, str_cap;
	size_t malformed;
	size_t nonzero; /* lines whose address was not zero */
	size_t lines;   /* well-formed lines of any type */
	uint64_t core_base;
};

static int ks_add_string(struct kallsyms *k, const char *s, size_t len, uint32_t *off)
{
	int ret = array_grow((void **)&k->strtab, &k->str_cap, k->str_len + len + 1, 1);

	if (ret)
		return ret;
	if (k->str_len > UINT32_MAX)
		return -EOVERFLOW;
	memcpy(k->strtab + k->str_len, s, len);
	k->strtab[k->str_len + len] = '\0';
	*off = (uint32_t)k->str_len;
	k->str_len += len + 1;
	return 0;
}

/* Modules list their symbols together, so comparing with the last one seen is enough. */
static int ks_module_index(struct kallsyms *k, const char *name, size_t len, uint32_t *idx)
{
	size_t i;
	int ret;

	for (i = k->nmodules; i > 0; i--) {
		const char *m = k->strtab + k->modules[i - 1].name_off;

		if (strlen(m) == len && memcmp(m, name, len) == 0) {
			*idx = (uint32_t)(i - 1);
			return 0;
		}
		if (k->nmodules - i >= 4)
			break;
	}
	ret = array_grow((void **)&k->modules, &k->modules_cap, k->nmodules + 1, sizeof(*k->modules));
	if (ret)
		return ret;
	ret = ks_add_string(k, name, len, &k->modules[k->nmodules].name_off);
	if (ret)
		return ret;
	k->modules[k->nmodules].base = UINT64_MAX;
	*idx = (uint32_t)k->nmodules++;
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
	uint32_t module = KALLSYMS_CORE;
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
	k->lines++;
	if (addr != 0)
		k->nonzero++;
	if (mod) {
		ret = ks_module_index(k, mod, mod_len, &module);
		if (ret)
			return ret;
	}
	/* Non-text symbols are kept for now: they bound the text symbols before them. */
	ret = array_grow((void **)&k->syms, &k->cap, k->count + 1, sizeof(*k->syms));
	if (ret)
		return ret;
	k->syms[k->count] = (struct ks_sym){ .addr = addr, .module = module, .type = type,
					     .seq = (uint32_t)k->count };
	if (ks_is_text(type)) {
		ret = ks_add_string(k, name, name_len, &k->syms[k->count].name_off);
		if (ret)
			return ret;
	}
	k->count++;
	return 0;
}

static int ks_cmp(const void *a, const void *b)
{
	const struct ks_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
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

/* Sort, compute ends, drop non-text symbols and aliases, resolve string pointers. */
static void ks_finish(struct kallsyms *k)
{
	size_t i, j, n = 0;
	bool have_core = false;

	qsort(k->syms, k->count, sizeof(*k->syms), ks_cmp);
	for (i = 0; i < k->count; i = j) {
		struct ks_sym best = k->syms[i];
		uint64_t next = 0;
		bool have_next = false;

		for (j = i + 1; j < k->count && k->syms[j].addr == best.addr; j++) {
			if (ks_is_text(k->syms[j].type) &&
			    (!ks_is_text(best.type) || ks_rank(k->syms[j].type) < ks_rank(best.type)))
				best = k->syms[j];
		}
		if (!ks_is_text(best.type))
			continue;
		if (j < k->count && k->syms[j].module == best.module) {
			next = k->syms[j].addr;
			have_next = true;
		}
		best.end = best.addr + KALLSYMS_TAIL_MAX;
		if (best.end < best.addr)
			best.end = UINT64_MAX;
		if (have_next && next < best.end)
			best.end = next;
		k->syms[n++] = best;
	}
	k->count = n;
	for (i = 0; i < k->nmodules; i++)
		k->modules[i].name = k->strtab + k->modules[i].name_off;
	k->core_base = 0;
	for (i = 0; i < n; i++) {
		struct ks_sym *s = &k->syms[i];

		s->name = k->strtab + s->name_off;
		if (s->module == KALLSYMS_CORE) {
			/* The first core symbol is the lowest, even at address 0. */
			if (!have_core)
				k->core_base = s->addr;
			have_core = true;
		} else if (s->addr < k->modules[s->module].base) {
			k->modules[s->module].base = s->addr;
		}
	}
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
	ks_finish(k);
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
	if (addr >= s->end)
		return -ENOENT;
	res->name = s->name;
	res->offset = addr - s->addr;
	if (s->module == KALLSYMS_CORE) {
		res->module = NULL;
		res->module_base = k->core_base;
	} else {
		res->module = k->modules[s->module].name;
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
	free(k);
}
