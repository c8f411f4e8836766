#!/bin/sh
# At rest (README, "Writes paced within the CPU budget"): a process that runs 120 ms every 4 s gives
# lowprof (19 Hz, --interval 2) a trickle, about half a sample a second.
# Such an interval is not closed at its end but goes on, at most max_every
# intervals in all: the files are rewritten once every max_every intervals,
# not at every one, and are never older than that. Its samples are not at
# risk meanwhile: an exporter killed 9 s into such an interval takes them
# back from the checkpoint. And a busy interval is closed at its end: the
# files show it within an interval and a write (after the trickle's sleep).
# An end that only lets the interval go on comes with a wake the exporter
# has anyway: strace on the exporter counts its own.
# --liveness-timeout 15: the loader's rests (and so its drains of the
# trickle) 6 s apart, so that 9 s into an interval the exporter has read
# some of it (at the default 30 s, the samples may all still wait in the
# BPF ring: not lost, but nothing for the checkpoint to show).
#   usage: test_rest_interval.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir rest-interval

# The trickle; while $work/busy exists, a CPU kept busy.
python3 -c '
import os, sys, time
flag = sys.argv[1]
while True:
    t = time.monotonic()
    while time.monotonic() - t < 0.12 or os.path.exists(flag):
        pass
    time.sleep(4)' "$work/busy" &
trickle=$!
track "$trickle"
"$BIN/lowprof" --duration 120 --interval 2 --pid "$trickle" --no-throttle --liveness-timeout 15 --output "$work/out" \
	--run-dir "$work/run" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
# The exporter's sleeps: an end that only lets the interval go on wakes
# nothing of its own (no OTLP here), it comes with the loader's notice.
exporter=$(child_pid lowprof-exporter)
[ -n "$exporter" ] || fail "no exporter"
strace -e trace=poll -o "$work/polls" -p "$exporter" 2>/dev/null &
tracer=$!
track "$tracer"
sleep 26
kill -INT "$tracer" 2>/dev/null
wait "$tracer" 2>/dev/null || true # strace ends on SIGINT with its status
cp "$work/out/summary.json" "$work/summary-at-rest.json"

python3 - "$work/summary-at-rest.json" "$work/polls" <<'PY' || fail "the files at rest"
import json, sys
s = json.load(open(sys.argv[1]))
timeouts = sum(1 for l in open(sys.argv[2]) if "= 0 (Timeout)" in l)
o = s["outputs"]
names = ("profile.pb.gz", "profile.folded", "flamegraph.svg", "summary.json")
w = {n: o["files"][n]["writes"] for n in names}
# summary.json is written last at a roll: it says when the others were.
stale = max(o["files"]["summary.json"]["written_s"] - o["files"][n]["written_s"] for n in names)
ends = int(s["duration_s"] / 2)
print(f"{s['samples']} samples in {s['duration_s']:.0f} s ({ends} interval ends); writes {w}; "
      f"extended {o['extended']}; a file at most {stale:.1f} s older than summary.json "
      f"(max_every {o['max_every']})")
if s["samples"] == 0 or s["samples"] > s["duration_s"]:
    sys.exit("FAIL: not a trickle: nothing was tested")
if o["extended"] == 0:
    sys.exit("FAIL: no interval went on at rest")
# The first interval closes (the files appear), then one roll every
# max_every intervals: 26 s at 2 s a interval and 6 intervals a roll make 3.
most = 2 + ends // o["max_every"]
if any(n > most for n in w.values()):
    sys.exit(f"FAIL: files rewritten more than {most} times at rest")
if stale > 2:
    sys.exit(f"FAIL: a file left {stale:.1f} s behind summary.json at a roll")
if s["duration_s"] - o["files"]["summary.json"]["written_s"] > (o["max_every"] + 1) * 2:
    sys.exit("FAIL: the files are older than max_every intervals")
