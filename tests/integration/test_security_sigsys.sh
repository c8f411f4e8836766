#!/bin/sh
# A component that makes a forbidden syscall dies by SIGSYS and the supervisor
# reports it: a private copy of lowprof whose "controller" is
# lowprof-seccomp-tool, which installs the controller's filter and calls ptrace.
#   usage: test_security_sigsys.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir sec-sigsys
busy_cpu 15
private_bin lowprof-controller
ln -s "$BIN/lowprof-seccomp-tool" "$work/bin/lowprof-controller"
"$work/bin/lowprof" --duration 5 --output "$work/out" --run-dir "$work" 2>"$work/stderr" || true
grep -E "controller.*(signal 31|Bad system call)" "$work/stderr" ||
	fail "the supervisor did not report the controller's SIGSYS: $(cat "$work/stderr")"
grep -q "ptrace returned" "$work/stderr" && fail "ptrace returned: the filter did not kill"
# The rest kept profiling.
[ "$(json_value "$work/out/summary.json" samples)" -gt 0 ] ||
	fail "no samples while the controller was crash-looping"
echo PASS
