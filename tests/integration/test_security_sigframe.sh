#!/bin/sh
# A process cannot send the DWARF walker through signal frames it forged
# (docs/SECURITY.md): processes spin in a function whose CFI marks it a
# signal trampoline, with RSP at a frame they wrote, whose saved rsp is far
# below the stack, 64 MiB above it, or not aligned; the saved rip points into
# a function (forge_bogus_*) that no real stack holds. None of those appears
# in a stack, the walks stop at the trampoline, and summary.json counts them
# (sigframe_refused). Controls in the same run: a forged frame whose saved
# rsp lies just above it is followed (so the test sees a followed frame), and
# real signal handlers, on the thread's stack and on a sigaltstack, unwind
# through libc's __restore_rt back to main.
#   usage: test_security_sigframe.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir sigframe
pids=""
for mode in below far misalign legit handler altstack; do
	"$BIN/sigframe_forge" "$mode" 60 &
	pids="$pids $!"
done
track $pids
pid_args=""
for p in $pids; do
	pid_args="$pid_args --pid $p"
done
# --no-throttle and no guard: only the walker decides what a stack holds.
# shellcheck disable=SC2086
"$BIN/lowprof" --unwind dwarf --no-throttle --cpu-budget 100 $pid_args --duration 6 \
	--frequency 199 --output "$work/out" 2>"$work/err" || fail "lowprof failed: $(cat "$work/err")"

python3 - "$SRC/tests/integration" "$work/out" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[1])
from folded_lib import fail, has_chain, read_folded

out = sys.argv[2]
by_comm = {}
for frames, count in read_folded(os.path.join(out, "profile.folded")):
    by_comm.setdefault(frames[0], []).append((frames[1:], count))


def share(comm, pred, what, minimum):
    stacks = by_comm.get(comm, [])
    total = sum(c for _, c in stacks)
    if total < 30:
        fail(f"only {total} samples of {comm}")
    ok = sum(c for f, c in stacks if pred(f))
    pct = 100.0 * ok / total
    print(f"{comm}: {what}: {ok}/{total} = {pct:.1f}%")
    if pct < minimum:
        for f, c in sorted(stacks, key=lambda x: -x[1])[:3]:
            print(f"  {c:5d} {';'.join(f)[:200]}")
        fail(f"{comm}: {what}: {pct:.1f}% < {minimum}%")
    return total


forged = 0
for mode in ("below", "far", "misalign"):
    comm = "sf_" + mode
    for f, c in by_comm.get(comm, []):
        bogus = [x for x in f if x.startswith("forge_bogus")]
        if bogus:
            fail(f"{comm}: the walk followed a forged signal frame into {bogus[0]} ({c} samples)")
    # The walk stops at the trampoline: its user stack is forge_spin alone,
    # under the marker that says the unwinding failed there.
    forged += share(comm, lambda f: [x for x in f if not x.endswith("_[k]")]
                    == ["[unwind_failed]", "forge_spin"],
                    "stack ends at the forged frame", 75)
share("sf_legit", lambda f: has_chain(f, ["forge_legit_target", "forge_spin"]),
      "plausible forged frame followed", 75)
for comm in ("sf_handler", "sf_altstack"):
    share(comm, lambda f: has_chain(f, ["main", "forge_interrupted"])
          and has_chain(f, ["forge_on_signal", "forge_handler_spin"]),
          "handler unwound through __restore_rt to main", 60)
with open(os.path.join(out, "summary.json"), encoding="utf-8") as fh:
    refused = json.load(fh)["collection"]["sigframe_refused"]
print(f"sigframe_refused {refused} (forged samples {forged})")
if refused < forged * 0.75:
    fail(f"sigframe_refused {refused} < 75% of the {forged} forged samples")
PY
echo "PASS: forged signal frames not followed and counted; real handler stacks whole"
