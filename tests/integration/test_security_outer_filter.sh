#!/bin/sh
# Under an outer filter: lowprof runs under the union of every component's
# allowlist (what deploy/lowprof.service's SystemCallFilter= allows), installed
# by lowprof-seccomp-tool before exec, and profiles normally.
#   usage: test_security_outer_filter.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir sec-outer
busy_cpu 15
"$BIN/lowprof-seccomp-tool" exec union "$BIN/lowprof" --duration 6 --interval 2 \
	--output "$work/out" --run-dir "$work" 2>"$work/stderr" ||
	fail "lowprof under the outer filter exited with $? ($(cat "$work/stderr"))"
grep -E "Bad system call|signal 31" "$work/stderr" && fail "a component hit the outer filter"
n=$(json_value "$work/out/summary.json" samples)
[ "$n" -gt 0 ] || fail "no samples under the outer filter"
echo "$n samples under the outer filter"
echo PASS
