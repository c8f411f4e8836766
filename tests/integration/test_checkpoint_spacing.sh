#!/bin/sh
# The checkpoint of the interval being collected is spaced by its measured
# cost (exporter/exporter_checkpoint.h): with an interval that never closes
# during the run and a budget so small that a quarter of the writes'
# allowance is 62 us a second on 2 CPUs, checkpoints every 2 s (the old
# rule: ~14 in the run, each a few hundred us) would take several times
# that. Checked: their CPU over the run stays within a quarter of the
# allowance (plus the first one, written at once), the file is still
# rewritten while samples come, and no two writes are closer than 2 s.
#   usage: test_checkpoint_spacing.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir ckpt

"$BIN/two_chains" 40 &
wl=$!
track "$wl"
# 0.05% of the host: a quarter of it for the writes, a quarter of that for
# the checkpoints. --no-throttle: sampling stays at 99 Hz. --interval 60:
# nothing closes before the stop, only checkpoints are written meanwhile.
"$BIN/lowprof" --pid "$wl" --duration 32 --frequency 99 --interval 60 --cpu-budget 0.05 \
	--no-throttle --output "$work/out" --run-dir "$work/run" --unwind fp 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"

# When the checkpoint was rewritten, seen every 0.1 s (its mtime, ns).
python3 - "$work/out/.lowprof-interval.pb.gz" "$work/writes" <<'PY' &
import os, sys, time
path, out = sys.argv[1], sys.argv[2]
seen, end = [], time.monotonic() + 29
while time.monotonic() < end:
    try:
        m = os.stat(path).st_mtime_ns
        if not seen or m != seen[-1]:
            seen.append(m)
    except FileNotFoundError:
        pass
    time.sleep(0.1)
open(out, "w").write("\n".join(str(m) for m in seen) + "\n")
PY
watcher=$!
wait "$watcher" || fail "the watcher failed"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"

python3 - "$work/out/summary.json" "$work/writes" <<'PY' || fail "checkpoint spacing"
import json, sys
s = json.load(open(sys.argv[1]))
writes = [int(l) for l in open(sys.argv[2]) if l.strip()]
ck, o = s["checkpoint"], s["outputs"]
print("checkpoint:", json.dumps(ck), "allowance_ms", o["allowance_ms"], "run", s["duration_s"], "s")
gaps = [(b - a) / 1e9 for a, b in zip(writes, writes[1:])]
print("writes seen: %d, gaps %s" % (len(writes), ["%.1f" % g for g in gaps]))
assert ck["failures"] == 0, ck
assert ck["writes"] >= 2, ck
assert len(writes) >= 2, "the checkpoint was not rewritten while samples came"
# No two closer than the shortest gap (mtime against a 0.1-s poll).
assert min(gaps) >= 2.0 - 0.15, gaps
# Their CPU: a quarter of the writes' allowance per second of the run, and
# the first one, written as soon as samples came (no cost known then).
share = o["allowance_ms"] / 4 * s["duration_s"]
assert ck["cpu_ms"] <= share + ck["max_cost_ms"], (ck["cpu_ms"], share, ck["max_cost_ms"])
# The gap now follows the last one's cost: at most a minute.
expect = min(max(2.0, ck["cost_ms"] * 4 / o["allowance_ms"]), 60.0)
assert abs(ck["every_s"] - expect) <= 0.1, (ck["every_s"], expect)
print("checkpoint spacing ok: %.2f ms of CPU in %d writes, within %.2f ms" %
      (ck["cpu_ms"], ck["writes"], share + ck["max_cost_ms"]))
PY
