/* unwind_audit: the unwind maps' writes as audit records (see the header). */
#include "loader/unwind_audit.h"

#include <stdio.h>
#include <string.h>

#include "loader/audit_log.h"

void unwind_audit_rows(const char *path, uint64_t dev, uint64_t ino, uint32_t first_row,
		       uint32_t nrows, uint64_t evicted_files)
{
	struct audit_actor me;
	struct audit_rec r;

	if (!audit_log_enabled())
		return;
	audit_actor_self(&me);
	audit_rec_begin(&r, "map_update", &me);
	audit_rec_str(&r, "map", "unwind_rows");
	audit_rec_u64(&r, "first_row", first_row);
	audit_rec_u64(&r, "rows", nrows);
	audit_rec_str(&r, "file", path);
	audit_rec_u64(&r, "dev", dev);
	audit_rec_u64(&r, "ino", ino);
	audit_rec_u64(&r, "evicted_files", evicted_files);
	audit_rec_end(&r, 0);
}

void unwind_audit_cache(uint64_t evicted, uint64_t expired, uint64_t evicted_total,
			uint64_t expired_total, uint64_t entries)
{
	struct audit_actor me;
	struct audit_rec r;

	if (!audit_log_enabled())
		return;
	audit_actor_self(&me);
	audit_rec_begin(&r, "unwind_cache_evict", &me);
	audit_rec_u64(&r, "evicted", evicted);
	audit_rec_u64(&r, "refused_expired", expired);
	audit_rec_u64(&r, "evicted_total", evicted_total);
	audit_rec_u64(&r, "refused_expired_total", expired_total);
	audit_rec_u64(&r, "entries", entries);
	audit_rec_end(&r, 0);
}

static void unwind_audit_add(struct unwind_audit_batch *b, uint32_t pid, int errnum)
{
	if (b->listed < UNWIND_AUDIT_LISTED)
		b->pids[b->listed++] = pid;
	b->count++;
	if (errnum != 0) {
		b->failed++;
		b->last_errno = errnum;
	}
}

void unwind_audit_proc_update(struct unwind_audit *ua, uint32_t pid, int errnum)
{
	unwind_audit_add(&ua->updates, pid, errnum);
}

void unwind_audit_proc_delete(struct unwind_audit *ua, uint32_t pid)
{
	unwind_audit_add(&ua->deletes, pid, 0);
}

static void unwind_audit_write(struct unwind_audit_batch *b, const char *op)
{
	char pids[UNWIND_AUDIT_LISTED * 12 + 4];
	struct audit_actor me;
	struct audit_rec r;
	size_t i, len = 0;

	if (b->count == 0)
		return;
	if (audit_log_enabled()) {
		pids[len++] = '[';
		for (i = 0; i < b->listed; i++)
			len += (size_t)snprintf(pids + len, sizeof(pids) - len, "%s%u", i ? "," : "",
						b->pids[i]);
		snprintf(pids + len, sizeof(pids) - len, "]");
		audit_actor_self(&me);
		audit_rec_begin(&r, "map_update", &me);
		audit_rec_str(&r, "map", "unwind_procs");
		audit_rec_str(&r, "op", op);
		audit_rec_u64(&r, "count", b->count);
		audit_rec_raw(&r, "pids", pids);
		audit_rec_u64(&r, "pids_not_listed", b->count - b->listed);
		audit_rec_u64(&r, "failed", b->failed);
		audit_rec_end(&r, b->failed > 0 ? b->last_errno : 0);
	}
	memset(b, 0, sizeof(*b));
}

void unwind_audit_flush(struct unwind_audit *ua)
{
	unwind_audit_write(&ua->updates, "update");
	unwind_audit_write(&ua->deletes, "delete");
}
