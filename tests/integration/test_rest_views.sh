#!/bin/sh
# A trickle (README, "Pacing"): a process that runs 30 ms every 3 s gives
# lowprof (19 Hz, --interval 2) a sample now and then, at most one a second.
# After such an interval profile.pb.gz is written as ever (a restart reloads
# it), but profile.folded and flamegraph.svg wait: at most max_every
# intervals after they were last written. summary.json, copied before the
# stop (which writes everything), says how often each was written.
#   usage: test_rest_views.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir rest-views

python3 -c '
import time
while True:
    t = time.monotonic()
    while time.monotonic() - t < 0.03:
        pass
    time.sleep(3)' &
trickle=$!
track "$trickle"
"$BIN/lowprof" --duration 40 --interval 2 --pid "$trickle" --no-throttle --output "$work/out" \
	--run-dir "$work/run" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 26
cp "$work/out/summary.json" "$work/summary-at-rest.json"
kill -TERM "$sup"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"

python3 - "$work/summary-at-rest.json" <<'PY' || fail "the views after a trickle"
import json, sys
s = json.load(open(sys.argv[1]))
o = s["outputs"]
w = {n: o["files"][n]["writes"] for n in ("profile.pb.gz", "profile.folded", "flamegraph.svg")}
stale = max(s["duration_s"] - o["files"][n]["written_s"] for n in ("profile.folded", "flamegraph.svg"))
print(f"{s['samples']} samples in {s['duration_s']:.0f} s; writes {w}; rested {o['rested']}, "
      f"unchanged {o['unchanged']}; the views at most {stale:.1f} s old (max_every {o['max_every']})")
if s["samples"] == 0 or s["samples"] > s["duration_s"]:
    sys.exit("FAIL: not a trickle: nothing was tested")
if w["profile.pb.gz"] < 3:
    sys.exit("FAIL: profile.pb.gz was not rewritten after the trickle's intervals")
if o["rested"] == 0 or w["profile.folded"] >= w["profile.pb.gz"] or w["flamegraph.svg"] >= w["profile.pb.gz"]:
    sys.exit("FAIL: the views were rewritten after every trickle")
# The copy comes up to an interval after the last roll, and a write up to
# an interval after its roll.
if stale > (o["max_every"] + 2) * 2:
    sys.exit(f"FAIL: a view {stale:.1f} s old, more than max_every intervals")
print("PASS")
PY
