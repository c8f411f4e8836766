#!/bin/sh
# Processes gone are folded by comm in the window: ~100 new processes a second
# of churn_leaf for 5 s, with 1 s intervals. summary.json counts stacks
# folded (more per-pid stacks than the stacks they made), and profile.pb.gz
# has churn_leaf samples without a pid label (folded) while the samples of
# lowprof's own live processes keep theirs; every sample is still there.
#   usage: test_window_fold.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir window_fold

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
python3 - "$work/out" "$work/traces" <<'PY' || fail "the fold"
import json, re, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
w = s["window"]
assert w["gone_stacks"] > 0 and w["gone_samples"] > 0, w
# Short processes ran the same code: their per-pid stacks merged.
assert w["gone_pid_stacks"] > w["gone_stacks"], w
assert w["gone_samples"] < s["samples"], (w, s["samples"])
# One sample block per stack: its labels, then its frames.
blocks = open(sys.argv[2]).read().split("-----------+")
folded = with_pid = live_pid = 0
for b in blocks:
    comm = re.search(r"^\s*comm:\s+(\S+)", b, re.M)
    pid = re.search(r"^\s*pid:\s", b, re.M)
    if comm is None:
        continue
    if comm.group(1) == "churn_leaf":
        if pid is None:
            folded += 1
        else:
            with_pid += 1
    elif comm.group(1).startswith("lowprof") and pid is not None:
        live_pid += 1
assert folded > 0, "no churn_leaf stack without a pid"
assert live_pid > 0, "lowprof's own live processes lost their pids"
print("window:", {k: w[k] for k in ("gone_samples", "gone_stacks", "gone_pid_stacks")},
      "churn_leaf stacks folded:", folded, "with a pid:", with_pid, "live with a pid:", live_pid)
PY
echo "PASS"
