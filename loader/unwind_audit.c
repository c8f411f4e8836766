/* unwind_audit: the unwind maps' writes as audit records (see the header). */
#include "loader/unwind_audit.h"

#include <stdio.h>
#include <string.h>

#include "loader/audit_log.h"
#include "loader/unwind_maps.h"

void unwind_audit_rows(const char *path, const struct lowprof_file_id *id, uint32_t first_row,
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
	audit_rec_u64(&r, "dev", id->dev);
	audit_rec_u64(&r, "ino", id->ino);
	audit_rec_u64(&r, "gen", id->gen);
	audit_rec_u64(&r, "evicted_files", evicted_files);
	audit_rec_end(&r, 0);
}

void unwind_audit_evict(const struct lowprof_file_id *id, const char *why)
{
	struct audit_actor me;
	struct audit_rec r;

	if (!audit_log_enabled())
		return;
	audit_actor_self(&me);
	audit_rec_begin(&r, "unwind_evict", &me);
	audit_rec_str(&r, "map", "unwind_files");
	audit_rec_u64(&r, "dev", id->dev);
	audit_rec_u64(&r, "ino", id->ino);
	audit_rec_u64(&r, "gen", id->gen);
	audit_rec_str(&r, "why", why);
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

void unwind_audit_adopt(const struct unwind_maps_adoption *ad)
{
	struct audit_actor me;
	struct audit_rec r;

	if (!audit_log_enabled())
		return;
	audit_actor_self(&me);
	audit_rec_begin(&r, "unwind_adopt", &me);
	audit_rec_str(&r, "map", "unwind_files");
	audit_rec_u64(&r, "files", ad->files);
	audit_rec_u64(&r, "rows", ad->rows);
	audit_rec_u64(&r, "chunks", ad->chunks);
	audit_rec_u64(&r, "entries_refused", ad->entries_dropped);
	audit_rec_u64(&r, "chunks_refused", ad->chunks_dropped);
	audit_rec_end(&r, 0);
}
