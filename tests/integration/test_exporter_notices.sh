#!/bin/sh
# The exporter wakes for data when it has a reason to read now
# (loader/drain.h): at once for a process not sampled lately (it asks the
# loader about a process while it exists), otherwise at most 5 s apart
# (DRAIN_NOTICE_MAX_NS) on a busy host whose processes it knows. Counted as
# the exporter's voluntary context switches (its sleeps: each is a wake
# after it) over 15 s, from /proc/PID/task/*/status.
# 1. One long-lived busy process, --pid, 99 Hz, an interval longer than the
#    run: no file is written meanwhile, so the exporter's wakes are the
#    loader's notices, its checkpoints' loop turns and its ping timeout.
#    Before: a notice every second with the loader's drain (15 and more).
# 2. A new busy process every second, the whole host sampled: each is told
#    at once: the exporter wakes about once a second, and they are in the
#    profile.
#   usage: test_exporter_notices.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir notices

# The voluntary context switches of every thread of process $1.
sleeps() {
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
# exporter_sleeps SECONDS: the exporter's sleeps over SECONDS.
exporter_sleeps() {
	ex=$(child_pid lowprof-exporter)
	[ -n "$ex" ] || fail "no exporter"
	a=$(sleeps "$ex")
	sleep "$1"
	b=$(sleeps "$ex")
	echo $((b - a))
}

# run_counting NAME SECONDS [LOWPROF OPTIONS]: lowprof for SECONDS at 99 Hz,
# an interval longer than the run, output in $work/NAME; the exporter's
# sleeps over 15 s after the start-up into $work/NAME.sleeps.
run_counting() {
	name=$1 seconds=$2
	shift 2
	"$BIN/lowprof" "$@" --duration "$seconds" --frequency 99 --interval 3600 --no-throttle \
		--cpu-budget 100 --unwind fp --output "$work/$name" --run-dir "$work/run-$name" \
		2>"$work/$name.stderr" &
	sup=$!
	track "$sup"
	wait_profiling "$work/$name.stderr"
	sleep 4
	exporter_sleeps 15 >"$work/$name.sleeps"
	wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/$name.stderr"))"
}

"$BIN/two_chains" 40 &
wl=$!
track "$wl"
run_counting known 26 --pid "$wl"
known=$(cat "$work/known.sleeps")
echo "one known busy process: the exporter slept $known times in 15 s"
# 3 notices, their checkpoints' turns, a ping timeout (12 s apart), a margin.
[ "$known" -le 8 ] || fail "the exporter woke $known times in 15 s for a process it knows"
samples=$(json_value "$work/known/summary.json" samples)
# Nothing waits at risk: every sample reaches the files (the loader's last
# drain tells the exporter at the stop). One busy CPU, 99 Hz, ~22 s.
[ "$samples" -ge $((99 * 22 * 4 / 10)) ] || fail "only $samples samples in the files"
kill "$wl"
wait "$wl" 2>/dev/null || true

# A new process every second (each busy for it), the whole host sampled.
cp "$BIN/two_chains" "$work/newcomer"
sh -c 'while :; do "$1" 1; done' newcomer-loop "$work/newcomer" &
loop=$!
track "$loop"
on_exit 'pkill -f "$work/newcomer" 2>/dev/null'
run_counting fresh 24
fresh=$(cat "$work/fresh.sleeps")
echo "a new process every second: the exporter slept $fresh times in 15 s"
# Told of each at the loader's next drain: about 15; a loaded host's
# scheduler may leave one unsampled now and then.
[ "$fresh" -ge 10 ] || fail "the exporter woke only $fresh times in 15 s for 15 new processes"
kill "$loop"
n=$(grep -c '^newcomer;' "$work/fresh/profile.folded" || true)
[ "$n" -ge 1 ] || fail "no newcomer stack in profile.folded"
echo PASS
