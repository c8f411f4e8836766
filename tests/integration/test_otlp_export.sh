#!/bin/sh
# OTLP export end to end (issue 7): a real HTTP sink on 127.0.0.1 receives a
# profile every --interval; each body decodes against the official schema,
# names the workload's functions and build id, carries the resource
# attributes, and the payloads add up to profile.pb.gz (go tool pprof -raw).
#   usage: test_otlp_export.sh BIN_DIR SOURCE_DIR
set -eu
BIN=$1
SRC=$2
. "$SRC/tests/integration/lib.sh"
require_bpf
command -v protoc >/dev/null || { echo "SKIP: no protoc" >&2; exit 77; }

work=$(mktemp -d /tmp/lowprof-otlp.XXXXXX)
trap 'kill $wl $sink 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir "$work/sink"
python3 "$SRC/tests/otlp/http_sink.py" "$work/sink" 200 &
sink=$!
i=0
while [ ! -s "$work/sink/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$work/sink/port")

"$BIN/two_chains" 12 &
wl=$!
"$BIN/lowprof" --pid "$wl" --duration 7 --frequency 99 --interval 2 --output "$work/out" \
	--no-throttle --run-dir "$work/run" --unwind fp \
	--otlp-endpoint "http://127.0.0.1:$port" --otlp-header "X-Lowprof-Test=yes" \
	2>"$work/stderr" &
sup=$!
sleep 4
"$BIN/lowprof" status --run-dir "$work/run" >"$work/status" || fail "lowprof status failed"
grep -q "export_sent=[1-9]" "$work/status" || fail "lowprof status shows no export counters: $(cat "$work/status")"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"

n=$(ls "$work/sink" | grep -c '\.body$')
[ "$n" -ge 3 ] || fail "expected a request per 2 s interval over 7 s, got $n"
grep -qi "X-Lowprof-Test: yes" "$work/sink/req-1.headers" || fail "--otlp-header not sent"
python3 "$SRC/tests/otlp/compare_otlp_pprof.py" "$work/sink" /work/shared/reference/proto \
	"$work/out/profile.pb.gz" --expect-function chain_a_inner --expect-function leaf_b \
	--expect-function chain_b_outer --expect-build-id "$BIN/two_chains" || fail "payload check"
python3 - "$work/out/summary.json" "$n" <<'PY' || fail "summary.json export counters"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["export"]
assert e["sent"] == int(sys.argv[2]) and e["failed"] == 0 and e["dropped"] == 0, e
assert e["bytes"] > 0, e
print("summary export:", e)
PY
echo "PASS: $n payloads"
