#!/bin/sh
# The frame-pointer walk in BPF (bpf/unwind_fp.bpf.h): --unwind fp and the
# throttle's frame-pointer tiers.
#   1. --unwind fp: a program built with frame pointers is walked whole
#      (main;dw_level1;...;dw_leaf in at least 95% of its samples), its frames
#      read through the walker's stack window (a copy serves several reads:
#      the kernel's walk, bpf_get_stack, reads each frame on its own, none
#      through the window).
#   2. --unwind fp: a process whose RBP points at a "frame" on its stack that
#      names itself as the caller's (tests/programs/unwind/fp_loop.c) gets a
#      short stack, not the same return address repeated to --max-depth (what
#      following [RBP] blindly, as bpf_get_stack does, records).
#   3. The throttled default on busy CPUs: once the tier is a frame-pointer
#      one, a program without frame pointers (its table built in the healthy
#      tier) ends its stacks after the leaf with [no frame pointers], and the
#      one with frame pointers stays whole.
#   usage: test_unwind_fp.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind-fp
CHAIN="main;dw_level1;dw_level2;dw_level3;dw_level4;dw_leaf"

# 1. Whole, through the window. -v: the loader's walker statistics.
"$BIN/dwarf_chain_fp" 7 &
wl=$!
track "$wl"
"$BIN/lowprof" -v --unwind fp --no-throttle --cpu-budget 100 --pid "$wl" --duration 5 \
	--frequency 199 --output "$work/fp" 2>"$work/fp.err" ||
	fail "lowprof (fp) failed: $(cat "$work/fp.err")"
python3 "$SRC/tests/integration/check_unwind.py" "$work/fp" --comm dwarf_chain_fp \
	--chain "$CHAIN" --min 95
walker=$(grep "unwind walker" "$work/fp.err" | tail -1)
[ -n "$walker" ] || fail "no walker statistics in the loader's log"
echo "$walker"
echo "$walker" | python3 -c '
import re, sys
reads, copies = map(int, re.search(r"stack: (\d+) reads, (\d+) copies", sys.stdin.read()).groups())
print("stack: %d reads, %d copies" % (reads, copies))
# 6 frame-pointer steps a stack within ~1.3 KiB (dw_level1 keeps 1000 bytes).
sys.exit(0 if copies > 0 and reads >= 2 * copies else
         "%d stack reads in %d copies: the frames were not read through the window" % (reads, copies))
' || fail "the frame-pointer walk did not read the stack through its window"

# 2. A loop in the chain.
"$BIN/fp_loop" 7 &
wl=$!
track "$wl"
"$BIN/lowprof" --unwind fp --no-throttle --cpu-budget 100 --pid "$wl" --duration 5 \
	--frequency 199 --max-depth 64 --output "$work/loop" 2>"$work/loop.err" ||
	fail "lowprof (fp, looping chain) failed: $(cat "$work/loop.err")"
python3 - "$work/loop/profile.folded" "$SRC/tests/integration" <<'PY' || fail "a looping frame-pointer chain was followed"
import sys
sys.path.insert(0, sys.argv[2])
from folded_lib import fail, read_folded
n = spin = 0
for frames, count in read_folded(sys.argv[1]):
    if frames[0] != "fp_loop":
        continue
    user = [f for f in frames[1:] if not f.endswith("_[k]")]
    n += count
    if "fp_loop_spin" in user:
        spin += count
        if len(user) > 3 or user.count("fp_loop_return") > 1 or "[truncated]" in user:
            fail(f"{count} samples of fp_loop with the loop followed: {';'.join(user[:8])}...")
print(f"fp_loop: {n} samples, {spin} in fp_loop_spin, none deeper than 3 user frames")
if spin < 0.9 * n or spin < 100:
    fail(f"only {spin} of {n} samples of fp_loop in fp_loop_spin")
PY

# 3. The throttle's frame-pointer tiers, with the tables the healthy tier built.
for i in $(seq "$(nproc)"); do busy_cpu 30; done
"$BIN/dwarf_chain" 25 &
nofp=$!
track "$nofp"
"$BIN/dwarf_chain_fp" 25 &
fp=$!
track "$fp"
"$BIN/lowprof" --duration 16 --interval 60 --output "$work/tier" --run-dir "$work/run" \
	2>"$work/tier.err" || fail "lowprof (defaults) failed: $(cat "$work/tier.err")"
python3 - "$work/tier" "$SRC/tests/integration" "$CHAIN" <<'PY' || fail "the frame-pointer tiers' stacks"
import json, os, sys
sys.path.insert(0, sys.argv[2])
from folded_lib import fail, has_chain, read_folded
chain = sys.argv[3].split(";")
tiers = [e.get("tier") for e in json.load(open(os.path.join(sys.argv[1], "summary.json")))["timeline"]]
print("tiers:", tiers)
if not any(t in ("high", "critical") for t in tiers):
    fail("the throttle never left the healthy tier on busy CPUs")
marked = whole_fp = all_fp = 0
for frames, count in read_folded(os.path.join(sys.argv[1], "profile.folded")):
    user = [f for f in frames[1:] if not f.endswith("_[k]")]
    if frames[0] == "dwarf_chain" and user[:1] == ["[no_frame_pointers]"]:
        marked += count
        # The marker, then the leaf the frame-pointer walk placed.
        if len(user) > 3:
            fail(f"{count} samples walked on past a frame without frame pointers: {';'.join(user)}")
    if frames[0] == "dwarf_chain_fp":
        all_fp += count
        whole_fp += count if has_chain(user, chain) else 0
print(f"dwarf_chain: {marked} samples ended with [no frame pointers]; "
      f"dwarf_chain_fp: {whole_fp} of {all_fp} whole")
if marked == 0:
    fail("no sample of dwarf_chain in a frame-pointer tier ended with [no frame pointers]")
if all_fp == 0 or whole_fp < 0.95 * all_fp:
    fail(f"dwarf_chain_fp: {whole_fp} of {all_fp} samples whole")
PY
echo "PASS: the frame-pointer walk in BPF"
