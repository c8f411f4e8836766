/*
 * OTLP encoder: the request around the dictionary and the profiles (one
 * ResourceProfiles for the host, one ScopeProfiles for lowprof), the build
 * order, and packing. The tables are built by otlp_encoder_locations.c
 * (mappings, functions, locations), otlp_encoder_samples.c (samples,
 * stacks, profiles) and otlp_encoder_intern.c (strings, attributes, and the
 * tables made from them once everything is interned).
 *
 * Allocation: everything one encode needs comes from a list of blocks freed on
 * the single cleanup path.
 */
#include "exporter/otlp/otlp_encoder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "common/errbuf.h"
#include "exporter/otlp/otlp_encoder_internal.h"
#include "exporter/profile/profile.h"
#include "lowprof_build_config.h"

#define OTLP_RESOURCE_ATTRS 3

/* Zeroed memory that lives until the encode ends; NULL on out of memory. */
void *otlp_encoder_alloc(struct otlp_build *b, size_t n, size_t size)
{
	struct otlp_block *blk;

	if (size != 0 && n > (SIZE_MAX - sizeof(*blk)) / size)
		return NULL;
	blk = calloc(1, sizeof(*blk) + n * size);
	if (blk == NULL)
		return NULL;
	blk->next = b->blocks;
	b->blocks = blk;
	return blk->data;
}

/* A resource or scope KeyValue with a string value (inline key, not strindex:
 * these messages are shared with the other OTLP signals). */
static int otlp_make_key_value(struct otlp_build *b, otlp_key_value *kv, const char *key,
			  const char *value)
{
	otlp_any_value *v = otlp_encoder_alloc(b, 1, sizeof(*v));
	const char *s;
	char *copy;
	size_t len;

	if (v == NULL)
		return -ENOMEM;
	s = otlp_encoder_utf8(b, value, &len);
	copy = s != NULL ? otlp_encoder_alloc(b, len + 1, 1) : NULL;
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, s, len);
	lowprof__otlp__key_value__init(kv);
	lowprof__otlp__any_value__init(v);
	kv->key = (char *)key; /* static strings, only read by pack */
	v->value_case = LOWPROF__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = copy;
	kv->value = v;
	return 0;
}

static int otlp_build_resource(struct otlp_build *b, otlp_resource_profiles *rp,
			       otlp_scope_profiles *sp)
{
	const char *keys[OTLP_RESOURCE_ATTRS] = { "host.name", "host.arch", "os.type" };
	const char *vals[OTLP_RESOURCE_ATTRS] = { b->meta->host_name, b->meta->host_arch,
						  b->meta->os_type };
	otlp_resource *res = otlp_encoder_alloc(b, 1, sizeof(*res));
	otlp_key_value *kvs = otlp_encoder_alloc(b, OTLP_RESOURCE_ATTRS, sizeof(*kvs));
	otlp_key_value **kv_ptrs = otlp_encoder_alloc(b, OTLP_RESOURCE_ATTRS, sizeof(*kv_ptrs));
	otlp_scope *scope = otlp_encoder_alloc(b, 1, sizeof(*scope));
	size_t i, n = 0;
	int ret = 0;

	if (res == NULL || kvs == NULL || kv_ptrs == NULL || scope == NULL)
		return -ENOMEM;
	lowprof__otlp__resource__init(res);
	for (i = 0; i < OTLP_RESOURCE_ATTRS && ret == 0; i++) {
		if (vals[i] == NULL || vals[i][0] == '\0')
			continue;
		ret = otlp_make_key_value(b, &kvs[n], keys[i], vals[i]);
		kv_ptrs[n] = &kvs[n];
		n++;
	}
	res->attributes = kv_ptrs;
	res->n_attributes = n;
	rp->resource = res;

	lowprof__otlp__instrumentation_scope__init(scope);
	scope->name = "lowprof";
	scope->version = (char *)(b->meta->scope_version != NULL ? b->meta->scope_version : "");
	sp->scope = scope;
	return ret;
}

