#!/bin/sh
# docs/SECURITY.md: a process that takes the pid of an exited -p target is
# not profiled. The attacker: wait for the target to exit, then make the
# kernel hand its pid to a busy process of one's own (as root here, through
# /proc/sys/kernel/ns_last_pid; a local user gets there by forking until the
# pid comes round) and see whether its stacks reach the profile.
#   usage: test_security_pid_reuse.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir pid-reuse

sleep 2 &
target=$!
"$BIN/lowprof" --pid "$target" --duration 12 --frequency 99 --no-throttle --output "$work/out" \
	--run-dir "$work/run" 2>"$work/err" &
sup=$!
track "$sup"
wait_profiling "$work/err"
wait "$target" || true
i=0
while ! grep -q "process $target (-p) exited" "$work/err"; do
	i=$((i + 1))
	[ "$i" -le 50 ] || fail "the loader did not see the target exit: $(cat "$work/err")"
	sleep 0.1
done
# A busy process with the target's pid (a few tries: the host forks too).
python3 - "$target" "$BIN/spin_workload" "$work/reused" <<'PY' || fail "could not give the pid to another process"
import os, sys, time
want, prog, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
for _ in range(50):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(want - 1))
    pid = os.fork()
    if pid == 0:
        if os.getpid() == want:
            os.execv(prog, [prog, "4"])
        os._exit(0)
    if pid == want:
        open(out, "w").write(str(pid))
        sys.exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.01)
sys.exit(1)
PY
reused=$(cat "$work/reused")
track "$reused"
# Sampled for 4 s at 99 Hz on a CPU of its own if the pid were still a target.
sleep 5
wait "$sup" || fail "lowprof exited $?: $(cat "$work/err")"
if grep -q "spin_workload" "$work/out/profile.folded"; then
	fail "the process that took the exited target's pid $target was profiled: $(grep -c spin_workload "$work/out/profile.folded") stacks"
fi
grep -q '"event":"map_delete".*"map":"target_pids","key":'"$target" "$work/out/audit.log" ||
	fail "the pid's removal is not in the audit log"
echo "PASS: pid $target reused by a busy process, which was not sampled"
