#!/bin/sh
# OTLP export end to end: a real HTTP sink on 127.0.0.1 receives a
# profile every --interval; each body decodes against the official schema,
# names the workload's functions and build id, carries the resource
# attributes, and the payloads add up to profile.pb.gz (go tool pprof -raw).
# libcurl is in the exporter only when it sends OTLP (exporter/otlp/curl_lib.h):
# a run without --otlp-endpoint first, whose exporter must not map it.
#   usage: test_otlp_export.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir otlp

# exporter_maps_curl: does the exporter of the run $sup map libcurl?
exporter_maps_curl() {
	exp=$(child_pid lowprof-exporter)
	[ -n "$exp" ] || fail "no exporter running under the supervisor $sup"
	grep -q "/libcurl[.-]" "/proc/$exp/maps"
}

"$BIN/lowprof" --duration 3 --output "$work/plain" --run-dir "$work/run-plain" \
	2>"$work/stderr-plain" &
sup=$!
track "$sup"
wait_profiling "$work/stderr-plain"
if exporter_maps_curl; then
	fail "the exporter maps libcurl without --otlp-endpoint: $(grep libcurl "/proc/$exp/maps" | head -n 1)"
fi
echo "ok: no libcurl in the exporter without OTLP"
wait "$sup" || fail "lowprof (no OTLP) exited with status $? ($(cat "$work/stderr-plain"))"

start_sink "$work/sink" 200

"$BIN/two_chains" 12 &
wl=$!
track "$wl"
"$BIN/lowprof" --pid "$wl" --duration 7 --frequency 99 --interval 2 --output "$work/out" \
	--no-throttle --run-dir "$work/run" --unwind fp \
	--otlp-endpoint "http://127.0.0.1:$port" --otlp-header "X-Lowprof-Test=yes" \
	2>"$work/stderr" &
sup=$!
track "$sup"
# The first profile goes at the first 2 s roll after the exporter is up;
# its delivery shows in `lowprof status` (asked every 0.5 s, up to 6 s).
i=0
while :; do
	sleep 0.5
	"$BIN/lowprof" status --run-dir "$work/run" >"$work/status" || fail "lowprof status failed"
	grep -q "export_sent=[1-9]" "$work/status" && break
	i=$((i + 1))
	[ "$i" -lt 12 ] || fail "lowprof status shows no export counters: $(cat "$work/status")"
done
exporter_maps_curl || fail "the exporter sends OTLP without libcurl mapped?"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"

n=$(ls "$work/sink" | grep -c '\.body$')
[ "$n" -ge 3 ] || fail "expected a request per 2 s interval over 7 s, got $n"
grep -qi "X-Lowprof-Test: yes" "$work/sink/req-1.headers" || fail "--otlp-header not sent"
if have_reference; then
	python3 "$SRC/tests/otlp/compare_otlp_pprof.py" "$work/sink" "$REFERENCE_PROTO_DIR" \
		"$work/out/profile.pb.gz" --expect-function chain_a_inner --expect-function leaf_b \
		--expect-function chain_b_outer --expect-build-id "$BIN/two_chains" || fail "payload check"
fi
python3 - "$work/out/summary.json" "$n" <<'PY' || fail "summary.json export counters"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["export"]
assert e["sent"] == int(sys.argv[2]) and e["failed"] == 0 and e["dropped"] == 0, e
assert e["bytes"] > 0, e
print("summary export:", e)
PY
echo "PASS: $n payloads"
