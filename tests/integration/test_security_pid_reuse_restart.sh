#!/bin/sh
# docs/SECURITY.md: a process that takes the pid of an exited -p target is
# not profiled, not even when the target exits while no loader holds it. The
# attacker's moment: the loader is down (killed; its pinned program samples
# on, by the map it left) and the supervisor not yet back to restart it (held
# here by SIGSTOP, a slow host's seconds). The target exits, a busy process
# of the attacker's takes its pid (take_pid), and the loader restarts with
# the target's pid on its command line. Neither the pinned program nor the
# new loader may sample the newcomer; the new loader takes the pid out of
# the map (audited).
#   usage: test_security_pid_reuse_restart.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir pid-reuse-restart

sleep 60 &
target=$!
track "$target"
# A second target that outlives the run: lowprof stops once all have exited.
sleep 60 &
keeper=$!
track "$keeper"
"$BIN/lowprof" --pid "$target" --pid "$keeper" --duration 14 --frequency 99 --no-throttle --output "$work/out" \
	--run-dir "$work/run" 2>"$work/err" &
sup=$!
track "$sup"
wait_profiling "$work/err"
[ -n "$(pin_dir_of "$sup")" ] || fail "no pin directory: the loader's program would not outlive it"
loader=$(child_pid lowprof-loader)
[ -n "$loader" ] || fail "no loader"
kill -STOP "$sup"
on_exit 'kill -CONT "$sup" 2>/dev/null'
kill -9 "$loader"
kill "$target"
wait "$target" 2>/dev/null || true
take_pid "$target" "$BIN/spin_workload" 30 # outlives the run
# The loader's pinned program runs on meanwhile, with the pid in its map.
sleep 2
kill -CONT "$sup"
wait_line "$work/err" "process $target (-p) exited" 10 "the restarted loader did not see that the target is gone"
wait "$sup" || fail "lowprof exited $?: $(cat "$work/err")"
if grep -q "spin_workload" "$work/out/profile.folded"; then
	fail "the process that took the exited target's pid $target was profiled: $(grep -c spin_workload "$work/out/profile.folded") stacks"
fi
grep -q '"event":"map_delete".*"map":"target_pids","key":'"$target" "$work/out/audit.log" ||
	fail "the pid's removal is not in the audit log"
echo "PASS: pid $target reused while the loader was down, and not sampled"
