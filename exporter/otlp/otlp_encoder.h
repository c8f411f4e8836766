/*
 * OTLP profiles encoder: one profile model (exporter/profile/profile.h) into one
 * serialized opentelemetry.proto.collector.profiles.v1development.
 * ExportProfilesServiceRequest (exporter/otlp/profiles.proto, wire-compatible
 * with the official schema).
 *
 * What is sent (docs/OTLP.md has the full list):
 * - a ProfilesDictionary with deduplicated string, mapping, location,
 *   function, stack, attribute and link tables, each starting with its zero
 *   element;
 * - one ResourceProfiles for the host (host.name, host.arch, os.type), one
 *   ScopeProfiles (scope "lowprof", version), and two Profiles over the same
 *   samples, because v1development allows one sample_type per Profile:
 *     profiles[0]: sample_type samples/count, values = sample counts;
 *     profiles[1]: sample_type cpu/nanoseconds, values = the stack's cpu_ns,
 *                  i.e. counts weighted by the effective sampling period.
 *   Both have period_type cpu/nanoseconds, period, time and duration, and the
 *   profile attributes lowprof.throttle.tier and lowprof.sampling.frequency.
 *   An off-CPU model (meta->off_cpu) is one Profile instead: sample_type and
 *   period_type off_cpu/nanoseconds, values = the stack's blocked time (its
 *   cpu_ns, already divided by the sampling probability), period 0, and the
 *   attribute lowprof.offcpu.probability (parts per million) when known.
 * - per sample: process.pid, process.executable.name, process.executable.path
 *   (when known), thread.id (when the stack saw one thread), thread.name
 *   (the comm), container.id (when known);
 * - mappings with file name, bounds, file offset and the GNU build id as the
 *   attribute process.executable.build_id.gnu; locations with
 *   profile.frame.type "native" or "kernel".
 */
#ifndef LOWPROF_EXPORTER_OTLP_ENCODER_H
#define LOWPROF_EXPORTER_OTLP_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct process_info_cache;

#define OTLP_ENCODER_HOST_NAME_MAX 256

/* What the model does not know: the host, the sampler's state, per-pid metadata. */
struct otlp_encoder_meta {
	const char *host_name;      /* host.name; NULL or "" = omitted */
	const char *host_arch;      /* host.arch, semconv spelling ("amd64", "arm64") */
	const char *os_type;        /* os.type ("linux") */
	const char *scope_version;  /* InstrumentationScope.version (lowprof's version) */
	const char *tier;           /* throttle tier in force: "healthy", "high", "critical" */
	bool off_cpu;               /* the model is an off-CPU profile (one Profile, above) */
	uint32_t offcpu_prob_ppm;   /* the off-CPU probability in force; 0 = omitted */
	uint32_t frequency_hz;      /* sampling frequency in force; 0 = omitted */
	/* Executable path and container id per pid; NULL = names from comm only.
	 * Not const: a pid not seen before is read (and cached) on the way. */
	struct process_info_cache *procs;
	/* The two profiles' ids, OTLP_ENCODER_PROFILE_IDS_LEN bytes; NULL = random
	 * (a run's payloads). Fixed ids make an encoding reproducible (tests). */
	const uint8_t *profile_ids;
};

#define OTLP_ENCODER_PROFILE_IDS_LEN 32

/* Fills host_name (into the caller's buffer), host_arch and os_type from uname(2),
 * scope_version from the build, tier "healthy"; leaves the rest zero. Call once
 * at start-up (before sandboxing, though uname needs nothing special). */
void otlp_encoder_meta_defaults(struct otlp_encoder_meta *meta,
				char host_name_buf[OTLP_ENCODER_HOST_NAME_MAX]);

/* Encodes p. On success returns 0 and a malloc'd buffer (*out, *outlen; the
 * caller frees it), uncompressed: otlp_client compresses. Returns a negative
 * errno with a message in err otherwise. An empty profile encodes too (no
 * samples), so the caller decides whether to send it. */
int otlp_encoder_encode(const struct profile *p, const struct otlp_encoder_meta *meta,
			uint8_t **out, size_t *outlen, char *err, size_t errlen);

#endif
