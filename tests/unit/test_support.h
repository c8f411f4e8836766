/*
 * Helpers shared by the exporter's cmocka unit tests: a per-run temporary
 * directory, running a shell command for its output, writing a fixture file,
 * and frames and a small profile with known stacks.
 *
 * Built as the static library lowprof_test_support (cmake/LowprofTests.cmake);
 * a unit test whose source includes "test_support.h" links it. Every helper
 * fails the running test (a cmocka assert) when its own step fails, so
 * callers need not check.
 */
#ifndef LOWPROF_TESTS_UNIT_TEST_SUPPORT_H
#define LOWPROF_TESTS_UNIT_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "exporter/profile/frame.h"

struct profile;

/*
 * The folder of the official protobuf schemas (opentelemetry/, pprof/): the
 * environment's LOWPROF_REFERENCE_PROTO_DIR, else the build's (the CMake cache
 * variable of that name; by default shared/reference/proto beside the
 * checkout). It also sets the environment variable, for the shell commands
 * that name it. When the folder is missing, the running test is skipped,
 * saying which path was looked at and which variable to set; with
 * LOWPROF_REQUIRE_REFERENCE=1 in the environment it fails instead.
 * ts_run calls it for every command that names $LOWPROF_REFERENCE_PROTO_DIR.
 */
const char *ts_reference_proto_dir(void);

/* A shell pipeline stage: protoc decoding the binary OTLP
 * ExportProfilesServiceRequest on its stdin, as text on its stdout, against
 * the reference schema (ts_reference_proto_dir). */
#define TS_OTLP_DECODE "protoc -I \"$LOWPROF_REFERENCE_PROTO_DIR\" --decode " \
	"opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest " \
	"opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"

/* One sampling period at 19 Hz, in nanoseconds (the cpu_ns of one sample in
 * ts_known_profile). */
#define TS_PERIOD_NS 52631578ULL

/*
 * The test program's temporary directory, "/tmp/<program>_XXXXXX" made unique:
 * valid from ts_tmpdir_setup until ts_tmpdir_teardown. Pass the two as a
 * group's setup and teardown:
 *	cmocka_run_group_tests(tests, ts_tmpdir_setup, ts_tmpdir_teardown);
 * Setup creates it (mode 0700) and returns -1 if it cannot (or if the name
 * would not fit in TS_TMPDIR_MAX); teardown removes it and all below it
 * (rm -rf) and returns -1 if that fails.
 */
#define TS_TMPDIR_MAX 64
extern char ts_tmpdir[TS_TMPDIR_MAX];
int ts_tmpdir_setup(void **state);
int ts_tmpdir_teardown(void **state);

/* Runs cmd with /bin/sh (popen); returns all of its stdout, NUL-terminated
 * (never NULL; the caller frees), and its wait status (pclose's) in *status.
 * A cmd that names $LOWPROF_REFERENCE_PROTO_DIR needs the reference schemas:
 * without them the test is skipped (see ts_reference_proto_dir). */
char *ts_run(const char *cmd, int *status);

/* Creates or truncates path and writes exactly len bytes of buf to it. */
void ts_write_file(const char *path, const void *buf, size_t len);

/*
 * Symbolized frames for building profiles. The strings are not copied.
 *
 * ts_user_frame: module mapped at [0x400000, 0x500000), no build id;
 *	address 0x400000 + off, module_offset off.
 * ts_pie_frame: module mapped at [0x555500000000, 0x555500100000) from file
 *	offset 0, build id "0123abcd"; address 0x555500000000 + off,
 *	module_offset off.
 * ts_kernel_frame: module "[kernel.kallsyms]", kernel, address addr.
 */
struct frame ts_user_frame(const char *function, const char *module, uint64_t off);
struct frame ts_pie_frame(const char *function, const char *module, uint64_t off);
struct frame ts_kernel_frame(const char *function, uint64_t addr);

/*
 * A new profile (the caller frees it with profile_free) with five samples of
 * ts_pie_frame/ts_kernel_frame frames, leaf first, each sample's cpu_ns its
 * count times TS_PERIOD_NS:
 *	pid 100 tid 101 "app":    do_sys_write [k] (0xffffffff81100000),
 *	                          write_leaf (/usr/lib/libc.so.6 +0x1000),
 *	                          main (/usr/bin/app +0x2000)        count 7
 *	pid 100 tid 101 "app":    compute_leaf (/usr/bin/app +0x3000),
 *	                          main (/usr/bin/app +0x2000)        count 11
 *	pid 200 tid 201 "worker": the compute_leaf stack             count 2
 *	pid 200 tid 202 "worker": the compute_leaf stack             count 1
 *	pid 200 tid 203 "worker": deep_leaf (/usr/bin/app +0x4000),
 *	                          truncated                          count 3
 * and the time span [1700000000000000000, 1700000010000000000) ns.
 */
struct profile *ts_known_profile(void);

/* The profile in folded-stack form (folded_write), NUL-terminated; the caller
 * frees it. */
char *ts_folded_text(const struct profile *p);

#endif
