/* Strict number parsing for command-line values: all digits, in range, no sign tricks. */
#ifndef LOWPROF_NUMBER_PARSE_H
#define LOWPROF_NUMBER_PARSE_H

/* Decimal unsigned integer in [min, max]. Returns 0 or -1 (not a number, out of range). */
int number_parse_uint(const char *s, unsigned min, unsigned max, unsigned *out);
/* Non-negative decimal with optional fraction ("10", "0.5"), at most max. 0 or -1.
 * Used for seconds and percentages alike. */
int number_parse_seconds(const char *s, double max, double *out);

#endif
