#!/bin/sh
# The off-CPU profile is windowed and survives an exporter restart like the
# on-CPU one:
#  1. kill -9 the exporter after a write: the off-CPU time a sleeper spent
#     before the kill (offcpu_sleep_here) is still in the final offcpu.folded
#     (reloaded from offcpu.pb.gz through the state file);
#  2. --window 4 --interval 2: off-CPU time older than the window has left
#     offcpu.folded at the end of the run.
#  3. kill -9 the loader mid-run: summary.json's off-CPU counters go on from
#     the killed loader's (the counter map is pinned), so the records the
#     program wrote are at least the records in the profile.
#   usage: test_offcpu_window.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir offcpuwin

# Microseconds under offcpu_sleep_here in a folded file.
sleep_us() {
	python3 -c '
import sys
print(sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[1])
          if l.startswith("offcpu_sleeper;") and "offcpu_sleep_here" in l))' "$1"
}

# --cpu-budget 100 and --no-throttle: the switch path stays attached and
# unguarded whatever else loads the host (test_offcpu.sh says why).
# start_and_sleep NAME OPTION...: lowprof --off-cpu into $work/NAME, a 3 s
# sleeper once it samples, then one write (2 s intervals) after it ended.
start_and_sleep() {
	name=$1
	shift
	"$BIN/lowprof" --interval 2 --off-cpu --no-throttle --cpu-budget 100 "$@" \
		--output "$work/$name" --run-dir "$work/run-$name" 2>"$work/$name.stderr" &
	sup=$!
	track "$sup"
	wait_profiling "$work/$name.stderr"
	"$BIN/offcpu_sleeper" 3
	sleep 2.5
}

# 1. Restart.
start_and_sleep restart --duration 16
cp "$work/restart/offcpu.folded" "$work/before-kill.folded"
pid=$(child_pid lowprof-exporter)
[ -n "$pid" ] || fail "no exporter child to kill"
kill -9 "$pid"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/restart.stderr"))"
grep -q "restart: reloaded" "$work/restart.stderr" || fail "the restarted exporter reloaded nothing: $(cat "$work/restart.stderr")"
before=$(sleep_us "$work/before-kill.folded")
after=$(sleep_us "$work/restart/offcpu.folded")
echo "off-CPU under offcpu_sleep_here: $before us before the kill, $after us at the end"
[ "$before" -gt 500000 ] || fail "the sleeper's off-CPU time was not written before the kill ($before us)"
[ "$after" -eq "$before" ] || fail "off-CPU time lost or changed across the restart ($before -> $after us)"
grep -q "off_cpu_ns" "$work/restart/summary.json" || fail "summary.json without off_cpu"

# 2. The window: the sleeper's time leaves once it is older than 4 s. While
# it is in the window, offcpu.folded is read every 0.2 s for 5 s and the
# most it held counts: a single read at a fixed time can fall on a window
# that holds one interval only (a roll a few ms late drops the one that
# started a window earlier), or before a paced write.
"$BIN/lowprof" --interval 2 --off-cpu --no-throttle --cpu-budget 100 --duration 14 --window 4 \
	--output "$work/window" --run-dir "$work/run-window" 2>"$work/window.stderr" &
sup=$!
track "$sup"
wait_profiling "$work/window.stderr"
"$BIN/offcpu_sleeper" 3
in_window=0
i=0
while [ "$i" -lt 25 ]; do
	now_us=$(sleep_us "$work/window/offcpu.folded" 2>/dev/null || echo 0)
	[ "$now_us" -le "$in_window" ] || in_window=$now_us
	sleep 0.2
	i=$((i + 1))
done
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/window.stderr"))"
at_end=$(sleep_us "$work/window/offcpu.folded")
echo "off-CPU under offcpu_sleep_here: at most $in_window us while in the window, $at_end us at the end"
[ "$in_window" -gt 500000 ] || fail "the sleeper's off-CPU time never written ($in_window us)"
[ "$at_end" -eq 0 ] || fail "off-CPU time older than the window still in offcpu.folded ($at_end us)"

# 3. A loader restart: the counters are the run's, not the last loader's.
start_and_sleep loader --duration 12
pid=$(child_pid lowprof-loader)
[ -n "$pid" ] || fail "no loader child to kill"
kill -9 "$pid"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/loader.stderr"))"
grep -q "adopted the pinned session" "$work/loader.stderr" ||
	fail "the loader was not restarted: $(grep -v libbpf "$work/loader.stderr" | tail -5)"
python3 - "$work/loader/summary.json" <<'PY' || fail "off-CPU counters across a loader restart"
import json, sys
o = json.load(open(sys.argv[1]))["off_cpu"]
written, kept = o["collection"]["records"], o["records"]
print(f"off-CPU records written by the program: {written}, in the profile: {kept}")
if written < kept:
    sys.exit(f"the counters restarted with the loader: {written} written < {kept} kept")
PY
echo PASS
