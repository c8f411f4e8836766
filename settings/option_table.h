/*
 * Command-line parsing from a table: each option says its names, the kind of
 * value it takes, the accepted range and where the value goes; the parser
 * does the conversions, the range checks and every error line. All four
 * option parsers (supervisor, loader, controller, exporter) use it, so that
 * a bad value is refused the same way everywhere: one line naming the problem,
 *   invalid --interval '0': expected 1 to 86400 seconds
 * and the caller exits with status 2.
 *
 * getopt_long does the scanning underneath: --name=value, --name value, -x
 * value, unique abbreviations of long names, options after operands.
 */
#ifndef LOWPROF_SETTINGS_OPTION_TABLE_H
#define LOWPROF_SETTINGS_OPTION_TABLE_H

#include <stdbool.h>
#include <stddef.h>

enum option_kind {
	OPTION_FLAG,   /* no value: bool = true */
	OPTION_UINT,   /* unsigned, decimal digits only, in [min, max] */
	OPTION_INT,    /* int (a pid, a uid), decimal digits only, in [min, max] */
	OPTION_SIZE,   /* size_t, decimal digits only, in [min, max] */
	OPTION_DOUBLE, /* double, "10" or "0.5", in [min, max] */
	OPTION_STRING, /* const char *: the argument itself */
	OPTION_ENUM,   /* unsigned: the index of the word in names */
};

/* OPTION_FLAG only: parsing stops at this option (--help, --version), which
 * wins over anything after it; option_table_parse returns OPTION_TABLE_STOP. */
#define OPTION_STOP 0x1u
/* Numeric kinds: a power of two. */
#define OPTION_POW2 0x2u
/* Numeric kinds: min itself is refused (a duration above 0). */
#define OPTION_ABOVE_MIN 0x4u
/* Not a key of the configuration file (--help, --config, values that must not
 * be written where other users may read them): option_table_set refuses it. */
#define OPTION_CLI_ONLY 0x8u

struct option_spec {
	const char *name;         /* long name without the dashes; NULL ends the table */
	char short_name;          /* 0: none */
	enum option_kind kind;
	void *dest;               /* where the value goes, of the kind's type */
	double min, max;          /* numeric kinds: the accepted range */
	const char *const *names; /* OPTION_ENUM: the words, NULL-terminated */
	unsigned flags;           /* OPTION_STOP, OPTION_POW2, OPTION_ABOVE_MIN */
	/* Repeatable when count is set: dest is an array of max_count values of
	 * the kind's type, *count of them filled. */
	size_t *count;
	size_t max_count;
	bool *seen;               /* set to true when the option is given */
	/*
	 * The error line is "invalid LABEL 'VALUE': expected EXPECT". label
	 * defaults to --name. expect defaults to "[WHAT from ]MIN to MAX[UNIT]"
	 * for numeric kinds and to the words of names for OPTION_ENUM; "" (and a
	 * string option without expect) leaves the ": expected" part out.
	 */
	const char *label;
	const char *expect;
	const char *what;         /* "a power of two" */
	const char *unit;         /* " seconds", " ms" */
	/*
	 * A rule beyond the kind and range, run on the converted value (slot:
	 * where it was stored). Returns 0, or a negative errno: with a line of
	 * its own in err, that line; with err left empty, the option's
	 * "invalid" line.
	 */
	int (*check)(const struct option_spec *spec, const char *value, void *slot, char *err,
		     size_t errlen);
};

struct option_parser {
	const struct option_spec *specs; /* ends with a spec whose name is NULL */
	int first;        /* argv index of the first option: 1, or 2 after a command word */
	const char *hint; /* appended to "unknown option" and "unexpected argument" lines */
	/* NULL: operands are refused. Else they are allowed and moved to the end
	 * of argv; *operands is the index of the first (argc when none). */
	int *operands;
};

#define OPTION_TABLE_STOP 1

/* 0 when every option was taken, OPTION_TABLE_STOP (an OPTION_STOP flag was
 * given), or -EINVAL with one line in err. Not reentrant (getopt_long). */
int option_table_parse(const struct option_parser *p, int argc, char **argv, char *err,
		       size_t errlen);

/*
 * One option by its exact long name (no abbreviation), as a configuration
 * file gives it: the same conversions, ranges and checks as the command line;
 * the error line says "invalid value 'V'" unless the spec has a label of its
 * own. A flag takes true, yes, on, 1 or false, no, off, 0. Returns 0, -ENOENT
 * (no such option), -EPERM (OPTION_CLI_ONLY) or -EINVAL, with one line in err.
 */
int option_table_set(const struct option_spec *specs, const char *name, const char *value,
		     char *err, size_t errlen);

/* The spec's number of values: *count for a repeatable option, else 1. */
size_t option_table_count(const struct option_spec *spec);

/*
 * Value number index of the option as text that option_table_set takes back
 * ("" for an unset string, true/false for a flag). Returns the length.
 */
int option_table_format(const struct option_spec *spec, size_t index, char *buf, size_t len);

/* Copies the value (all values and the count of a repeatable option) from
 * from->dest to to->dest: two tables of the same rows over two structures. */
void option_table_copy(const struct option_spec *to, const struct option_spec *from);

#endif /* LOWPROF_SETTINGS_OPTION_TABLE_H */
