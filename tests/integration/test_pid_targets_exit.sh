#!/bin/sh
# -p: once every target has exited, lowprof writes its files and stops with
# status 0, as `perf record -p` does, not at --duration. On the way, one
# target gone, a reload (SIGHUP) still applies its settings: the pids on the
# command line are not checked again (a pid given at start may name no
# process, or another, by then).
#   usage: test_pid_targets_exit.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir pid-targets-exit
conf=$work/lowprof.conf
printf 'cpu-budget = 1.5\n' >"$conf"

# The first spins until told to stop; the second sleeps until killed.
mkfifo "$work/stop"
python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
while True:
    try:
        if os.read(fd, 1):
            break
    except BlockingIOError:
        pass
' "$work/stop" &
first=$!
track "$first"
sleep 120 &
second=$!
track "$second"
t0=$(now)
"$BIN/lowprof" --config "$conf" --pid "$first" --pid "$second" --duration 40 --frequency 99 \
	--output "$work/out" --run-dir "$work/run" 2>"$work/err" &
sup=$!
track "$sup"
wait_profiling "$work/err"
sleep 2
echo x >"$work/stop"
wait "$first" || true
wait_line "$work/err" "process $first (-p) exited" 5 "the loader did not see the first target exit"
kill -0 "$sup" 2>/dev/null || fail "lowprof stopped with a target still running: $(cat "$work/err")"

printf 'cpu-budget = 3\n' >"$conf"
kill -HUP "$sup"
wait_line "$work/err" "reload: cpu-budget = 3 (was 1.5)" 10 "the reload was not applied after a target exited"

kill "$second"
wait "$second" 2>/dev/null || true
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/err"))"
took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(now)")
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 30 else 1)" "$took" ||
	fail "lowprof ran $took s, to its --duration, after its targets exited"
grep -q "every process given with -p has exited: stopping" "$work/err" ||
	fail "lowprof did not say why it stopped: $(cat "$work/err")"
grep -q "python3" "$work/out/profile.folded" ||
	fail "the first target's samples are not in the profile: $(head -5 "$work/out/profile.folded")"
tail -1 "$work/err" | grep -q "flame graph:" || fail "no end-of-run report: $(cat "$work/err")"
echo "PASS: stopped $took s after start, once both targets had exited; the reload in between applied"
