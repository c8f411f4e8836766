#!/bin/sh
# docs/SECURITY.md: a process that takes the pid of an exited -p target is
# not profiled. The attacker: wait for the target to exit, then make the
# kernel hand its pid to a busy process of one's own (take_pid) and see
# whether its stacks reach the profile.
#   usage: test_security_pid_reuse.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir pid-reuse

sleep 2 &
target=$!
# A second target that outlives the run: lowprof stops once all have exited.
sleep 60 &
keeper=$!
track "$keeper"
"$BIN/lowprof" --pid "$target" --pid "$keeper" --duration 12 --frequency 99 --no-throttle --output "$work/out" \
	--run-dir "$work/run" 2>"$work/err" &
sup=$!
track "$sup"
wait_profiling "$work/err"
wait "$target" || true
wait_line "$work/err" "process $target (-p) exited" 5 "the loader did not see the target exit"
# A busy process with the target's pid.
take_pid "$target" "$BIN/spin_workload" 4
# Sampled for 4 s at 99 Hz on a CPU of its own if the pid were still a target.
sleep 5
wait "$sup" || fail "lowprof exited $?: $(cat "$work/err")"
if grep -q "spin_workload" "$work/out/profile.folded"; then
	fail "the process that took the exited target's pid $target was profiled: $(grep -c spin_workload "$work/out/profile.folded") stacks"
fi
grep -q '"event":"map_delete".*"map":"target_pids","key":'"$target" "$work/out/audit.log" ||
	fail "the pid's removal is not in the audit log"
echo "PASS: pid $target reused by a busy process, which was not sampled"
