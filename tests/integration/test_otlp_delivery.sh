#!/bin/sh
# OTLP delivery against a real sink: (1) a 503 with Retry-After,
# then 200: the profile arrives once, late, and the payloads still add up to
# profile.pb.gz; (2) no collector for a while: the queue (bounded to a few
# KiB) fills, the oldest profiles are dropped and counted in summary.json,
# sampling goes on, and what is queued is delivered once the sink is up.
#   usage: test_otlp_delivery.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir otlpd

# --- 1: 503 + Retry-After: 3, then 200 --------------------------------------
start_sink "$work/s1" "503:3,200"
"$BIN/two_chains" 10 &
wl=$!
track "$wl"
"$BIN/lowprof" --pid "$wl" --duration 5 --frequency 99 --interval 2 --output "$work/out1" \
	--no-throttle --run-dir "$work/run1" --unwind fp \
	--otlp-endpoint "http://127.0.0.1:$port" 2>"$work/stderr1" \
	|| fail "lowprof (503 phase) failed: $(cat "$work/stderr1")"
kill $wl $sink 2>/dev/null || true
cmp -s "$work/s1/req-1.body" "$work/s1/req-2.body" || fail "the retry did not resend the same profile"
late=$(python3 -c 'import os,sys; d=sys.argv[1]; print(os.stat(d+"/req-2.body").st_mtime - os.stat(d+"/req-1.body").st_mtime)' "$work/s1")
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 2.5 else 1)' "$late" \
	|| fail "the retry came after $late s, before the Retry-After of 3 s"
n=$(ls "$work/s1" | grep -c '\.body$')
accepted=$(seq -s, 2 "$n")
if have_reference; then
	python3 "$SRC/tests/otlp/compare_otlp_pprof.py" "$work/s1" "$REFERENCE_PROTO_DIR" \
		"$work/out1/profile.pb.gz" --accepted "$accepted" || fail "503 phase: payloads vs pprof"
fi
python3 - "$work/out1/summary.json" "$n" <<'PY' || fail "503 phase: summary.json export counters"
import json, sys
e = json.load(open(sys.argv[1]))["export"]
# Every payload once: the one that got the 503 counted as retried, not failed.
assert e["sent"] == int(sys.argv[2]) - 1 and e["retried"] >= 1 and e["failed"] == 0 and e["dropped"] == 0, e
print("503 phase: export %s" % e)
PY
echo "503 phase: the first profile arrived $late s late, once"

# --- 2: no collector for 8 s, a 3 KiB queue ---------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir "$work/s2"
"$BIN/two_chains" 20 &
wl=$!
track "$wl"
"$BIN/lowprof" --pid "$wl" --duration 13 --frequency 99 --interval 1 --output "$work/out2" \
	--no-throttle --run-dir "$work/run2" --unwind fp --otlp-queue-mb 0.003 \
	--otlp-endpoint "http://127.0.0.1:$port" 2>"$work/stderr2" &
sup=$!
track "$sup"
sleep 8
start_sink "$work/s2" 200 "$port"
wait "$sup" || fail "lowprof (down phase) failed: $(cat "$work/stderr2")"
python3 - "$work/out2/summary.json" <<'PY' || fail "down phase: summary.json"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["export"]
assert e["dropped"] >= 1, ("nothing dropped from a 3 KiB queue", e)
assert e["sent"] >= 1, ("nothing delivered once the sink was up", e)
# Sampling went on: ~99 Hz x 13 s on one busy CPU.
assert d["samples"] >= 99 * 13 * 0.6, ("sampling suffered", d["samples"])
print("down phase: export %s, samples %d" % (e, d["samples"]))
PY
[ "$(ls "$work/s2" | grep -c '\.body$')" -ge 1 ] || fail "down phase: the sink got nothing"
if have_reference; then
	python3 "$SRC/tests/otlp/compare_otlp_pprof.py" "$work/s2" "$REFERENCE_PROTO_DIR" \
		"$work/out2/profile.pb.gz" --no-pprof || fail "down phase: payloads malformed"
fi
echo "PASS"
