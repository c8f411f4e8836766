/* option_table: table-driven command-line parsing (see the header). */
#include "settings/option_table.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/number_parse.h"

/* More options than any lowprof program has. */
#define OPTION_TABLE_MAX 64
/* getopt_long's value for a long-only option: past every short name. */
#define OPTION_LONG_BASE 256

union option_value {
	bool flag;
	unsigned u;
	int i;
	size_t z;
	double d;
	const char *s;
};

static size_t option_kind_size(enum option_kind kind)
{
	switch (kind) {
	case OPTION_FLAG:
		return sizeof(bool);
	case OPTION_UINT:
	case OPTION_ENUM:
		return sizeof(unsigned);
	case OPTION_INT:
		return sizeof(int);
	case OPTION_SIZE:
		return sizeof(size_t);
	case OPTION_DOUBLE:
		return sizeof(double);
	case OPTION_STRING:
		return sizeof(const char *);
	}
	return 0;
}

static bool option_is_integer(enum option_kind kind)
{
	return kind == OPTION_UINT || kind == OPTION_INT || kind == OPTION_SIZE;
}

/* Decimal digits only: strtoull alone would take spaces and a wrapping '-'. */
static int option_parse_u64(const char *s, unsigned long long *out)
{
	char *end;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

/* "1 to 86400 seconds", "a power of two from 4 to 1048576", "dwarf, fp or auto". */
static void option_expect_text(const struct option_spec *o, char *buf, size_t len)
{
	size_t i, n, used = 0;

	buf[0] = '\0';
	if (o->expect != NULL) {
		snprintf(buf, len, "%s", o->expect);
		return;
	}
	if (o->kind == OPTION_ENUM) {
		for (n = 0; o->names[n] != NULL; n++)
			;
		for (i = 0; i < n && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 i == 0 ? "" : i + 1 == n ? " or " : ", ", o->names[i]);
		return;
	}
	if (o->kind == OPTION_FLAG || o->kind == OPTION_STRING)
		return;
	if (o->what != NULL)
		used = (size_t)snprintf(buf, len, "%s from ", o->what);
	if (used >= len)
		return;
	if (option_is_integer(o->kind))
		snprintf(buf + used, len - used, "%llu to %llu%s", (unsigned long long)o->min,
			 (unsigned long long)o->max, o->unit ? o->unit : "");
	else
		snprintf(buf + used, len - used, "%g to %g%s", o->min, o->max, o->unit ? o->unit : "");
}

static int option_invalid(const struct option_spec *o, const char *value, char *err, size_t errlen)
{
	char expect[160], label[64];

	option_expect_text(o, expect, sizeof(expect));
	if (o->label != NULL)
		snprintf(label, sizeof(label), "%s", o->label);
	else
		snprintf(label, sizeof(label), "--%s", o->name);
	return errbuf_fail(-EINVAL, err, errlen, "invalid %s '%s'%s%s", label, value,
			   expect[0] != '\0' ? ": expected " : "", expect);
}

/* The value in range and of the kind: 0 with *v set, or -1. */
static int option_convert(const struct option_spec *o, const char *value, union option_value *v)
{
	unsigned long long u = 0;
	size_t i;

	switch (o->kind) {
	case OPTION_FLAG:
		v->flag = true;
		return 0;
	case OPTION_STRING:
		v->s = value;
		return 0;
	case OPTION_ENUM:
		for (i = 0; o->names[i] != NULL; i++) {
			if (strcmp(value, o->names[i]) == 0) {
				v->u = (unsigned)i;
				return 0;
			}
		}
		return -1;
	case OPTION_DOUBLE:
		if (number_parse_seconds(value, o->max, &v->d) != 0 || v->d < o->min ||
		    ((o->flags & OPTION_ABOVE_MIN) && v->d <= o->min))
			return -1;
		return 0;
	case OPTION_UINT:
	case OPTION_INT:
	case OPTION_SIZE:
		break;
	}
	if (option_parse_u64(value, &u) != 0 || (double)u < o->min || (double)u > o->max ||
	    ((o->flags & OPTION_ABOVE_MIN) && (double)u <= o->min) ||
	    ((o->flags & OPTION_POW2) && (u & (u - 1)) != 0))
		return -1;
	if (o->kind == OPTION_UINT)
		v->u = (unsigned)u;
	else if (o->kind == OPTION_INT)
		v->i = (int)u;
	else
		v->z = (size_t)u;
	return 0;
}

static int option_take(const struct option_spec *o, const char *value, char *err, size_t errlen)
{
	union option_value v;
	size_t size = option_kind_size(o->kind);
	int rc;

	memset(&v, 0, sizeof(v));
	if (option_convert(o, value, &v) != 0)
		return option_invalid(o, value, err, errlen);
	if (o->check != NULL) {
		if (err != NULL && errlen > 0)
			err[0] = '\0';
		rc = o->check(o, value, &v, err, errlen);
		if (rc != 0)
			return err != NULL && errlen > 0 && err[0] != '\0'
				       ? rc
				       : option_invalid(o, value, err, errlen);
	}
	if (o->count != NULL) {
		if (*o->count == o->max_count)
			return errbuf_fail(-EINVAL, err, errlen, "too many --%s options (at most %zu)",
					   o->name, o->max_count);
		memcpy((char *)o->dest + *o->count * size, &v, size);
		(*o->count)++;
	} else if (o->dest != NULL) {
		memcpy(o->dest, &v, size);
	}
	if (o->seen != NULL)
		*o->seen = true;
	return 0;
}

/* After getopt's '?': an unknown short option letter, in optopt. (A known
 * letter there is a flag given a value, "--verbose=1"; a long option that is
 * not known leaves optopt 0.) */
static bool option_unknown_short(const struct option_spec *specs, int n)
{
	int i;

	/* A byte above 0x7f comes back negative: getopt reads the letter as a char. */
	if (optopt == 0 || optopt >= OPTION_LONG_BASE)
		return false;
	for (i = 0; i < n; i++) {
		if (specs[i].short_name == optopt)
			return false;
	}
	return true;
}

int option_table_parse(const struct option_parser *p, int argc, char **argv, char *err,
		       size_t errlen)
{
	struct option longopts[OPTION_TABLE_MAX + 1];
	char shortopts[2 * OPTION_TABLE_MAX + 2], *sp = shortopts;
	const struct option_spec *o;
	int c, i, n, sub_argc = argc - p->first + 1;
	char **sub_argv = argv + p->first - 1;
	const char *hint = p->hint ? p->hint : "";

	/* Options start at argv[first]: getopt sees argv[first - 1] as the program name. */
	*sp++ = ':'; /* a missing value is reported as such, not as an unknown option */
	for (n = 0; p->specs[n].name != NULL; n++) {
		if (n == OPTION_TABLE_MAX)
			return errbuf_fail(-E2BIG, err, errlen, "more than %d options", OPTION_TABLE_MAX);
		o = &p->specs[n];
		longopts[n] = (struct option){o->name,
					      o->kind == OPTION_FLAG ? no_argument : required_argument,
					      NULL, o->short_name ? o->short_name : OPTION_LONG_BASE + n};
		if (o->short_name) {
			*sp++ = o->short_name;
			if (o->kind != OPTION_FLAG)
				*sp++ = ':';
		}
	}
	*sp = '\0';
	longopts[n] = (struct option){NULL, 0, NULL, 0};
	optind = 0; /* a full reset: the tests parse many command lines in one process */
	opterr = 0;
	for (;;) {
		c = getopt_long(sub_argc, sub_argv, shortopts, longopts, NULL);
		if (c == -1)
			break;
		if (c == ':')
			return errbuf_fail(-EINVAL, err, errlen, "option '%s' needs a value",
					   sub_argv[optind - 1]);
		o = NULL;
		if (c >= OPTION_LONG_BASE && c < OPTION_LONG_BASE + n)
			o = &p->specs[c - OPTION_LONG_BASE];
		for (i = 0; o == NULL && c != '?' && i < n; i++) {
			if (p->specs[i].short_name == c)
				o = &p->specs[i];
		}
		if (o == NULL && option_unknown_short(p->specs, n))
			/* Inside a cluster ("-xv") optind has not moved on yet, so
			 * argv[optind - 1] would name the argument before it. */
			return errbuf_fail(-EINVAL, err, errlen, "unknown option '-%c'%s", (char)optopt,
					   hint);
		if (o == NULL)
			return errbuf_fail(-EINVAL, err, errlen, "unknown option '%s'%s",
					   sub_argv[optind - 1], hint);
		if (option_take(o, o->kind == OPTION_FLAG ? "" : optarg, err, errlen) != 0)
			return -EINVAL;
		if (o->flags & OPTION_STOP)
			return OPTION_TABLE_STOP;
	}
	if (p->operands != NULL) {
		*p->operands = optind + p->first - 1;
		return 0;
	}
	if (optind != sub_argc)
		return errbuf_fail(-EINVAL, err, errlen, "unexpected argument '%s'%s", sub_argv[optind],
				   hint);
	return 0;
}

int option_table_set(const struct option_spec *specs, const char *name, const char *value,
		     char *err, size_t errlen)
{
	struct option_spec o;
	const char *const *w;
	static const char *const yes[] = {"true", "yes", "on", "1", NULL};
	static const char *const no[] = {"false", "no", "off", "0", NULL};

	for (; specs->name != NULL; specs++) {
		if (strcmp(specs->name, name) == 0)
			break;
	}
	if (specs->name == NULL)
		return errbuf_fail(-ENOENT, err, errlen, "unknown key");
	if (specs->flags & OPTION_CLI_ONLY)
		return errbuf_fail(-EPERM, err, errlen, "only accepted on the command line");
	o = *specs;
	if (o.label == NULL)
		o.label = "value";
	if (o.kind != OPTION_FLAG)
		return option_take(&o, value, err, errlen);
	for (w = yes; *w != NULL; w++) {
		if (strcmp(value, *w) == 0)
			return option_take(&o, "", err, errlen);
	}
	for (w = no; *w != NULL; w++) {
		if (strcmp(value, *w) == 0) {
			if (o.dest != NULL)
				*(bool *)o.dest = false;
			return 0;
		}
	}
	return errbuf_fail(-EINVAL, err, errlen, "invalid value '%s': expected true or false", value);
}

size_t option_table_count(const struct option_spec *spec)
{
	return spec->count != NULL ? *spec->count : 1;
}

int option_table_format(const struct option_spec *spec, size_t index, char *buf, size_t len)
{
	union option_value v;
	size_t size = option_kind_size(spec->kind);

	memset(&v, 0, sizeof(v));
	if (spec->dest != NULL && index < option_table_count(spec))
		memcpy(&v, (const char *)spec->dest + index * size, size);
	switch (spec->kind) {
	case OPTION_FLAG:
		return snprintf(buf, len, "%s", v.flag ? "true" : "false");
	case OPTION_UINT:
		return snprintf(buf, len, "%u", v.u);
	case OPTION_INT:
		return snprintf(buf, len, "%d", v.i);
	case OPTION_SIZE:
		return snprintf(buf, len, "%zu", v.z);
	case OPTION_DOUBLE:
		/* The shortest text that reads back as the same double. */
		snprintf(buf, len, "%.15g", v.d);
		if (strtod(buf, NULL) == v.d)
			return (int)strlen(buf);
		return snprintf(buf, len, "%.17g", v.d);
	case OPTION_STRING:
		return snprintf(buf, len, "%s", v.s != NULL ? v.s : "");
	case OPTION_ENUM:
		return snprintf(buf, len, "%s", spec->names[v.u]);
	}
	return snprintf(buf, len, "?");
}

void option_table_copy(const struct option_spec *to, const struct option_spec *from)
{
	size_t n = option_table_count(from);

	if (to->dest == NULL || from->dest == NULL)
		return;
	if (to->count != NULL)
		*to->count = n;
	memcpy(to->dest, from->dest, n * option_kind_size(from->kind));
}
