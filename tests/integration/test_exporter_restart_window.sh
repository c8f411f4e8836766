#!/bin/sh
# The window in progress survives an exporter restart interval by interval:
# with --interval 2 --window 8, kill -9 the exporter once the window is full,
# and follow summary.json and profile.pb.gz until the run ends. After the
# restart the files never cover more than the window (a roll's worth of
# slack), and the intervals reloaded from before the kill leave one by one
# (the window's start moves through their starts) instead of staying as one
# block until its newest part leaves (files covering up to two windows).
# The splits live in memfds the supervisor holds (fds 16 and 17 of the
# exporter), not in the output directory. A profile.pb.gz whose split was
# spoilt is then reloaded whole, the split refused and emptied; the off-CPU
# window (--off-cpu) is taken back by its own split.
#   usage: test_exporter_restart_window.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir exrestartwin
"$BIN/two_chains" 60 &
wl=$!
track "$wl"

# Polls summary.json and profile.pb.gz every 0.1 s until $1/stop exists; one
# JSON line per change: the window fields, the samples, the restarts, and
# profile.pb.gz's time_nanos, duration_nanos and sample count.
start_watch() {
	python3 - "$1" "$SRC/tests/integration" >"$1/watch.jsonl" <<'PY' &
import gzip, json, os, sys, time
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from pb_lib import fields

def pprof_times(path):
    """Profile's time_nanos (9), duration_nanos (10), and its samples (2)."""
    t = d = n = 0
    for num, v in fields(gzip.open(path).read()):
        if num == 9: t = v
        elif num == 10: d = v
        elif num == 2: n += 1
    return t, d, n

last = None
while not os.path.exists(os.path.join(out, "stop")):
    try:
        s = json.load(open(os.path.join(out, "summary.json")))
        t, d, n = pprof_times(os.path.join(out, "profile.pb.gz"))
        rec = dict(window=s["window"], samples=s["samples"],
                   restarts=s["restarts"]["exporter"], start_unix_ns=s.get("start_unix_ns"),
                   pprof_time_ns=t, pprof_duration_ns=d, pprof_samples=n)
        key = json.dumps(rec, sort_keys=True)
        if key != last:
            last = key
            print(key, flush=True)
    except (OSError, ValueError, KeyError, IndexError, EOFError):
        pass  # a file being replaced, or not there yet
    time.sleep(0.1)
PY
}

kill_exporter() {
	pid=$(child_pid lowprof-exporter)
	[ -n "$pid" ] || fail "no exporter child to kill: $(ps -o pid=,comm= --ppid "$sup")"
	kill -9 "$pid"
	echo "killed exporter $pid"
}

out="$work/out"
mkdir "$out"
# --cpu-budget 100: every file of an interval written at once after its roll.
"$BIN/lowprof" --pid "$wl" --duration 32 --frequency 99 --interval 2 --window 8 \
	--cpu-budget 100 --output "$out" --no-throttle --run-dir "$work/run" --unwind fp \
	2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
start_watch "$out"
track $!
# The window full (four intervals of 2 s) and written, then a kill in the
# middle of an interval; the run goes on for more than a window after it.
sleep 13
kill_exporter
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"
touch "$out/stop"
sleep 0.3
grep -q "restart: the reloaded window's [0-9]* intervals taken back" "$work/stderr" ||
	fail "the restarted exporter did not take the window back by interval: $(grep restart "$work/stderr")"

python3 - "$out/watch.jsonl" "$out/summary.json" <<'PY' || fail "the window after the restart"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
final = json.load(open(sys.argv[2]))
WINDOW, INTERVAL, HZ = 8, 2, 99
pre = [r for r in recs if r["restarts"] == 0]
post = [r for r in recs if r["restarts"] == 1]
assert len(pre) >= 3 and len(post) >= 5, ("too few writes seen", len(pre), len(post))
# Before the kill the window was full: four intervals (three when the
# oldest one started a hair earlier after its roll than now is after this one).
assert pre[-1]["window"]["intervals"] >= WINDOW // INTERVAL - 1, pre[-1]
last_pre_start = pre[-1]["window"]["start_s"]
for r in post:
    w = r["window"]
    # Never more than the window: the closed intervals cover the last window
    # at a roll, and the summary is written right after it (a roll at the
    # stop adds the current interval). Kept whole, the reloaded window would
    # stay until its newest part leaves: up to two windows.
    assert w["covered_s"] <= WINDOW + INTERVAL + 0.5, ("the files cover more than the window", r)
    assert r["pprof_duration_ns"] <= (WINDOW + INTERVAL + 0.5) * 1e9, ("profile.pb.gz spans more than the window", r)
    # The samples follow: one busy thread at 99 Hz, at most a window and a roll's worth.
    assert r["samples"] <= HZ * (WINDOW + 2 * INTERVAL), ("more samples than the window holds", r)
    assert w["intervals"] <= WINDOW // INTERVAL + 3, r
