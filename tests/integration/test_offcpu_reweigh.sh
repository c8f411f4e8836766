#!/bin/sh
# Off-CPU weights when the probability changes under a sleeping thread: a
# switch-out recorded at 100% whose thread wakes after the controller cut the
# probability (the program attached all along) weighs its blocked time once,
# not blocked / the new probability. The cut is made real: offcpu_churn
# processes (deep stacks blocking 1.2 ms, hundreds of recorded switch-outs a
# second) are added one by one until off-CPU's cost passes half the budget
# and the controller cuts; meanwhile a sleeper starts every second, each under
# its own name, sleeping 6 s in stale_long_sleep. Every sleeper that went to
# sleep at 100% and woke at a lower probability, attached throughout, must
# show 6 s off CPU (within 20%; divided by the new probability it would be
# at least 12 s).
#   usage: test_offcpu_reweigh.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir offcpu-reweigh
chmod 755 "$work"

# --cpu-budget 6: room between half the budget (the cut, at 3%) and the whole
# of it (a budget step, which detaches the program and makes every stash
# stale). At 3 a loaded CI host once went from under 1.5% to 3.4% in one
# interval (a new offcpu_churn's first second), so the first cut came with a
# budget step and no sleeper stayed attached across it.
"$BIN/lowprof" --duration 80 --off-cpu --cpu-budget 6 --control-interval 1 --interval 1 \
	--output "$work/out" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 2

# Ramp up until the cut, a sleeper a second, a churn every other second from
# the third; their names and start times go to $work/sleepers.json.
python3 - "$BIN" "$work" <<'PY' || fail "reweigh: the load"
import json, shutil, subprocess, sys, time
BIN, work = sys.argv[1], sys.argv[2]
SLEEP = 6.0
procs, sleepers = [], []

def cut_seen():
    try:
        tl = json.load(open(work + "/out/summary.json")).get("timeline", [])
    except (OSError, ValueError):
        return False
    return any(e["offcpu_probability_pct"] < 100.0 and e["offcpu_attached"] for e in tl)

try:
    deadline = time.time() + 45
    n, cut = 0, False
    while time.time() < deadline and not cut:
        n += 1
        name = f"reweigh_{n}"
        shutil.copy(BIN + "/offcpu_stale", f"{work}/{name}")
        sleepers.append({"name": name, "start": time.time()})
        procs.append(subprocess.Popen([f"{work}/{name}", str(SLEEP), "0", "0"]))
        cut = cut_seen()
        # The first churn waits two sleepers: on a loaded host one churn can
        # bring the cut in its first interval, and a sleeper that started
        # with it could not be told apart from one that went to sleep after.
        if not cut and n >= 3 and n % 2 == 1:
            procs.append(subprocess.Popen([BIN + "/offcpu_churn", "2", "70"]))
        time.sleep(1.0)
    # The sleepers that straddle the cut wake; the timeline covers them.
    time.sleep(SLEEP + 2.5)
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait()
json.dump(sleepers, open(work + "/sleepers.json", "w"))
PY

kill -TERM "$sup"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"
sup=

python3 - "$work" <<'PY' || { grep -E "controller: .*off-CPU" "$work/stderr" >&2; fail "reweigh"; }
import json, sys
work = sys.argv[1]
SLEEP = 6.0
s = json.load(open(work + "/out/summary.json"))
t0 = s["start_unix_ns"] / 1e9
# Each entry as (start, end) in wall time, probability at its end, attached at its end.
tl = [(t0 + e["t"] - e["interval_s"], t0 + e["t"], e["offcpu_probability_pct"], e["offcpu_attached"])
      for e in s["timeline"]]
print("timeline (probability %, attached):", [(p, a) for _, _, p, a in tl])
if not any(p < 100.0 and a for _, _, p, a in tl):
    sys.exit("FAIL: the controller never cut the off-CPU probability while attached")
off = {}
for l in open(work + "/out/offcpu.folded"):
    comm = l.split(";", 1)[0]
    if comm.startswith("reweigh_"):
        off[comm] = off.get(comm, 0) + int(l.rsplit(" ", 1)[1])

checked = []
for sl in json.load(open(work + "/sleepers.json")):
    start, end = sl["start"], sl["start"] + SLEEP
    # An entry holds the probability at its end: a cut applied inside it shows
    # there. Asleep at 100%: the entry in which it went to sleep (just after
    # start) ended at 100%. Woke at less: an entry that ended before it woke
    # shows the cut. Attached in every entry its sleep overlaps.
    went = [e for e in tl if e[1] > start and e[0] <= start + 0.3]
    before_wake = [e for e in tl if e[1] <= end]
    span = [e for e in tl if e[1] > start and e[0] < end + 1.0]
    if not went or any(e[2] != 100.0 for e in went) or not before_wake:
        continue
    p1 = before_wake[-1][2]
    if p1 >= 100.0 or not all(e[3] for e in span):
        continue
    us = off.get(sl["name"], 0)
    print(f"{sl['name']}: asleep at 100%, woke at {p1}%: {us / 1e6:.2f} s off CPU (slept {SLEEP} s)")
    if us == 0:
        continue  # its switch-out was not taken (the guard, a full window): nothing to weigh
    checked.append(sl["name"])
    if abs(us / 1e6 - SLEEP) > SLEEP * 0.2:
        sys.exit(f"FAIL: {sl['name']} weighs {us / 1e6:.2f} s for a {SLEEP} s sleep recorded at 100%")
if not checked:
    sys.exit(f"FAIL: no sleeper went to sleep at 100% and woke at a lower probability with a record: {off}")
print(f"PASS: {len(checked)} sleeper(s) across the cut weigh their sleep")
PY
echo PASS
