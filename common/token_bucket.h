/*
 * A token bucket: at most `burst` at once, refilled at `per_s` a second. The
 * loader rate-limits what its peers ask (control socket, symbol socket) and
 * how much of it is audited one by one with it.
 */
#ifndef LOWPROF_COMMON_TOKEN_BUCKET_H
#define LOWPROF_COMMON_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct token_bucket {
	double tokens;
	uint64_t last_ns; /* when tokens was last refilled */
	unsigned per_s;   /* 0: no limit */
	unsigned burst;
};

/* Full at now_ns. */
void token_bucket_init(struct token_bucket *tb, unsigned per_s, unsigned burst, uint64_t now_ns);

/* Take one token at now_ns (monotonic): true if there was one (always with per_s 0). */
bool token_bucket_take(struct token_bucket *tb, uint64_t now_ns);

#endif /* LOWPROF_COMMON_TOKEN_BUCKET_H */
