#!/bin/sh
# End to end: profile a frame-pointer workload whose time splits 70/30 between
# two known call chains, and check every output file.
#   usage: test_profile_e2e.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir e2e

"$BIN/two_chains" 14 &
wl=$!
track "$wl"
# --no-throttle: this test is about the pipeline, not about a busy CI host's tier.
"$BIN/lowprof" --pid "$wl" --duration 6 --frequency 199 --interval 2 --output "$work/out" \
	--no-throttle --run-dir "$work/run" --unwind fp \
	2>"$work/stderr" &
sup=$!
track "$sup"

# While it runs: every component is a process of its own, a child of the supervisor.
sleep 3
ps -o pid=,comm= --ppid "$sup" >"$work/children" || true
grep -q "lowprof-loader" "$work/children" || fail "no lowprof-loader child of the supervisor: $(cat "$work/children")"
# comm is cut at 15 characters
grep -q "lowprof-export" "$work/children" || fail "no lowprof-exporter child of the supervisor"
grep -q "lowprof-control" "$work/children" || fail "no lowprof-controller child of the supervisor"
grep -q "lowprof-unwinde" "$work/children" || fail "no lowprof-unwinder child of the supervisor"
[ "$(grep -c . "$work/children")" -eq 4 ] || fail "expected exactly 4 children: $(cat "$work/children")"
# `lowprof status` finds it through its run directory.
"$BIN/lowprof" status --run-dir "$work/run" >"$work/status" || fail "lowprof status failed"
grep -q "^loader *running" "$work/status" || fail "lowprof status: $(cat "$work/status")"
"$BIN/lowprof" status --json --run-dir "$work/run" >"$work/status.json" || fail "lowprof status --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["components"]) == 4' \
	"$work/status.json" || fail "lowprof status --json: $(cat "$work/status.json")"
# The throttle line says the overhead and losses of the last control interval
# (checked against summary.json's timeline once the run is over).
# And the CPUs sampled: every online one.
ncpu=$(getconf _NPROCESSORS_ONLN)
[ "$ncpu" = 1 ] && cpus_word="CPU" || cpus_word="CPUs"
grep -Eq "^throttle: tier [a-z]+, 199 Hz on $ncpu $cpus_word, fp unwinding, overhead [0-9]+\.[0-9]{4}%, drops [0-9]+\.[0-9]{2}%$" \
	"$work/status" || fail "lowprof status: no overhead, drops or CPUs: $(grep throttle "$work/status")"
# Requests the status socket does not know get an error line, not silence.
python3 - "$work/run/status.sock" <<'PY' || fail "status socket replies"
import socket, sys
def ask(req):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.sendall(req.encode() + b"\n")
    reply = s.recv(16384).decode()
    s.close()
    return reply
for req, want in [("bogus", "error: unknown request"),
                  ("restart nothing", "error: no component named 'nothing'"),
                  ("restart loader", "loader is running, not failed: nothing to do")]:
    got = ask(req)
    if not got.startswith(want):
        sys.exit(f"FAIL: {req!r}: got {got!r}, want {want!r}")
print("status socket: unknown and refused requests answered")
PY
# --interval 2: the files exist before the run ends (a loaded host may take a
# few seconds to verify the BPF program, so wait for the first interval while
# lowprof still runs).
n=0
while [ ! -s "$work/out/profile.folded" ] && kill -0 "$sup" 2>/dev/null && [ $n -lt 40 ]; do
	sleep 0.1
	n=$((n + 1))
done
kill -0 "$sup" 2>/dev/null || fail "lowprof ended before the check ($(cat "$work/stderr"))"
[ -s "$work/out/profile.folded" ] || fail "profile.folded not written during the run (--interval 2)"

wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"
cat "$work/stderr"
grep -q "flamegraph.svg" "$work/stderr" || fail "the end-of-run message does not say where the files are"

python3 "$SRC/tests/integration/check_profile.py" "$work/out" \
	--chain "main;chain_a_outer;chain_a_inner;leaf_a=70" \
	--chain "main;chain_b_outer;leaf_b=30" \
	--tolerance 10 --comm two_chains
# The overhead and losses `lowprof status` said are an interval's of the
# timeline, computed alike (throttle_overhead_pct, throttle_drop_pct).
python3 - "$work/status.json" "$work/out/summary.json" <<'PY' || fail "lowprof status against the timeline"
import json, sys
status = json.load(open(sys.argv[1]))
loader = [c for c in status["components"] if c["name"] == "loader"][0]["reported"]
overhead, drop = float(loader["overhead_pct"]), float(loader["drop_pct"])
timeline = json.load(open(sys.argv[2]))["timeline"]
match = [e for e in timeline
         if abs(e["overhead_pct"] - overhead) < 0.00006 and abs(e["drop_pct"] - drop) < 0.006]
if overhead <= 0 or not match:
    sys.exit(f"FAIL: status overhead {overhead}% drops {drop}%: in no timeline entry "
             f"({[(e['overhead_pct'], e['drop_pct']) for e in timeline]})")
print(f"lowprof status: overhead {overhead}%, drops {drop}%, as the timeline's entry at t={match[0]['t']}")
PY
