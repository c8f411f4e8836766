#!/bin/sh
# Supervision under load: kill -9 the loader, the controller, the unwinder and
# the exporter repeatedly during one run. Each comes back alone (the others
# keep their pids, the supervisor never dies), a killed loader's pinned
# session keeps sampling and is adopted (no gap, no double attachment), a
# SIGSTOPped component is replaced after the liveness deadline, and a clean
# stop leaves nothing of lowprof in bpftool's lists or in bpffs.
#   usage: test_supervisor_restarts.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir restarts
sup=""
on_exit '[ -z "$sup" ] || kill -9 "$sup" 2>/dev/null'

wait_child() { # wait until a child named $1 with a pid other than $2 runs; print it
	i=0
	while [ $i -lt 100 ]; do
		p=$(child_pid "$1")
		if [ -n "$p" ] && [ "$p" != "$2" ]; then
			echo "$p"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

busy_cpu 60
# A short backoff cap so ten deaths fit in the run; --no-throttle keeps the
# rate steady so gaps in sampling would show.
"$BIN/lowprof" --duration 45 --frequency 49 --interval 2 --no-throttle --unwind fp \
	--restart-backoff 100 --restart-backoff-max 800 --liveness-timeout 3 \
	--output "$work/out" --run-dir "$work/run" 2>"$work/stderr" &
sup=$!
sleep 3
pin_dir=$(pin_dir_of "$sup")
[ -d "$pin_dir" ] || fail "no pin directory $pin_dir"
ls "$pin_dir" | grep -q "^link_cpu" || fail "no pinned links in $pin_dir"

# Samples in every second: read the pinned per-CPU counters from outside four
# times a second while components (the loader too) are being killed. They live
# in the kernel, so they show whether sampling ever stopped.
(
	while [ -d "$pin_dir" ]; do
		t=$(date +%s.%N)
		n=$(bpftool map dump pinned "$pin_dir/cpu_stats" -j 2>/dev/null | python3 -c '
import json, sys
# struct lowprof_cpu_stats: u64 events, then u64 submitted (bpf/lowprof.h)
vals = json.load(sys.stdin)[0]["values"]
print(sum(int.from_bytes(bytes(int(b, 16) for b in v["value"][8:16]), "little") for v in vals))' 2>/dev/null) || n=""
		[ -n "$n" ] && echo "$t $n"
		sleep 0.25
	done
) >"$work/counts" &
sampler=$!
track "$sampler"

for comp in lowprof-loader lowprof-control lowprof-unwinde lowprof-export; do
	n=0
	while [ $n -lt 4 ]; do
		victim=$(child_pid "$comp")
		[ -n "$victim" ] || fail "$comp is not running"
		others_before=$(ps -o pid=,comm= --ppid "$sup" | grep -v "$comp" | sort)
		kill -9 "$victim"
		new=$(wait_child "$comp" "$victim") || fail "$comp did not come back after kill -9"
		others_after=$(ps -o pid=,comm= --ppid "$sup" | grep -v "$comp" | sort)
		[ "$others_before" = "$others_after" ] || fail "killing $comp changed the others: $others_before / $others_after"
		kill -0 "$sup" || fail "the supervisor died"
		n=$((n + 1))
		sleep 0.7
	done
	echo "ok: $comp killed 4 times, back each time, the others untouched"
done
kill $sampler 2>/dev/null || true
python3 - "$work/counts" <<'PY' || fail "sampling stopped for a whole second while components were killed"
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 2]
# Each reading starts bpftool and python: 0.3 s apart on a quiet VM, about
# 0.75 s while 16 loader, exporter and unwinder restarts load it (18 in all
# once in CI). A dozen is enough for the one-second windows below, each of
# which is judged only when it holds two readings.
if len(rows) < 12:
    sys.exit(f"only {len(rows)} counter readings")
t0, t_end = rows[0][0], rows[-1][0]
gaps = []
t = t0
while t + 1.0 <= t_end:
    inside = [n for (ts, n) in rows if t <= ts <= t + 1.0]
    if len(inside) >= 2 and inside[-1] <= inside[0]:
        gaps.append(round(t - t0, 1))
    t += 0.5
print(f"{len(rows)} readings over {t_end - t0:.1f} s; samples submitted {int(rows[-1][1] - rows[0][1])}; "
      f"1-second windows without a new sample: {gaps}")
sys.exit(1 if gaps else 0)
PY

# Exactly one pinned link per CPU, all to the one program the current loader
# loaded: no double attachment. (Other lowprof runs on this host are not ours:
# only this run's pins are looked at.)
ncpu=$(nproc)
[ "$(ls "$pin_dir" | grep -c '^link_cpu')" -eq "$ncpu" ] || fail "pinned links: $(ls "$pin_dir")"
progs=$(pinned_progs "$pin_dir")
[ "$(echo "$progs" | wc -w)" -eq 1 ] || fail "the pinned links point at programs $progs (want one)"
grep -q "adopted the pinned session" "$work/stderr" || fail "the restarted loader did not adopt the pinned session"

# Liveness: a stopped exporter is replaced after the deadline.
victim=$(child_pid lowprof-export)
kill -STOP "$victim"
new=$(wait_child lowprof-export "$victim") || fail "a SIGSTOPped exporter was not replaced"
echo "ok: SIGSTOPped exporter $victim replaced by $new"

"$BIN/lowprof" status --json --run-dir "$work/run" >"$work/status.json" || fail "lowprof status"
python3 - "$work/status.json" <<'PY' || fail "status does not count the restarts"
import json, sys
d = json.load(open(sys.argv[1]))
r = {c["name"]: c["restarts"] for c in d["components"]}
print("restarts:", r)
assert r["loader"] >= 4 and r["controller"] >= 4 and r["unwinder"] >= 4 and r["exporter"] >= 5, r
assert all(c["state"] in ("running", "starting", "backoff") for c in d["components"]), d
PY

wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"
sup=""
[ ! -e "$pin_dir" ] || fail "pins left after a clean stop: $(ls "$pin_dir")"
sleep 0.5 # the kernel frees programs asynchronously
bpftool prog show id "$progs" >/dev/null 2>&1 && fail "program $progs still loaded after a clean stop"
[ -s "$work/out/profile.folded" ] || fail "no profile written"
echo PASS
