#!/bin/sh
# The files' writes are paced within the CPU budget (exporter/output_pace.h):
# with a budget so small that a quarter of it (0.5 ms a second) holds about one
# write, the files of an interval are written in different control
# intervals, the heavier ones less often but never starved, no control
# interval holds them all; SIGHUP and the stop write every file at once.
#   usage: test_write_pacing.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir pacing

"$BIN/two_chains" 40 &
wl=$!
track "$wl"
# 0.1% of 2 CPUs is 2 ms a second, a quarter of it 0.5 ms: about one file's
# write (profile.pb.gz ~0.7 ms, flamegraph.svg ~0.5, summary.json ~0.3,
# profile.folded ~0.1 for this workload). At 0.2% (1 ms) all four fitted in
# one slot now and then once the writes got cheaper (1 run in 4).
# --no-throttle: the budget paces the writes only; sampling stays at 99 Hz.
"$BIN/lowprof" --pid "$wl" --duration 34 --frequency 99 --interval 5 --cpu-budget 0.1 \
	--no-throttle --output "$work/out" --run-dir "$work/run" --unwind fp 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 24
cp "$work/out/summary.json" "$work/mid.json" || fail "no summary.json after 24 s"
# SIGHUP: every file now, whatever its turn. The summary.json that first
# counts it is the one that write made (summary.json is its last file): a
# copy taken later may hold the next interval's paced writes instead.
kill -HUP "$sup"
python3 - "$work/out/summary.json" "$work/hup.json" <<'PY' || fail "no summary.json counting the SIGHUP's write within 5 s"
import json, shutil, sys, time
deadline = time.monotonic() + 5
while time.monotonic() < deadline:
    try:
        with open(sys.argv[1]) as f:
            text = f.read()
        if json.loads(text)["outputs"]["forced"] >= 1:
            open(sys.argv[2], "w").write(text)
            sys.exit(0)
    except (OSError, ValueError, KeyError):
        pass
    time.sleep(0.02)
sys.exit(1)
PY
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"

python3 - "$work/mid.json" "$work/hup.json" "$work/out/summary.json" "$(nproc)" <<'PY' || fail "pacing"
import json, sys
mid, hup, end = (json.load(open(p)) for p in sys.argv[1:4])
ncpus = int(sys.argv[4])
o = mid["outputs"]
files = o["files"]
print("mid-run outputs:", json.dumps(o))
# The allowance: a quarter of 0.1% of the host's CPUs over 1 s.
assert abs(o["allowance_ms"] - 0.25 * 0.001 * ncpus * 1000) < 0.01, o
assert o["slots_per_interval"] == 5 and o["max_every"] == 6, o
for name in ("profile.pb.gz", "profile.folded", "flamegraph.svg", "summary.json"):
    f = files[name]
    assert f["writes"] >= 1 and f["written_s"] is not None, (name, f)
    assert 1 <= f["every_intervals"] <= 6, (name, f)
    # Never starved: written within its period (plus the interval's slots).
    assert mid["duration_s"] - f["written_s"] <= f["every_intervals"] * 5 + 5 + 1, (name, f, mid["duration_s"])
# Spread: the three profile files were last written in different control intervals...
t = sorted(files[n]["written_s"] for n in ("profile.pb.gz", "profile.folded", "flamegraph.svg"))
assert t[1] - t[0] >= 0.5 or t[2] - t[1] >= 0.5, t
# ... and no control interval took the files' whole cost: the costliest one
# held fewer jobs than the interval has (the merge and every file; a paused
# piece counts as a job too: 4 jobs in 0.64 ms once in CI, on writes half
# as costly as usual), and when it held files at all, it cost
# less than they do together at their costliest (each file's max_cost_ms:
# a slow moment of the VM makes one slot's job several times its usual
# cost, 4.3 ms for one job once in CI against 3.6 ms for all of them at
# their last costs; and a costliest slot of no file is the window's roll on
# such a moment: 3.3 ms once, against 0.35 usually).
whole = o["merge_ms"] + sum(files[n]["cost_ms"] for n in files)
worst = o["merge_ms"] + o["roll_ms"] + sum(files[n]["max_cost_ms"] for n in files)
assert o["max_slot_jobs"] < 1 + len(files), o
assert o["max_slot_jobs"] == 0 or o["max_slot_ms"] < worst, (o["max_slot_ms"], worst)
assert o["deferred"] > 0, o
# SIGHUP wrote every file at once: within a second of each other.
h = hup["outputs"]
assert h["forced"] >= 1, h
ts = [f["written_s"] for f in h["files"].values()]
assert max(ts) - min(ts) < 1.0, h
# The stop too.
e = end["outputs"]
assert e["forced"] >= 2, e
ts = [f["written_s"] for f in e["files"].values()]
assert max(ts) - min(ts) < 1.0 and abs(max(ts) - end["duration_s"]) < 1.0, (e, end["duration_s"])
# The caps' counts beside it (summary.json "caps"), the audit log's from the supervisor.
c = end["caps"]
for k in ("max_stacks", "folded_samples", "dropped_samples", "string_bytes", "window_bytes",
          "symbol_bytes", "symbol_evictions", "symbol_string_trims", "files_set_aside"):
    assert isinstance(c[k], int), (k, c)
assert c["string_bytes"] > 0 and c["symbol_bytes"] > 0, c
assert c["audit"]["records"] > 0 and c["audit"]["suppressed"] == 0, c
print("pacing ok: max slot %.2f ms (%d jobs) of %.2f ms per interval, %d deferred, %d paused" %
      (o["max_slot_ms"], o["max_slot_jobs"], whole, o["deferred"], o["pauses"]))
PY
echo "PASS"
