#!/bin/sh
# With --no-throttle nothing is decided, so steady intervals on a busy host
# lengthen as quiet ones do (2, 4, then 12 control intervals at the defaults:
# ipc/throttle.h's throttle_steady_span), and what wakes the loader in one is
# the work itself: a quarter-full ring (drained, and the interval goes on)
# and a new process's first sample (drained and told to the exporter while
# the process exists, as at rest: docs/THROTTLE.md, "Steady intervals").
#   A: every CPU busy, a 0.3-s run of a program 14 s in: its OTLP samples
#      must carry its executable path; an interval over 8 s.
#   B: the same load on a 16-KiB ring that fills a quarter in about a tenth
#      of a second: nothing lost, and an interval over 8 s all the same.
# Through both, a new busy process every 6 s, as a host's health checks and
# cron jobs start them: each wakes the loader and is told at once, so it
# does not cut the next interval short; and three busy processes more than
# CPUs, which the scheduler moves between CPUs and whose tgids share the
# program's memory of tgids with the host's daemons: none of that is new,
# so none of it wakes the loader (the ring's own wakes in B are not counted
# either). Before: every steady interval was 2 s long, and any wake ended
# it; then a new process in one made the next 1 s long (intervals of 1, 2,
# 4, 1, ...); then, with one more busy process than CPUs, their moves and
# the level-triggered ring (a sample landing between a drain and the next
# poll read as a wake) made 4 wakes that found nothing new in most
# intervals, and the next one short all the same.
#   usage: test_steady_fixed.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
have_reference || exit 0

work_dir steady-fixed
ncpu=$(nproc)
for i in $(seq $((ncpu + 3))); do busy_cpu 60; done
# Its own copy of a busy program: a name nothing else on the host has.
cp /usr/bin/yes "$work/newcomer"
# One new process every 6 s, busy for a few tens of ms (one new tgid each:
# sleep sleeps, so it is seldom sampled).
timeout 80 sh -c 'while :; do
	sh -c "i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done"
	sleep 6
done' &
track $!

# long_interval SUMMARY: an interval over 8 s with samples in it, no loss.
long_interval() {
	python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
tl = s["timeline"]
print("timeline (t, interval_s, samples):", [(round(e["t"], 1), e["interval_s"], e["samples"]) for e in tl])
lost = sum(e.get("lost", 0) for e in tl) + s.get("lost_samples", 0) + s.get("dropped_samples", 0)
if lost:
    sys.exit(f"FAIL: {lost} samples lost or dropped")
if not any(e["interval_s"] > 8 and e["samples"] > 0 for e in tl):
    sys.exit("FAIL: no steady interval over 8 s on a busy host with --no-throttle")
PY
}

start_sink "$work/sink" 200
"$BIN/lowprof" --no-throttle --unwind fp --frequency 49 --duration 26 --interval 60 \
	--output "$work/a" --run-dir "$work/run-a" --otlp-endpoint "http://127.0.0.1:$port" \
	2>"$work/stderr-a" &
sup=$!
track "$sup"
wait_profiling "$work/stderr-a"
# Intervals of 1 s, then 2, 4 and 12 s: 14 s on, the loader is a few seconds
# into a 12-s one (frame pointers: no table to build, whose request would
# wake it anyway).
sleep 14
# At a higher priority than the busy loops, so that in its 0.3 s it gets most
# of a CPU (a dozen samples at 49 Hz); at theirs it got a sixth of the host,
# about five samples, and in one CI run none. nice itself, at their priority
# until it execs, is sampled now and then: newcomer's samples must carry its
# path all the same (bpf/lowprof.h, image_id).
timeout 0.3 nice -n -10 "$work/newcomer" >/dev/null || true
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr-a"))"
sup=
long_interval "$work/a/summary.json" || fail "A: see above"
otlp_processes newcomer ||
	fail "no OTLP sample of newcomer ($(grep -c "^newcomer" "$work/a/profile.folded") of its stacks in the folded file)"
if grep -q " -$" "$work/procs"; then
	fail "newcomer has no process.executable.path: the exporter heard of it after it ended"
fi
grep -qv " $work/newcomer$" "$work/procs" &&
	fail "newcomer's samples carry another program's path (nice's, read before its exec?)"

"$BIN/lowprof" --no-throttle --unwind fp --frequency 99 --duration 24 --interval 60 \
	--ringbuf-kb 16 --output "$work/b" --run-dir "$work/run-b" 2>"$work/stderr-b" &
sup=$!
track "$sup"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr-b"))"
sup=
long_interval "$work/b/summary.json" || fail "B: see above"
echo PASS
