#!/bin/sh
# lowprof started by a user without the loader's capabilities stops at once
# with an error that names them and a non-zero status, and does not end
# with a sample count and files to look at as if the run had sampled.
#   usage: test_start_unprivileged.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || {
	echo "SKIP: needs root to start lowprof as another user"
	exit 77
}
work_dir unprivileged
chmod 0777 "$work"

rc=0
start=$(date +%s)
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$BIN/lowprof" --duration 60 --output "$work/out" --run-dir "$work/run" \
	>"$work/stdout" 2>"$work/stderr" || rc=$?
took=$(($(date +%s) - start))
cat "$work/stderr"
[ "$rc" -ne 0 ] || fail "lowprof without capabilities exited 0"
# At once, not after the exporter's wait for the loader's kernel symbols (10 s).
[ "$took" -lt 6 ] || fail "lowprof took $took s to stop"
grep -q "missing capabilities: .*CAP_BPF" "$work/stderr" || fail "the error does not name the capabilities"
grep -q "the loader cannot start" "$work/stderr" || fail "the supervisor does not say it stops"
if grep -q "flame graph:\|samples, .* lost" "$work/stderr"; then
	fail "a run that never sampled ends with a sample count or files to look at"
fi
grep -q "nothing sampled" "$work/stderr" || fail "the end does not say nothing was sampled"
echo PASS
