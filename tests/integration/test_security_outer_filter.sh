#!/bin/sh
# Under an outer filter: lowprof runs under the union of every component's
# allowlist (what deploy/lowprof.service's SystemCallFilter= allows), installed
# by lowprof-seccomp-tool before exec, and profiles normally.
#   usage: test_security_outer_filter.sh BIN_DIR SOURCE_DIR
set -eu
BIN=$1
SRC=$2
. "$SRC/tests/integration/lib.sh"
require_bpf
work=$(mktemp -d /tmp/lowprof-sec-outer.XXXXXX)
spin=""
trap 'kill $spin 2>/dev/null || true; rm -rf "$work"' EXIT
# Something on CPU to sample: an idle CI host gives only idle-task samples.
timeout 15 sh -c 'while :; do :; done' &
spin=$!
"$BIN/lowprof-seccomp-tool" exec union "$BIN/lowprof" --duration 6 --interval 2 \
	--output "$work/out" --run-dir "$work" 2>"$work/stderr" ||
	fail "lowprof under the outer filter exited with $? ($(cat "$work/stderr"))"
grep -E "Bad system call|signal 31" "$work/stderr" && fail "a component hit the outer filter"
python3 - "$work/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/summary.json"))
if d["samples"] <= 0:
    sys.exit("FAIL: no samples under the outer filter")
print(f"{d['samples']} samples under the outer filter")
PY
echo PASS
