#!/bin/sh
# The checkpoint of the interval being collected is spaced by its measured
# cost (exporter/exporter_checkpoint.h): with an interval that never closes
# during the run and a budget so small that a quarter of the writes'
# allowance is 62 us a second on 2 CPUs, checkpoints every 2 s (the old
# rule: ~24 in the run, each a few hundred us) would take several times
# that. Checked: their CPU over the run stays within a quarter of the
# allowance (plus the first one, written at once), the file is still
# rewritten while samples come, and no two writes are closer than 2 s.
# Then at rest (a trickle, --interval 10): checkpoints at least an --interval
# apart, not one per loader notice (6 s apart at rest with --liveness-timeout
# 15: the rule, not the notices, keeps them apart), and none fsynced
# (strace on the exporter: the profile files' fsyncs are seen, none of the
# checkpoint's memfd, the window split's or the folded stacks' and flame
# graph's, views of profile.pb.gz). The checkpoint lives in a memfd the
# supervisor holds: its writes are seen as its mtime through the
# exporter's /proc/PID/fd/15 (LOWPROF_FD_CHECKPOINT), and nothing of it is
# ever in the output directory.
#   usage: test_checkpoint_spacing.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir ckpt

# watch_writes FILE OUT SECONDS: when FILE was rewritten, seen every 0.1 s
# for SECONDS (its mtimes, ns, one a line, into OUT); not while it is empty
# (the memfd as the supervisor made it, before the first checkpoint).
# The checkpoint memfd of the exporter of the supervisor $sup.
checkpoint_fd() {
	exporter=$(child_pid lowprof-exporter)
	[ -n "$exporter" ] || fail "no exporter"
	echo "/proc/$exporter/fd/15"
}
watch_writes() {
	python3 - "$1" "$2" "$3" <<'PY' || fail "the watcher failed"
import os, sys, time
path, out = sys.argv[1], sys.argv[2]
seen, end = [], time.monotonic() + float(sys.argv[3])
while time.monotonic() < end:
    try:
        st = os.stat(path)
        m = st.st_mtime_ns
        if st.st_size > 0 and (not seen or m != seen[-1]):
            seen.append(m)
    except FileNotFoundError:
        pass
    time.sleep(0.1)
open(out, "w").write("\n".join(str(m) for m in seen) + "\n")
PY
}

"$BIN/two_chains" 56 &
wl=$!
track "$wl"
# 0.05% of the host: a quarter of it for the writes, a quarter of that for
# the checkpoints. --no-throttle: sampling stays at 99 Hz. --interval 60:
# nothing closes before the stop, only checkpoints are written meanwhile.
"$BIN/lowprof" --pid "$wl" --duration 48 --frequency 99 --interval 60 --cpu-budget 0.05 \
	--no-throttle --output "$work/out" --run-dir "$work/run" --unwind fp 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"

# 45 s: the first checkpoint's cost (up to 1.3 ms on a slow VM, its memfd's
# first pages) can put the next one 20-30 s on.
watch_writes "$(checkpoint_fd)" "$work/writes" 45
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"
ls -A "$work/out" | grep -q interval && fail "a checkpoint file in the output directory: $(ls -A "$work/out")"