# The exporter's own wakes (its poll timing out) are the rolls, each maybe
# with a paced slot after it: not the ends that went on. Each of those waited
# for the loader's notice (6 s apart); before, an end waited 0.9 of an
# interval at most, and two ends in three woke the exporter on their own.
rolls = w["summary.json"]
print(f"exporter woken by its own timeout {timeouts} times in 26 s, {rolls} rolls")
if timeouts > 2 * rolls + 1:
    sys.exit(f"FAIL: {timeouts} wakes of the exporter's own for {rolls} rolls at rest")
print("at rest: PASS")
PY

# A roll rewrites summary.json: 9 s after one, the interval has gone on
# for 4 more (another roll comes 12 s after it), its samples in the checkpoint.
before=$(stat -c %Y.%N "$work/out/summary.json" 2>/dev/null)
i=0
while [ "$(stat -c %Y.%N "$work/out/summary.json")" = "$before" ]; do
	i=$((i + 1))
	[ "$i" -le 160 ] || fail "summary.json not rewritten in 16 s at rest"
	sleep 0.1
done
sleep 9
pid=$(child_pid lowprof-exporter)
[ -n "$pid" ] || fail "no exporter to kill"
kill -9 "$pid"
wait_exporter_restart "$work/out/summary.json" "$work/stderr" 150
python3 - "$work/stderr" "$work/out/summary.json" <<'PY' || fail "the interval gone on, after a kill"
import json, re, sys
m = re.search(r"restart: reloaded (\d+) samples \((\d+) of them from the checkpoint\); (\d+) read",
              open(sys.argv[1]).read())
assert m, "no restart reloaded a checkpoint"
reloaded, tail, lost = map(int, m.groups())
d = json.load(open(sys.argv[2]))
print(f"killed 9 s into an interval gone on: {tail} of its samples from the checkpoint, "
      f"{lost} lost (lost_on_restart {d['lost_on_restart']})")
# Two or three bursts of ~2 samples before the kill, all but those after
# the last checkpoint (at most a few seconds old) come back.
assert tail >= 1, "the checkpoint held nothing of the interval that went on"
assert lost <= 6, ("lost", lost)
print("kill at rest: PASS")
PY

# Busy: the interval the load falls in closes at its end, and its files follow.
samples0=$(json_value "$work/out/summary.json" samples)
touch "$work/busy"
t0=$(now)
i=0
while :; do
	s=$(json_value "$work/out/summary.json" samples 2>/dev/null || echo "$samples0")
	[ "$s" -lt $((samples0 + 19)) ] || break
	i=$((i + 1))
	[ "$i" -le 80 ] || fail "8 s busy and the files still hold fewer than 19 samples more ($samples0 -> $s)"
	sleep 0.1
done
rm -f "$work/busy"
echo "busy: $samples0 -> $s samples in the files $(echo "$(now) - $t0" | bc) s after the load began"
kill -TERM "$sup"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"

# A window of two intervals: an interval goes on for one more at most, or
# it would have begun more than a window ago and leave it at its own roll,
# its samples in no file.
"$BIN/lowprof" --duration 20 --interval 2 --window 4 --pid "$trickle" --no-throttle \
	--output "$work/out2" --run-dir "$work/run2" 2>"$work/stderr2" &
sup=$!
track "$sup"
wait_profiling "$work/stderr2"
sleep 17
cp "$work/out2/summary.json" "$work/summary-short-window.json"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr2"))"
python3 - "$work/summary-short-window.json" <<'PY' || fail "an interval longer than the window"
import json, sys
s = json.load(open(sys.argv[1]))
o = s["outputs"]
rolls = o["files"]["summary.json"]["writes"]
print(f"window 4 s, interval 2: {s['samples']} samples, {rolls} rolls, extended {o['extended']}")
assert s["samples"] <= s["duration_s"], "not a trickle"
assert o["extended"] >= 1, "no interval went on"
assert o["extended"] <= rolls, "an interval went on past the window"
print("short window: PASS")
PY
echo PASS
