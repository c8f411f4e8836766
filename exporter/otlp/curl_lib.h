/*
 * libcurl, loaded when OTLP export is asked for rather than linked.
 *
 * Linked, libcurl brought 30 libraries (its TLS, Kerberos, LDAP, SSH, IDN
 * stacks) into every exporter, with or without --otlp-endpoint: about 13 ms
 * of CPU to map and relocate them at each exporter start and 5 MiB of its
 * resident memory here, and all of that code mapped in the process that
 * parses what other processes wrote. Now the exporter maps them only when
 * it sends OTLP: otlp_client_new opens the library (curl_lib_open) before
 * the sandbox, while files may still be opened.
 *
 * The functions the OTLP client uses are called through curl_lib's
 * pointers, named as libcurl names them without the curl_ prefix.
 */
#ifndef LOWPROF_EXPORTER_OTLP_CURL_LIB_H
#define LOWPROF_EXPORTER_OTLP_CURL_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <curl/curl.h>

/* The shared object opened: libcurl's soname since 2006 (Debian's libcurl4). */
#define CURL_LIB_SONAME "libcurl.so.4"

/* One pointer per function, of the type libcurl's header gives it (a macro
 * name not followed by "(" is the function: curl_easy_setopt's type check). */
#define CURL_LIB_FN(field, fn) __typeof__(fn) *field;
#define CURL_LIB_FUNCTIONS(X) \
	X(global_init, curl_global_init) \
	X(easy_init, curl_easy_init) \
	X(easy_setopt, curl_easy_setopt) \
	X(easy_getinfo, curl_easy_getinfo) \
	X(easy_strerror, curl_easy_strerror) \
	X(easy_cleanup, curl_easy_cleanup) \
	X(multi_init, curl_multi_init) \
	X(multi_add_handle, curl_multi_add_handle) \
	X(multi_remove_handle, curl_multi_remove_handle) \
	X(multi_perform, curl_multi_perform) \
	X(multi_info_read, curl_multi_info_read) \
	X(multi_timeout, curl_multi_timeout) \
	X(multi_poll, curl_multi_poll) \
	X(multi_cleanup, curl_multi_cleanup) \
	X(slist_append, curl_slist_append) \
	X(slist_free_all, curl_slist_free_all) \
	X(url, curl_url) \
	X(url_set, curl_url_set) \
	X(url_get, curl_url_get) \
	X(url_cleanup, curl_url_cleanup) \
	X(free, curl_free) \
	X(getdate, curl_getdate) \
	X(version_info, curl_version_info)

struct curl_lib {
	CURL_LIB_FUNCTIONS(CURL_LIB_FN)
};

/* Filled by curl_lib_open; every pointer NULL before. */
extern struct curl_lib curl_lib;

/*
 * Open libcurl, find every function above and initialise it
 * (curl_global_init; once: later calls return at once). 0, or -ENOENT when
 * the library is not installed, -ENOSYS when it lacks a function (older
 * than the 7.85 this needs), -EIO when it fails to initialise, with a
 * message in err.
 */
int curl_lib_open(char *err, size_t errlen);

/* Has curl_lib_open succeeded? */
bool curl_lib_loaded(void);

#endif
