#!/bin/sh
# The throttle under a load spike: busy-loop every CPU for 10 s inside a 30 s
# run. The tier leaves healthy within 3 control intervals of the load starting,
# comes back within 3 intervals plus the hysteresis (3) after it ends, and the
# perf events really fire at the lower rate (events per second in the timeline).
#   usage: test_throttle_load.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir thr-load

t0=$(now)
"$BIN/lowprof" --duration 30 --frequency 19 --output "$work/out" 2>"$work/stderr" &
sup=$!
track "$sup"
sleep 8
load_start=$(now)
spinners=""
for i in $(seq "$(nproc)"); do
	busy_cpu 10
	spinners="$spinners $busy"
done
wait $spinners 2>/dev/null || true
load_end=$(now)
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"
grep "lowprof-controller" "$work/stderr" || true

python3 - "$work/out" "$SRC" "$(echo "$load_start - $t0" | bc)" "$(echo "$load_end - $t0" | bc)" "$(nproc)" <<'PY'
import sys
sys.path.insert(0, sys.argv[2] + "/tests/integration")
import throttle_lib as L

d, tl = L.load(sys.argv[1])
start, end, ncpu = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
L.show(tl)
print("overhead:", d["overhead"])
interval = 1.0
# t is the end of each interval, counted from the exporter's start (a few ms
# after the supervisor's): allow one interval of slack for that and the tick.
left = [e for e in tl if e["t"] > start and e["tier"] != "healthy"]
if not left:
    sys.exit("FAIL: the tier never left healthy under load")
lat = left[0]["t"] - start
print(f"left healthy {lat:.2f} s after the load started ({left[0]['tier']})")
if lat > 3 * interval + 1.0:
    sys.exit(f"FAIL: left healthy {lat:.2f} s after the load started (limit 3 intervals)")
# A long interval (a rest, or a steady one: docs/THROTTLE.md) running when
# the load came ends at once, woken by the samples piling up: the load is
# decided on within an interval, and the next entry shows it.
if lat > 2 * interval + 0.5:
    sys.exit(f"FAIL: left healthy {lat:.2f} s after the load started: a long interval "
             "waited for its end")
back = [e for e in tl if e["t"] > end and e["tier"] == "healthy"]
if not back:
    sys.exit("FAIL: the tier never came back to healthy after the load")
rec = back[0]["t"] - end
print(f"back to healthy {rec:.2f} s after the load ended")
if rec > (3 + 3) * interval + 1.0:
    sys.exit(f"FAIL: back to healthy only {rec:.2f} s after the load ended (limit 3 + 3 intervals)")
# The rate really drops: settled entries fully inside the load, in the
# critical tier, against the healthy entries before it.
crit = [e for e in tl if start + 2 < e["t"] - e["interval_s"] and e["t"] < end - 0.2
        and e["tier"] == "critical" and not e["paused"]]
pre = [e for e in tl if 1.5 < e["t"] < start and e["tier"] == "healthy"]
# Counted in seconds: a steady interval (ipc/throttle.h) lasts two.
crit_s, pre_s = (sum(e["interval_s"] for e in es) for es in (crit, pre))
if crit_s < 3 or pre_s < 3:
    sys.exit(f"FAIL: too little settled time (critical {crit_s:.1f} s, healthy {pre_s:.1f} s)")
def rate(es):
    return sum(e["events"] for e in es) / sum(e["interval_s"] for e in es)
r_crit, r_pre = rate(crit), rate(pre)
# The critical tier samples at 5 Hz, or lower while a budget step holds (an
# interval whose own cost went over the budget halves the frequency, and the
# next ones under it restore it: docs/THROTTLE.md). The events follow the
# frequency in force in each interval.
f_max = max(e["frequency_hz"] for e in crit)
if f_max > 5:
    sys.exit(f"FAIL: the critical tier sampled at {f_max} Hz (at most 5)")
expected = sum(e["frequency_hz"] * ncpu * e["interval_s"] for e in crit) / crit_s
freqs = sorted({e["frequency_hz"] for e in crit})
print(f"events/s: healthy (idle host) {r_pre:.1f}, critical at {freqs} Hz x {ncpu} CPUs "
      f"{r_crit:.1f} (expected {expected:.1f})")
if abs(r_crit - expected) > 0.3 * expected:
    sys.exit(f"FAIL: critical tier fires {r_crit:.1f}/s, expected {expected:.1f}/s")
if r_pre < 1.5 * r_crit:
    sys.exit(f"FAIL: healthy rate {r_pre:.1f}/s is not clearly above the critical {r_crit:.1f}/s")
print("PASS")
PY