python3 - "$work/out/summary.json" "$work/writes" <<'PY' || fail "checkpoint spacing"
import json, sys
s = json.load(open(sys.argv[1]))
writes = [int(l) for l in open(sys.argv[2]) if l.strip()]
ck, o = s["checkpoint"], s["outputs"]
print("checkpoint:", json.dumps(ck), "allowance_ms", o["allowance_ms"], "run", s["duration_s"], "s")
gaps = [(b - a) / 1e9 for a, b in zip(writes, writes[1:])]
print("writes seen: %d, gaps %s" % (len(writes), ["%.1f" % g for g in gaps]))
assert ck["failures"] == 0, ck
assert ck["writes"] >= 2, ck
assert len(writes) >= 2, "the checkpoint was not rewritten while samples came"
# No two closer than the shortest gap (mtime against a 0.1-s poll).
assert min(gaps) >= 2.0 - 0.15, gaps
# Their CPU: a quarter of the writes' allowance per second of the run, and
# the first one, written as soon as samples came (no cost known then).
share = o["allowance_ms"] / 4 * s["duration_s"]
assert ck["cpu_ms"] <= share + ck["max_cost_ms"], (ck["cpu_ms"], share, ck["max_cost_ms"])
# The gap now follows the last one's cost: at most a minute.
expect = min(max(2.0, ck["cost_ms"] * 4 / o["allowance_ms"]), 60.0)
assert abs(ck["every_s"] - expect) <= 0.1, (ck["every_s"], expect)
print("checkpoint spacing ok: %.2f ms of CPU in %d writes, within %.2f ms" %
      (ck["cpu_ms"], ck["writes"], share + ck["max_cost_ms"]))
PY

# At rest: a process that runs 120 ms every 3 s, sampled at 19 Hz: under a
# sample a second, a trickle.
python3 -c '
import time
while True:
    t = time.monotonic()
    while time.monotonic() - t < 0.12:
        pass
    time.sleep(3)' &
trickle=$!
track "$trickle"
"$BIN/lowprof" --pid "$trickle" --duration 50 --frequency 19 --interval 10 --no-throttle --liveness-timeout 15 \
	--output "$work/rest" --run-dir "$work/run-rest" 2>"$work/stderr-rest" &
sup=$!
track "$sup"
wait_profiling "$work/stderr-rest"
exporter=$(child_pid lowprof-exporter)
[ -n "$exporter" ] || fail "no exporter"
strace -f -y -e trace=fsync,fdatasync,sync_file_range -o "$work/fsyncs" -p "$exporter" 2>/dev/null &
tracer=$!
track "$tracer"
watch_writes "/proc/$exporter/fd/15" "$work/writes-rest" 42
kill -INT "$tracer" 2>/dev/null
wait "$tracer" 2>/dev/null || true # strace ends on SIGINT with its status
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr-rest"))"

python3 - "$work/rest/summary.json" "$work/writes-rest" "$work/fsyncs" <<'PY' || fail "checkpoints at rest"
import json, sys
s = json.load(open(sys.argv[1]))
writes = [int(l) for l in open(sys.argv[2]) if l.strip()]
fsyncs = [l.strip() for l in open(sys.argv[3]) if "fsync" in l or "sync_file_range" in l]
gaps = [(b - a) / 1e9 for a, b in zip(writes, writes[1:])]
ck = s["checkpoint"]
print(f"at rest: {s['samples']} samples in {s['duration_s']:.0f} s; checkpoint {json.dumps(ck)}; "
      f"rewritten {len(writes)} times, gaps {['%.1f' % g for g in gaps]}; "
      f"{len(fsyncs)} fsyncs by the exporter")
if s["samples"] == 0 or s["samples"] > s["duration_s"]:
    sys.exit("FAIL: not a trickle: nothing was tested")
assert len(writes) >= 2, "the checkpoint was not rewritten at rest"
assert min(gaps) >= 10.0 - 0.15, ("checkpoints closer than an --interval at rest", gaps)
# The files' writes are fsynced (so strace saw the exporter's fsyncs), the checkpoint's not.
assert any("profile.pb.gz" in l for l in fsyncs), fsyncs
assert not any("lowprof-checkpoint" in l for l in fsyncs), fsyncs
# Nor the window's split (a memfd too), written after profile.pb.gz.
assert not any("lowprof-window-split" in l for l in fsyncs), fsyncs
# summary.json is durable; the views of profile.pb.gz are not fsynced.
assert any("summary.json" in l for l in fsyncs), fsyncs
assert not any("profile.folded" in l or "flamegraph.svg" in l for l in fsyncs), fsyncs
print("checkpoints at rest ok")
PY
