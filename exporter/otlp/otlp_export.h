/*
 * The exporter's OTLP side: owns the delivery client (otlp_client), the
 * per-pid metadata cache (process_info) and the profile of the current
 * interval, a second model beside the cumulative one the files are written
 * from. Every --interval the interval's profile is encoded (otlp_encoder)
 * with the tier and frequency in force, queued, and replaced by an empty one,
 * so the payloads of a run add up to the cumulative profile.
 *
 * Created before the sandbox: otlp_client_new() reads the TLS files and
 * resolves the endpoint. Not thread-safe.
 */
#ifndef LOWPROF_EXPORTER_OTLP_EXPORT_H
#define LOWPROF_EXPORTER_OTLP_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "exporter/otlp/otlp_client.h"

struct otlp_export;
struct process_info_cache;
struct proc_source;
struct profile;
struct timeline;

/* src (not owned) answers for the processes' metadata. NULL with a one-line reason in err. */
struct otlp_export *otlp_export_new(const struct otlp_settings *s, struct proc_source *src,
				    char *err, size_t errlen);
void otlp_export_free(struct otlp_export *x);

/* Where ingest puts the interval's samples and per-pid metadata. The interval
 * profile changes at every otlp_export_interval(). */
struct profile *otlp_export_interval_profile(struct otlp_export *x);
/* --off-cpu: an off-CPU interval profile beside it, sent as its own request
 * (sample type off_cpu/nanoseconds) after the on-CPU one. 0 or -ENOMEM. */
int otlp_export_enable_offcpu(struct otlp_export *x);
/* The off-CPU interval profile; NULL unless enabled. */
struct profile *otlp_export_offcpu_profile(struct otlp_export *x);
struct process_info_cache *otlp_export_procs(struct otlp_export *x);

/*
 * End the interval [start_unix_ns, end_unix_ns): encode its profile with the
 * tier and frequency of the newest timeline entry (else "healthy" and
 * default_hz), queue it, start a new one; the same for the off-CPU profile
 * when enabled (with the off-CPU probability in force). A profile without
 * samples sends nothing. Returns 0, or a negative errno (logged; the
 * interval is dropped).
 */
int otlp_export_interval(struct otlp_export *x, const struct timeline *tl, unsigned default_hz,
			 uint64_t start_unix_ns, uint64_t end_unix_ns);

/* Progress without blocking, the poll(2) timeout wanted (-1: none), and the
 * bounded wait at exit (returns payloads left undelivered). */
void otlp_export_poll(struct otlp_export *x);
long otlp_export_timeout_ms(struct otlp_export *x);
size_t otlp_export_flush(struct otlp_export *x, long timeout_ms);

void otlp_export_stats(const struct otlp_export *x, struct otlp_client_stats *out);

#endif
