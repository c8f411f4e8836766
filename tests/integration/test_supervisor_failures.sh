#!/bin/sh
# A component that fails at once on every start reaches `failed` after the
# crash-loop limit while the rest keep profiling; a SIGKILLed supervisor's
# pins are removed by the next lowprof.
#   usage: test_supervisor_failures.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir failures
sup=""
on_exit '[ -z "$sup" ] || kill -9 "$sup" 2>/dev/null'
busy_cpu 40

# A private lowprof whose controller always fails.
private_bin lowprof-controller
printf '#!/bin/sh\necho "broken controller" >&2\nexit 1\n' >"$work/bin/lowprof-controller"
chmod +x "$work/bin/lowprof-controller"

"$work/bin/lowprof" --duration 12 --frequency 49 --restart-backoff 50 --restart-backoff-max 200 \
	--output "$work/out" --run-dir "$work/run" 2>"$work/stderr" &
sup=$!
sleep 8
"$work/bin/lowprof" status --json --run-dir "$work/run" >"$work/status.json" || fail "lowprof status"
python3 - "$work/status.json" <<'PY' || fail "status: $(cat "$work/status.json")"
import json, sys
d = json.load(open(sys.argv[1]))
s = {c["name"]: c for c in d["components"]}
assert s["controller"]["state"] == "failed", s["controller"]
assert s["controller"]["restarts"] == 10, s["controller"]
for name in ("loader", "exporter", "unwinder"):
    assert s[name]["state"] == "running" and s[name]["restarts"] == 0, s[name]
print("controller failed after", s["controller"]["restarts"], "restarts; the rest running")
PY
grep -q "controller exited with status 1: crash loop" "$work/stderr" || fail "no crash-loop report: $(cat "$work/stderr")"
wait "$sup" || true
sup=""
[ -s "$work/out/profile.folded" ] || fail "the loader and exporter did not keep profiling"
echo "ok: a crash-looping controller is failed, the profile was still written"

# Kill the loader (its pins stay for adoption), then the supervisor before it
# restarts the loader: the pins are orphaned. The next lowprof removes them.
"$BIN/lowprof" --duration 30 --restart-backoff 5000 --output "$work/out2" --run-dir "$work/run2" \
	2>"$work/stderr2" &
sup=$!
sleep 3
stale=$(pin_dir_of "$sup")
[ -d "$stale" ] || fail "no pins for run $sup"
progs=$(pinned_progs "$stale")
children=$(ps -o pid= --ppid "$sup" | tr -s ' \n' ' ')
pkill -9 -P "$sup" -f lowprof-loader
sleep 0.3
kill -9 "$sup"
sup=""
sleep 1
[ -d "$stale" ] || fail "expected orphaned pins in $stale after SIGKILLs"
# The components stop with their supervisor (PR_SET_PDEATHSIG, set after the
# switch to --user, which would clear it): none runs on unsupervised.
i=0
for c in $children; do
	while kill -0 "$c" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le 100 ] || fail "component $c ($(cat /proc/$c/comm 2>/dev/null)) outlived its supervisor"
		sleep 0.1
	done
done
echo "ok: every component stopped with its SIGKILLed supervisor"
"$BIN/lowprof" --duration 2 --output "$work/out3" --run-dir "$work/run3" 2>"$work/stderr3" ||
	fail "the next lowprof failed: $(cat "$work/stderr3")"
[ ! -e "$stale" ] || fail "the next lowprof left the stale pins of a killed run: $(ls "$stale")"
grep -q "removed the pins of [0-9]* lowprof run" "$work/stderr3" || fail "no report of the stale pins removed"
sleep 0.5 # the kernel frees programs asynchronously
for p in $progs; do
	bpftool prog show id "$p" >/dev/null 2>&1 && fail "the killed run's program $p is still loaded"
done
echo PASS
