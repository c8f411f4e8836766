#!/bin/sh
# One process cannot spend the in-BPF guard of its CPU for the others
# (docs/SECURITY.md). An attacker whose every sample is as expensive as a
# DWARF walk gets (`dwarf_recurse 60 300 2 alternate`: two functions
# calling each other 300 deep without frame pointers, walked to --max-depth
# 128 with a row search per frame, about 20 us a sample here; two threads,
# so two thirds of the CPU)
# and a victim (dwarf_chain, six frames) share one CPU (taskset) at -F 999,
# under a budget of 1% (1 ms per 100 ms window): the attacker alone would
# take about 1.3 ms of each window, and once the window is spent every
# sample on that CPU, the victim's too, loses its user stack (with the share
# disabled, GUARD_PROC_SHARE_DIV 1, the victim kept it in 64-83% of its
# samples). With the share the attacker is held to half the window and the
# victim keeps its stacks (98-100% measured): at least 90% of its samples
# have user frames, and the attacker was held to its share: at least a tenth
# of its samples capped (guard_proc_capped in summary.json; 34-49% of them
# kept their user frames on this VM, but once in CI 83%, with 16% capped:
# while its table is not built yet, at start on a fresh host busy with
# every process's tables, its samples are cheap frame-pointer walks that
# the cap need not stop; 10 s rather than 6 leave that start a smaller
# part of the run). At
# 0.6% the attacker's capped samples (their kernel stacks and the checks,
# a few us each) and the VM's noise left the victim's half too thin: it kept
# 70-98% with or without this tree's changes, a test that failed one run in
# three.
#   usage: test_security_guard_share.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
command -v taskset >/dev/null || fail "taskset (util-linux) is needed"

work_dir guard_share
cpu=$(($(nproc) - 1))
taskset -c "$cpu" "$BIN/dwarf_recurse" 60 300 2 alternate &
attacker=$!
taskset -c "$cpu" "$BIN/dwarf_chain" 60 &
victim=$!
track "$attacker" "$victim"
# --no-throttle: the controller must not change the rate or the unwinding
# mode while the guard is measured; the guard itself applies.
"$BIN/lowprof" --unwind dwarf --no-throttle --max-depth 128 --cpu-budget 1 \
	--pid "$attacker" --pid "$victim" --duration 10 --frequency 999 \
	--output "$work/out" 2>"$work/err" || fail "lowprof failed: $(cat "$work/err")"

python3 - "$SRC/tests/integration" "$work/out" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[1])
from folded_lib import fail, read_folded

out = sys.argv[2]
seen = {}
for frames, count in read_folded(os.path.join(out, "profile.folded")):
    t = seen.setdefault(frames[0], [0, 0])
    t[0] += count
    # A user frame: neither kernel nor the marker of a skipped user stack.
    if any(not f.endswith("_[k]") and f != "[user_stack_skipped]" for f in frames[1:]):
        t[1] += count
with open(os.path.join(out, "summary.json"), encoding="utf-8") as fh:
    c = json.load(fh)["collection"]
print(f"guard_skipped {c['guard_skipped']}, guard_proc_capped {c['guard_proc_capped']}")
share = {}
for comm in ("dwarf_recurse", "dwarf_chain"):
    total, user = seen.get(comm, [0, 0])
    if total < 500:
        fail(f"only {total} samples of {comm}")
    share[comm] = 100.0 * user / total
    print(f"{comm}: {user}/{total} samples with user frames = {share[comm]:.1f}%")
if share["dwarf_chain"] < 90:
    fail(f"the victim kept its user stacks in only {share['dwarf_chain']:.1f}% of its samples")
attacker_samples = seen["dwarf_recurse"][0]
if c["guard_proc_capped"] < attacker_samples / 10:
    fail(f"the attacker was capped in {c['guard_proc_capped']} of its {attacker_samples} samples, "
         "under a tenth: it was not held to its share")
PY
echo "PASS: the attacker is held to its share of the guard; the victim keeps its stacks"
