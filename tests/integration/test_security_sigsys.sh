#!/bin/sh
# A component that makes a forbidden syscall dies by SIGSYS and the supervisor
# reports it: a private copy of lowprof whose "controller" is
# lowprof-seccomp-tool, which installs the controller's filter and calls ptrace.
#   usage: test_security_sigsys.sh BIN_DIR SOURCE_DIR
set -eu
BIN=$1
SRC=$2
. "$SRC/tests/integration/lib.sh"
require_bpf
work=$(mktemp -d /tmp/lowprof-sec-sigsys.XXXXXX)
spin=""
trap 'kill $spin 2>/dev/null || true; rm -rf "$work"' EXIT
# Something on CPU to sample: an idle CI host gives only idle-task samples.
timeout 15 sh -c 'while :; do :; done' &
spin=$!
# The components that run as --user must be able to reach their binaries.
chmod 755 "$work"
mkdir "$work/bin"
cp "$BIN/lowprof" "$work/bin/lowprof"
for p in lowprof-loader lowprof-exporter lowprof-unwinder; do ln -s "$BIN/$p" "$work/bin/$p"; done
ln -s "$BIN/lowprof-seccomp-tool" "$work/bin/lowprof-controller"
"$work/bin/lowprof" --duration 5 --output "$work/out" --run-dir "$work" 2>"$work/stderr" || true
grep -E "controller.*(signal 31|Bad system call)" "$work/stderr" ||
	fail "the supervisor did not report the controller's SIGSYS: $(cat "$work/stderr")"
grep -q "ptrace returned" "$work/stderr" && fail "ptrace returned: the filter did not kill"
# The rest kept profiling.
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['samples'] > 0 else 1)" \
	"$work/out/summary.json" || fail "no samples while the controller was crash-looping"
echo PASS