void otlp_encoder_meta_defaults(struct otlp_encoder_meta *meta,
				char host_name_buf[OTLP_ENCODER_HOST_NAME_MAX])
{
	struct utsname u;

	memset(meta, 0, sizeof(*meta));
	host_name_buf[0] = '\0';
	meta->host_arch = "";
	if (uname(&u) == 0) {
		snprintf(host_name_buf, OTLP_ENCODER_HOST_NAME_MAX, "%s", u.nodename);
		/* host.arch uses the semantic conventions' names, not uname's. */
		if (strcmp(u.machine, "x86_64") == 0)
			meta->host_arch = "amd64";
		else if (strcmp(u.machine, "aarch64") == 0)
			meta->host_arch = "arm64";
		else if (strcmp(u.machine, "i686") == 0 || strcmp(u.machine, "i386") == 0)
			meta->host_arch = "x86";
		else if (strncmp(u.machine, "arm", 3) == 0)
			meta->host_arch = "arm32";
		else if (strcmp(u.machine, "ppc64le") == 0)
			meta->host_arch = "ppc64";
		else if (strcmp(u.machine, "s390x") == 0)
			meta->host_arch = "s390x";
	}
	meta->host_name = host_name_buf;
	meta->os_type = "linux";
	meta->scope_version = LOWPROF_VERSION;
	meta->tier = "healthy";
}

int otlp_encoder_encode(const struct profile *p, const struct otlp_encoder_meta *meta,
			uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	struct otlp_build b;
	otlp_resource_profiles rp;
	otlp_resource_profiles *rp_ptr = &rp;
	otlp_scope_profiles sp;
	otlp_scope_profiles *sp_ptr = &sp;
	size_t nstr = profile_string_count(p), len, i;
	uint32_t zero;
	uint8_t *buf = NULL;
	int ret;

	*out = NULL;
	*outlen = 0;
	memset(&b, 0, sizeof(b));
	b.p = p;
	b.meta = meta;
	lowprof__otlp__export_profiles_service_request__init(&b.req);
	lowprof__otlp__profiles_dictionary__init(&b.dict);
	lowprof__otlp__resource_profiles__init(&rp);
	lowprof__otlp__scope_profiles__init(&sp);
	b.model_string = malloc((nstr + 1) * sizeof(*b.model_string));
	ret = b.model_string != NULL ? 0 : -ENOMEM;
	for (i = 0; i < nstr && ret == 0; i++)
		b.model_string[i] = OTLP_UNSET;
	/* The zero elements take index 0 of the interned tables. */
	if (ret == 0)
		ret = intern_add(&b.strings, "", 0, &zero);
	if (ret == 0)
		ret = intern_add(&b.attrs, "\0", 1, &zero);
	if (ret == 0)
		ret = intern_add(&b.stacks, "", 0, &zero);
	/* The order fixes each string's and attribute's index, so the bytes sent;
	 * the dictionary tables come last, when everything is interned. */
	if (ret == 0)
		ret = otlp_encoder_build_model_tables(&b);
	if (ret == 0)
		ret = otlp_encoder_build_profiles(&b, &sp);
	if (ret == 0)
		ret = otlp_build_resource(&b, &rp, &sp);
	if (ret == 0)
		ret = otlp_encoder_build_dictionary_tables(&b);
	if (ret != 0) {
		errbuf_set(err, errlen, "otlp: out of memory building the request");
		goto cleanup;
	}
	rp.scope_profiles = &sp_ptr;
	rp.n_scope_profiles = 1;
	b.req.resource_profiles = &rp_ptr;
	b.req.n_resource_profiles = 1;
	b.req.dictionary = &b.dict;

	len = lowprof__otlp__export_profiles_service_request__get_packed_size(&b.req);
	buf = malloc(len ? len : 1);
	if (buf == NULL) {
		errbuf_set(err, errlen, "otlp: out of memory for %zu packed bytes", len);
		ret = -ENOMEM;
		goto cleanup;
	}
	if (lowprof__otlp__export_profiles_service_request__pack(&b.req, buf) != len) {
		errbuf_set(err, errlen, "otlp: packed size mismatch");
		ret = -EIO;
		goto cleanup;
	}
	*out = buf;
	*outlen = len;
	buf = NULL;
cleanup:
	free(buf);
	while (b.blocks != NULL) {
		struct otlp_block *next = b.blocks->next;

		free(b.blocks);
		b.blocks = next;
	}
	intern_free(&b.strings);
	intern_free(&b.attrs);
	intern_free(&b.stacks);
	free(b.model_string);
	free(b.scratch);
	return ret;
}
