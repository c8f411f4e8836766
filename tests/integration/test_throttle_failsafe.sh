#!/bin/sh
# Fail-safe: when the controller falls silent, the loader applies the critical
# tier by itself within 3 control intervals, and keeps it until a controller
# says hello again.
#
# The controller is stopped with SIGSTOP rather than killed: the supervisor
# restarts a dead controller on the same socket within ~200 ms, and the new
# one's hello comes long before 3 intervals pass, so a kill -9 shows no
# fail-safe at all (only a restart, checked below). A stopped controller is
# silent; the supervisor's liveness check then kills and restarts it, and the
# new controller's hello lifts the fail-safe. --liveness-timeout 5 (not the
# default 15) so that this happens within the run; it also keeps quiet
# intervals at two control intervals (they end at a ping: 0.4 of it).
#   usage: test_throttle_failsafe.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir thr-failsafe

t0=$(now)
"$BIN/lowprof" --duration 25 --liveness-timeout 5 --output "$work/out" 2>"$work/stderr" &
sup=$!
track "$sup"
sleep 4
ctl=$(child_pid lowprof-controller)
[ -n "$ctl" ] || fail "no lowprof-controller child of the supervisor: $(ps -o pid=,comm= --ppid "$sup")"
# kill -9: the supervisor restarts it and sampling goes on.
kill -9 "$ctl"
sleep 3
ctl2=$(child_pid lowprof-controller)
[ -n "$ctl2" ] && [ "$ctl2" != "$ctl" ] || fail "the controller was not restarted after kill -9"
sleep 2
# Silence: stop the new controller.
stop_at=$(now)
kill -STOP "$ctl2"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"
grep -E "lowprof-loader|controller" "$work/stderr" || true

python3 - "$work/out" "$SRC" "$(echo "$stop_at - $t0" | bc)" <<'PY'
import sys
sys.path.insert(0, sys.argv[2] + "/tests/integration")
import throttle_lib as L

d, tl = L.load(sys.argv[1])
stop = float(sys.argv[3])
L.show(tl)
fs = [e for e in tl if e["t"] > stop and e["failsafe"]]
if not fs:
    sys.exit("FAIL: the loader never applied its fail-safe after the controller fell silent")
lat = fs[0]["t"] - stop
print(f"fail-safe {lat:.2f} s after the controller stopped: {fs[0]['tier']} {fs[0]['frequency_hz']} Hz")
# 3 intervals of silence, plus up to one for the timeline's tick and start offset;
# plus one when the interval running at the stop was a quiet one (nothing
# sampled: two intervals long, docs/THROTTLE.md), whose end is the first
# moment the loader can see that its last Stats went unread.
after_stop = [x for x in tl if x["t"] > stop]
quiet = bool(after_stop) and after_stop[0]["interval_s"] > 1.5
limit = 3 * 1.0 + 1.0 + (1.0 if quiet else 0.0)
if lat > limit:
    sys.exit(f"FAIL: fail-safe after {lat:.2f} s (limit 3 intervals{', the last quiet' if quiet else ''})")
e = fs[0]
if (e["tier"], e["frequency_hz"], e["unwind"], e["max_depth"]) != ("critical", 5, "fp", 32):
    sys.exit(f"FAIL: the fail-safe is not the critical tier: {e}")
# Before the stop, never a fail-safe (the kill -9 restart was too quick for one).
if any(x["failsafe"] for x in tl if x["t"] < stop):
    print("note: a fail-safe before the stop (the restart after kill -9 was slow)")
# The restarted controller's hello lifts it.
after = [x for x in tl if x["t"] > fs[0]["t"] and not x["failsafe"]]
if not after:
    sys.exit("FAIL: the fail-safe was never lifted by the restarted controller")
print(f"lifted at t={after[0]['t']:.2f} ({after[0]['tier']})")
print("PASS")
PY
