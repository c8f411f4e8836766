#!/bin/sh
# Processes gone are folded by comm in the window: ~100 new processes a second
# of churn_leaf for 5 s, with 1 s intervals. summary.json counts stacks
# folded (more per-pid stacks than the stacks they made), and profile.pb.gz
# has churn_leaf samples without a pid label (folded) while the samples of a
# live process (a busy loop) keep theirs; every sample is still there. The
# loop is judged by the two newest closed intervals: samples come in drains
# up to a second apart, and on a loaded host one 1 s interval could hold
# none of the loop's (judged by one, it lost its pid for 739 of 5,494 ms in
# such a run). (lowprof's own processes are no such witness: at a few ms of
# CPU a second, two intervals with none of their samples fold them.)
#   usage: test_window_fold.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir window_fold
busy_cpu 20
loop=$(pgrep -P "$busy" | head -n 1)
[ -n "$loop" ] || fail "the busy loop did not start"

"$BIN/lowprof" --no-throttle --duration 10 --frequency 199 --interval 1 --window 30 \
	--output "$work/out" --run-dir "$work/run" 2>"$work/err" &
sup=$!
track "$sup"
wait_profiling "$work/err"
"$BIN/churn_spawn" 100 5 "$BIN/churn_leaf" >"$work/spawned" &
wl=$!
track "$wl"
wait "$wl" || fail "churn_spawn failed"
[ "$(cat "$work/spawned")" -ge 300 ] || fail "fewer than 300 processes started in 5 s"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/err"))"

go tool pprof -traces "$work/out/profile.pb.gz" >"$work/traces" 2>"$work/pprof.err" ||
	fail "go tool pprof -traces: $(cat "$work/pprof.err")"
python3 - "$work/out" "$work/traces" "$loop" <<'PY' || fail "the fold"
import json, re, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
w = s["window"]
assert w["gone_stacks"] > 0 and w["gone_samples"] > 0, w
# Short processes ran the same code: their per-pid stacks merged.
assert w["gone_pid_stacks"] > w["gone_stacks"], w
assert w["gone_samples"] < s["samples"], (w, s["samples"])
# One sample block per stack: its labels, then its frames.
blocks = open(sys.argv[2]).read().split("-----------+")
UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}
folded = with_pid = live_pid = 0
loop_ms = sh_ms = 0.0
for b in blocks:
    comm = re.search(r"^\s*comm:\s+(\S+)", b, re.M)
    pid = re.search(r"^\s*pid:\s+(\d+)", b, re.M)
    value = re.search(r"^\s+([\d.]+)(us|ms|s)\s", b, re.M)
    if comm is None:
        continue
    if comm.group(1) == "churn_leaf":
        if pid is None:
            folded += 1
        else:
            with_pid += 1
    elif comm.group(1) == "sh" and value is not None:
        ms = float(value.group(1)) * UNIT[value.group(2)]
        sh_ms += ms
        if pid is not None and pid.group(1) == sys.argv[3]:
            live_pid += 1
            loop_ms += ms
assert folded > 0, "no churn_leaf stack without a pid"
assert live_pid > 0, "the busy loop, live and sampled all along, lost its pid"
# Not only in the newest intervals (which keep every pid): the loop's whole
# run keeps it, so nearly every sample of a shell is the loop's, by pid.
assert loop_ms >= 0.9 * sh_ms, f"the live loop folded: {loop_ms:.0f} of {sh_ms:.0f} ms of sh by its pid"
print("window:", {k: w[k] for k in ("gone_samples", "gone_stacks", "gone_pid_stacks")},
      "churn_leaf stacks folded:", folded, "with a pid:", with_pid, "live with a pid:", live_pid,
      f"({loop_ms:.0f} of {sh_ms:.0f} ms of sh)")
PY
echo "PASS"
