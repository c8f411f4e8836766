#include "common/token_bucket.h"

void token_bucket_init(struct token_bucket *tb, unsigned per_s, unsigned burst, uint64_t now_ns)
{
	tb->per_s = per_s;
	tb->burst = burst;
	tb->tokens = burst;
	tb->last_ns = now_ns;
}

bool token_bucket_take(struct token_bucket *tb, uint64_t now_ns)
{
	if (tb->per_s == 0)
		return true;
	if (now_ns > tb->last_ns) {
		tb->tokens += (double)(now_ns - tb->last_ns) / 1e9 * tb->per_s;
		if (tb->tokens > tb->burst)
			tb->tokens = tb->burst;
	}
	tb->last_ns = now_ns;
	if (tb->tokens < 1.0)
		return false;
	tb->tokens -= 1.0;
	return true;
}
