#!/bin/sh
# A resting loader is woken by load, not by its timer. With nothing sampled
# the quiet intervals grow (2, 4, then 6 control intervals at
# --liveness-timeout 15, docs/THROTTLE.md "Quiet intervals"); while the loader
# rests, a few samples waiting in the BPF ring wake it (bpf/lowprof.bpf.c,
# loader_resting), so the profiled process's first busy second is seen at
# once: the quiet interval it fell in ends within a second of the load's
# start, where the loader's timer alone would have ended it up to 6 s later.
# The rest of the load then runs in one-second intervals, its samples all
# there. The profile is restricted (--pid) to a process that waits 16 s
# and then spins for 4: nothing else on the host makes samples that could
# end the rest instead.
#   usage: test_rest_wake.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir rest-wake
on_exit '[ -z "$sup" ] || kill -9 "$sup" 2>/dev/null'

# Waits for a word on a fifo, then spins in the same process (exec keeps the
# pid; no child).
mkfifo "$work/go"
sh -c 'read x < "$1"; exec python3 -c "
import time
end = time.monotonic() + 4
while time.monotonic() < end:
    pass
"' sh "$work/go" &
target=$!
track "$target"
"$BIN/lowprof" --duration 40 --frequency 99 --no-throttle --liveness-timeout 15 --pid "$target" --output "$work/out" \
	--run-dir "$work/run" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
# Quiet intervals of 1, 2, 4, 6, 6 s: 16 s on, the loader is in the middle of
# a six-second rest.
sleep 16
echo go > "$work/go"
wait "$target" 2>/dev/null || true
# Its only target gone, lowprof stops on its own.
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"
sup=

python3 - "$work/out" "$SRC" <<'PY'
import sys
sys.path.insert(0, sys.argv[2] + "/tests/integration")
import throttle_lib as L

d, tl = L.load(sys.argv[1])
L.show(tl)
for e in tl:
    print(f"  t={e['t']:6.2f} interval {e['interval_s']:.2f} s samples {e['samples']}")
busy = [i for i, e in enumerate(tl) if e["samples"] > 0]
if not busy:
    sys.exit("FAIL: the spinning process was never sampled")
i = busy[0]
woken, before = tl[i], tl[:i]
# It rested before the load: quiet intervals longer than two.
longest = max((e["interval_s"] for e in before), default=0)
print(f"longest interval before the load: {longest:.2f} s")
if longest < 3.5:
    sys.exit(f"FAIL: no quiet interval longer than 2 before the load (longest {longest:.2f} s)")
# The interval the load fell in ended early: its first second's samples woke
# the loader. Its samples, at 99 Hz on one CPU, say how long the load had
# run when it ended: well under a second's worth (99), not several.
print(f"the interval the load fell in: {woken['interval_s']:.2f} s, {woken['samples']} samples")
if woken["samples"] > 50:
    sys.exit(f"FAIL: the loader saw the load only after {woken['samples']} samples "
             f"(at 99 Hz: {woken['samples'] / 99:.1f} s): not woken, its timer ended the rest")
# Cut short: its timer would have ended it a whole rest after it began.
if woken["interval_s"] > longest - 0.1:
    sys.exit(f"FAIL: the interval the load fell in lasted its whole {woken['interval_s']:.2f} s: "
             "ended by the timer, not by the samples")
# Then no more rests while the load lasts: intervals of one second, or two
# when steady (a busy host whose throttle the policy would keep: ipc/throttle.h).
after = tl[i + 1:i + 3]
if not after or any(e["interval_s"] > 2.5 for e in after):
    sys.exit(f"FAIL: the intervals after the wake are longer than a steady one: {after}")
print("PASS")
PY
