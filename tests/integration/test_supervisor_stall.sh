#!/bin/sh
# The whole agent frozen for longer than the liveness deadline (a VM paused by
# its host, a starved machine) and then resumed: nothing is restarted, since
# no component was silent while the supervisor was there to hear it. And a
# stop request while the loader is gone still ends the controller promptly.
#   usage: test_supervisor_stall.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir stall
sup=""
on_exit '[ -z "$sup" ] || /bin/kill -s KILL -- "-$sup" 2>/dev/null'

# Its own process group, so the test can stop every lowprof process at once.
setsid "$BIN/lowprof" --duration 20 --liveness-timeout 3 --output "$work/out" \
	--run-dir "$work/run" 2>"$work/stderr" &
sup=$!
sleep 4
/bin/kill -s STOP -- "-$sup"
sleep 6
/bin/kill -s CONT -- "-$sup"
sleep 3
"$BIN/lowprof" status --json --run-dir "$work/run" >"$work/status.json" || fail "lowprof status"
python3 - "$work/status.json" <<'PY' || fail "a component was restarted after the stall: $(cat "$work/stderr")"
import json, sys
d = json.load(open(sys.argv[1]))
r = {c["name"]: (c["state"], c["restarts"]) for c in d["components"]}
print("after a 6 s freeze of the whole agent:", r)
assert all(state == "running" and n == 0 for state, n in r.values()), r
PY
grep -q "did not run for" "$work/stderr" || fail "the stall was not noticed"
# Stop while the loader is away: the controller must not hang in a read.
# The stop comes once the loader is dead (a zombie or reaped): a SIGKILL
# still in flight when the stop reaches it would read as the loader dying
# "while stopping", which the exit status reports (a race of the test's
# own making, seen once in CI).
loader=$(child_pid lowprof-loader)
[ -n "$loader" ] || fail "no loader to kill"
kill -9 "$loader"
i=0
while [ -r "/proc/$loader/stat" ] && [ "$(cut -d')' -f2 "/proc/$loader/stat" 2>/dev/null | cut -d' ' -f2)" != Z ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "the loader did not die of SIGKILL within 2 s"
	sleep 0.02
done
start=$(date +%s)
kill -TERM "$sup"
wait "$sup" || fail "lowprof exited with status $? after SIGTERM ($(grep -E 'error|warn|while stopping|gone|killed|restart' "$work/stderr" | tail -8))"
sup=""
took=$(( $(date +%s) - start ))
[ "$took" -lt 8 ] || fail "stopping took $took s (a component did not stop on SIGTERM)"
grep -q "did not stop within" "$work/stderr" && fail "a component had to be killed at stop"
echo PASS
