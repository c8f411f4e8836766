#!/bin/sh
# At rest, each lowprof process wakes only for its work: the supervisor for its
# pass every half --liveness-timeout, at most 10 s (10 s at the default 30 s: the
# components' pings and state lines are read then, they do not each wake it),
# the loader once per control interval, and less after quiet ones (at most a
# sample a second at the healthy tier: docs/THROTTLE.md): 2, then 4, then 12
# intervals (the ping interval, 0.4 of the timeout), its drain, timeline
# entry, statistics, ping and the controller's Stats together; the controller
# once per such interval (for that push), the exporter with the loader's
# notice of each interval and for its paced writes. Counted as voluntary
# context switches (a thread going to sleep: about its wake-ups, unlike
# schedstat's run count, which a loaded host adds preemptions to) of every
# thread, over 10 s after the start-up. The profile is restricted to a
# sleeping process (--pid), so that other work on the host, which the loader
# and exporter would have to handle, is left out: this is the fixed cost.
# With nothing sampled, the first interval closes (the files appear at 5 s,
# the --interval here); the next goes on at each of its ends, 6 intervals
# (max_every) in all, and closes at 35 s: the profile files are then held as
# they are (nothing they hold changed), only summary.json rewritten.
# summary.json, taken before the stop (which writes everything), says so.
# --no-throttle holds the healthy tier whatever other work loads the host (a
# host busy enough to leave it has no quiet intervals: one a second then, as
# the throttle tests see), which is what an idle host gets at the defaults.
# The loader's and the controller's bounds follow the run's own timeline,
# with a margin; with every interval of the window healthy, the quiet ones
# must have made them at most 0.4 a second (about 0.2 by design). Before the
# quiet intervals: supervisor 2, loader 1-2, controller 1, exporter 3-5 a
# second; with quiet intervals of two: 0.4, 0.5, 0.5 and 1.4.
#   usage: test_idle_wakeups.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir idle-wakeups
on_exit '[ -z "$sup" ] || kill -9 "$sup" 2>/dev/null'

sleep 600 &
sleeper=$!
track "$sleeper"
t_start=$(now)
"$BIN/lowprof" --duration 60 --interval 5 --pid "$sleeper" --no-throttle --output "$work/out" --run-dir "$work/run" \
	2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 6

# voluntary context switches of every thread of $1
sleeps() {
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}

names="lowprof lowprof-loader lowprof-controller lowprof-exporter"
pids=""
for n in $names; do
	if [ "$n" = lowprof ]; then
		p=$sup
	else
		p=$(child_pid "$n")
	fi
	[ -n "$p" ] || fail "no $n"
	pids="$pids $p"
done
before=""
for p in $pids; do
	before="$before $(sleeps "$p")"
done
t0=$(now)
sleep 10
after=""
for p in $pids; do
	after="$after $(sleeps "$p")"
done
t1=$(now)
# Until the roll at 35 s (summary.json's second write), at most 45 s in.
i=0
until python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["outputs"]["files"]["summary.json"]["writes"] < 2)' \
	"$work/out/summary.json" 2>/dev/null; do
	i=$((i + 1))
	[ "$(echo "$(now) - $t_start < 45" | bc)" -eq 1 ] || fail "no second roll at rest: $(cat "$work/out/summary.json")"
	sleep 0.2
done
cp "$work/out/summary.json" "$work/summary-at-rest.json" || fail "no summary.json at rest"
kill -INT "$sup"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"
sup=

python3 - "$t0" "$t1" "$names" "$before" "$after" "$t_start" "$work/out" "$SRC" <<'PY'
import sys
sys.path.insert(0, sys.argv[8] + "/tests/integration")
import throttle_lib as L

t0, t1 = float(sys.argv[1]), float(sys.argv[2])
names = sys.argv[3].split()
before = [int(x) for x in sys.argv[4].split()]
after = [int(x) for x in sys.argv[5].split()]
start = float(sys.argv[6])
d, tl = L.load(sys.argv[7])
# The window on the timeline's clock (the exporter's start, a moment after ours).
w0, w1 = t0 - start, t1 - start
inside = [e for e in tl if w0 <= e["t"] <= w1]
L.show(inside)
ticks = len(inside) / (t1 - t0)
calm = bool(inside) and all(e["tier"] == "healthy" and e["sample_divisor"] <= 1 and
                            not e["paused"] and not e["failsafe"] for e in inside)
quiet = sum(1 for e in inside if e["interval_s"] > 1.5)
print(f"timeline: {len(inside)} entries in the window ({ticks:.2f}/s), {quiet} quiet, "
      f"{'all' if calm else 'not all'} healthy")
# wake-ups per second allowed; the design's own figures at rest are 0.13, 0.17-0.25 (twice)
# and under 1.
# The exporter's pass rides on each tick; its writes add I/O sleeps (two data
# fsyncs and a directory fsync, renames) every --interval.
bound = {"lowprof": 0.5, "lowprof-loader": ticks + 0.4, "lowprof-controller": ticks + 0.4,
         "lowprof-exporter": ticks + 3.0}
bad = []
for n, b, a in zip(names, before, after):
    rate = (a - b) / (t1 - t0)
    print(f"{n}: {rate:.2f} wake-ups/s (at most {bound[n]:.2f})")
    if rate > bound[n]:
        bad.append(n)
if bad:
    sys.exit(f"FAIL: woke too often at rest: {', '.join(bad)}")
if calm and ticks > 0.4:
    sys.exit(f"FAIL: {ticks:.2f} control intervals a second with nothing sampled at the "
             "healthy tier: no quiet intervals")
PY
[ $? -eq 0 ] || exit 1

# Rolls at 5 and 35 s before the copy, the interval gone on at 10 to 30 s:
# the first roll wrote the files, the second held them (a merge and three
# files), summary.json written at both.
python3 - "$work/summary-at-rest.json" <<'PY' || fail "the profile files were rewritten at rest"
import json, sys
o = json.load(open(sys.argv[1]))["outputs"]
writes = {n: o["files"][n]["writes"] for n in ("profile.pb.gz", "profile.folded", "flamegraph.svg")}
print(f"at rest: profile files written {writes}, summary.json {o['files']['summary.json']['writes']} "
      f"times, {o['extended']} interval ends gone on, {o['unchanged']} due jobs held unchanged")
assert all(w == 1 for w in writes.values()), writes
assert o["files"]["summary.json"]["writes"] == 2, o["files"]["summary.json"]
assert o["extended"] == 5, o["extended"]
assert o["unchanged"] >= 4, o["unchanged"]
print("PASS")
PY
