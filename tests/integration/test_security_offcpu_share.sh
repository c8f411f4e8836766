#!/bin/sh
# The per-owner share of the guard on the switch path (docs/SECURITY.md,
# "In BPF: what one process can cost the others"): a switch storm (two
# threads bouncing a byte on CPU 0, a stack taken at every switch-out under
# --no-throttle, probability 100%) spends its owner's half of CPU 0's
# guard window and is then refused there (guard_proc_capped), while a victim
# on the same CPU, spinning 10 ms and sleeping 10 ms, keeps its off-CPU time:
# the storm cannot spend the whole window on its own stacks. The budget
# (20%: 20 ms a window per CPU) leaves room for the storm's floor (what the
# program costs at every switch before any stack, charged to the CPU, not to
# a process: docs/SECURITY.md, "What does not hold yet").
#   usage: test_security_offcpu_share.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir offcpushare

"$BIN/lowprof" --duration 20 --off-cpu --off-cpu-min-us 1 --cpu-budget 20 --no-throttle \
	--output "$work/out" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_offcpu_link
# Root's processes share by cgroup: the storm gets one of its own, apart
# from the victim's (the test's: on a systemd host, the login session).
new_cgroup
in_cgroup "$cgroup" taskset -c 0 "$BIN/switch_storm" 8 >/dev/null &
storm=$!
track "$storm"
sleep 0.5
taskset -c 0 "$BIN/offcpu_sleeper" 6
wait "$storm" || fail "switch_storm failed"
kill -TERM "$sup"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"

python3 - "$work/out" <<'PY' || fail "the storm's share"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
c = s["off_cpu"]["collection"]
capped = s["collection"].get("guard_proc_capped", 0)
off_us = sum(int(l.rsplit(" ", 1)[1]) for l in open(d + "/offcpu.folded")
             if l.startswith("offcpu_sleeper;") and "offcpu_sleep_here" in l)
storm_us = sum(int(l.rsplit(" ", 1)[1]) for l in open(d + "/offcpu.folded")
               if l.startswith("switch_storm;"))
print(f"switches {c['switches']}, stacks {c['stashed']}, CPU guard refusals {c['guard_skipped']}, "
      f"per-process refusals {capped}; the victim's off-CPU time {off_us / 1e6:.2f} s "
      f"(about 3 s expected), the storm's {storm_us / 1e6:.2f} s")
if c["stashed"] == 0 or storm_us == 0:
    sys.exit("FAIL: the storm's switch-outs were never taken: nothing was tested")
if capped == 0:
    sys.exit("FAIL: the storm was never held to its share")
if off_us < 0.8 * 3e6:
    sys.exit(f"FAIL: the victim kept {off_us / 1e6:.2f} s of about 3 s off CPU: the storm took its share")
PY
echo PASS
