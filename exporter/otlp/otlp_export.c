#include "exporter/otlp/otlp_export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/log.h"
#include "exporter/otlp/otlp_encoder.h"
#include "exporter/otlp/process_info.h"
#include "exporter/profile/profile.h"
#include "exporter/profile/timeline.h"

struct otlp_export {
	struct otlp_client *client;
	struct process_info_cache *procs;
	struct profile *interval;
	struct profile *offcpu;  /* NULL without --off-cpu */
	struct otlp_encoder_meta meta;
	char host_name[OTLP_ENCODER_HOST_NAME_MAX];
};

struct otlp_export *otlp_export_new(const struct otlp_settings *s, struct proc_source *src,
				    char *err, size_t errlen)
{
	struct otlp_export *x = calloc(1, sizeof(*x));

	if (x == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	x->client = otlp_client_new(s, err, errlen);
	if (x->client == NULL)
		goto fail;
	x->procs = process_info_new(src, 0);
	x->interval = profile_new();
	if (x->procs == NULL || x->interval == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	otlp_encoder_meta_defaults(&x->meta, x->host_name);
	x->meta.procs = x->procs;
	return x;
fail:
	otlp_export_free(x);
	return NULL;
}

void otlp_export_free(struct otlp_export *x)
{
	if (x == NULL)
		return;
	otlp_client_free(x->client);
	process_info_free(x->procs);
	profile_free(x->interval);
	profile_free(x->offcpu);
	free(x);
}

struct profile *otlp_export_interval_profile(struct otlp_export *x)
{
	return x->interval;
}

int otlp_export_enable_offcpu(struct otlp_export *x)
{
	if (x->offcpu == NULL)
		x->offcpu = profile_new();
	return x->offcpu != NULL ? 0 : -ENOMEM;
}

struct profile *otlp_export_offcpu_profile(struct otlp_export *x)
{
	return x->offcpu;
}

struct process_info_cache *otlp_export_procs(struct otlp_export *x)
{
	return x->procs;
}

/* Encode and queue *pp (an interval's profile), then replace it by an empty one. */
static int otlp_export_send(struct otlp_export *x, struct profile **pp, uint64_t start_unix_ns,
			    uint64_t end_unix_ns)
{
	struct profile_totals totals;
	struct profile *fresh;
	uint8_t *body = NULL;
	size_t len = 0;
	char err[256];
	int rc;

	profile_get_totals(*pp, &totals);
	if (totals.samples == 0)
		return 0;
	profile_set_time(*pp, start_unix_ns, end_unix_ns);
	rc = otlp_encoder_encode(*pp, &x->meta, &body, &len, err, sizeof(err));
	if (rc == 0) {
		rc = otlp_client_enqueue(x->client, body, len);
		if (rc == -E2BIG)
			log_warn_f("interval profile of %zu bytes is larger than the whole queue: dropped", len);
		else if (rc != 0)
			log_warn_f("queueing the interval profile: %s", strerror(-rc));
	} else {
		log_warn_f("encoding the interval profile (%llu samples): %s",
			   (unsigned long long)totals.samples, err);
	}
	free(body);
	/* Whatever happened, the next interval starts empty: its samples are its own. */
	fresh = profile_new();
	if (fresh == NULL) {
		log_error("out of memory: the interval profile keeps growing");
		return -ENOMEM;
	}
	profile_free(*pp);
	*pp = fresh;
	return rc;
}

int otlp_export_interval(struct otlp_export *x, const struct timeline *tl, unsigned default_hz,
			 uint64_t start_unix_ns, uint64_t end_unix_ns)
{
	struct lowprof_timeline_entry te;
	int rc, rc_off = 0;

	/* The settings in force now: the controller may have changed them since the
	 * interval began, but a profile carries one tier and one frequency. */
	x->meta.tier = "healthy";
	x->meta.frequency_hz = default_hz;
	x->meta.offcpu_prob_ppm = 0;
	if (tl != NULL && timeline_latest(tl, &te) == 0) {
		x->meta.tier = timeline_tier_name(te.tier);
		x->meta.frequency_hz = te.frequency_hz;
		x->meta.offcpu_prob_ppm = te.offcpu_prob_ppm <= 1000000 ? te.offcpu_prob_ppm : 0;
	}
	x->meta.off_cpu = false;
	rc = otlp_export_send(x, &x->interval, start_unix_ns, end_unix_ns);
	if (x->offcpu != NULL) {
		x->meta.off_cpu = true;
		rc_off = otlp_export_send(x, &x->offcpu, start_unix_ns, end_unix_ns);
		x->meta.off_cpu = false;
	}
	return rc != 0 ? rc : rc_off;
}

void otlp_export_poll(struct otlp_export *x)
{
	otlp_client_poll(x->client);
}

long otlp_export_timeout_ms(struct otlp_export *x)
{
	return otlp_client_timeout_ms(x->client);
}

size_t otlp_export_flush(struct otlp_export *x, long timeout_ms)
{
	return otlp_client_flush(x->client, timeout_ms);
}

void otlp_export_stats(const struct otlp_export *x, struct otlp_client_stats *out)
{
	otlp_client_get_stats(x->client, out);
}