# The intervals reloaded from before the kill left one by one: the window's
# start went through their starts (after the last start seen before the kill,
# within a window of it), not straight from the reloaded window's start to a
# new interval's.
restored_starts = sorted({r["window"]["start_s"] for r in post
                          if last_pre_start < r["window"]["start_s"] <= last_pre_start + WINDOW})
assert len(restored_starts) >= 2, ("the reloaded intervals left all at once",
                                   last_pre_start, [r["window"]["start_s"] for r in post])
# Each step of the start is an interval; once, into the new exporter's
# first interval, also the part of the killed interval no checkpoint held
# (up to an interval) and the restart's gap: never the whole window.
starts = [last_pre_start] + restored_starts
steps = [b - a for a, b in zip(starts, starts[1:])]
assert all(s <= 3 * INTERVAL + 0.5 for s in steps), ("the start jumped", starts)
assert final["window"]["files_set_aside"] == 0, final["window"]
assert final["restarts"]["exporter"] == 1, final["restarts"]
print("before the kill: start_s %.3f, %d intervals; after it: starts %s, max covered_s %.3f, max samples %d"
      % (last_pre_start, pre[-1]["window"]["intervals"], ["%.3f" % s for s in restored_starts],
         max(r["window"]["covered_s"] for r in post), max(r["samples"] for r in post)))
PY

# ---- a split that does not match: refused, the window reloaded whole ----
# With --off-cpu: the off-CPU window has its own split, which is taken back.
out="$work/out2"
mkdir "$out"
"$BIN/lowprof" --pid "$wl" --duration 14 --frequency 99 --interval 2 --window 8 \
	--cpu-budget 100 --output "$out" --no-throttle --run-dir "$work/run2" --unwind fp \
	--off-cpu 2>"$work/stderr2" &
sup=$!
track "$sup"
wait_profiling "$work/stderr2"
sleep 7
pid=$(child_pid lowprof-exporter)
[ -n "$pid" ] || fail "no exporter child"
split=$(stat -L -c %s "/proc/$pid/fd/16") || fail "no fd 16 (the window split) in the exporter"
offsplit=$(stat -L -c %s "/proc/$pid/fd/17") || fail "no fd 17 (the off-CPU window split) in the exporter"
[ "$split" -gt 0 ] || fail "the window split is empty after 7 s"
[ "$offsplit" -gt 0 ] || fail "the off-CPU window split is empty after 7 s"
readlink "/proc/$pid/fd/16" | grep -q "memfd:lowprof-window-split" ||
	fail "fd 16 is not the window split's memfd: $(readlink "/proc/$pid/fd/16")"
[ ! -e "$out/.lowprof-window-split" ] || fail "a window split file in the output directory"
# Stop the exporter first, then spoil the split (one byte flipped) and let
# the supervisor start the next one.
kill -STOP "$pid"
python3 - "/proc/$pid/fd/16" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0x55
with open(sys.argv[1], "r+b") as f:
    f.write(bytes(b))
PY
kill -9 "$pid"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr2"))"
grep -q "restart: the window split of profile.pb.gz refused (.*): the reloaded window is kept whole" "$work/stderr2" ||
	fail "a spoilt split was not refused: $(grep restart "$work/stderr2")"
grep -q "restart: reloaded" "$work/stderr2" || fail "profile.pb.gz was not reloaded whole"
[ "$(grep -c "restart: the reloaded window's [0-9]* intervals taken back" "$work/stderr2")" -eq 1 ] ||
	fail "the off-CPU window was not taken back by interval: $(grep restart "$work/stderr2")"
python3 - "$out/summary.json" <<'PY' || fail "the restart count"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["window"]["files_set_aside"] == 0, d["window"]
assert d["restarts"]["exporter"] == 1, d["restarts"]
PY
echo PASS
