#include "exporter/otlp/curl_lib.h"

#include <dlfcn.h>
#include <errno.h>

#include "common/errbuf.h"

struct curl_lib curl_lib;

static bool curl_lib_ready;

int curl_lib_open(char *err, size_t errlen)
{
	struct curl_lib found;
	void *h;

	if (curl_lib_ready)
		return 0;
	/* RTLD_NOW: every symbol of libcurl and its libraries bound here, before
	 * the sandbox, not at a first call under seccomp. Never closed: it is
	 * loaded for the process's life. */
	h = dlopen(CURL_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		errbuf_set(err, errlen, "OTLP export needs libcurl (%s, Debian's libcurl4): %s",
			   CURL_LIB_SONAME, dlerror());
		return -ENOENT;
	}
#define CURL_LIB_FIND(field, fn)                                                              \
	found.field = (__typeof__(fn) *)dlsym(h, #fn);                                        \
	if (found.field == NULL) {                                                            \
		errbuf_set(err, errlen, "%s has no %s: libcurl 7.85 or later is needed",       \
			   CURL_LIB_SONAME, #fn);                                              \
		dlclose(h);                                                                    \
		return -ENOSYS;                                                                \
	}
	CURL_LIB_FUNCTIONS(CURL_LIB_FIND)
#undef CURL_LIB_FIND
	if (found.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		errbuf_set(err, errlen, "otlp: curl_global_init failed");
		dlclose(h);
		return -EIO;
	}
	curl_lib = found;
	curl_lib_ready = true;
	return 0;
}

bool curl_lib_loaded(void)
{
	return curl_lib_ready;
}
