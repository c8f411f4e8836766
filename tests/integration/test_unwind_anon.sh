#!/bin/sh
# A frame-pointer step out of anonymous code (a JIT's) in the DWARF walk
# (bpf/unwind_dwarf.bpf.h, DWARF_FP_FROM_ANON), two copies of anon_exec
# sampled together:
#  - anon_garbage: its loop keeps RBP on a plausible frame whose "return
#    address" is a number in no mapping (a JIT that keeps no frame pointers
#    and uses RBP for data). Its stacks end with [anonymous code] after the
#    anonymous frame, never with [no mapping], and the walker looks no VMA up
#    for the number: a step out of the code is believed only if it lands just
#    after a call. Before, every sample spent its one bpf_find_vma on it,
#    failed, and ended with [no mapping].
#  - anon_chain: its loop leaves RBP to main's frame, as a JIT that keeps
#    frame pointers does: its stacks still walk on past the anonymous frame,
#    into libc.
#   usage: test_unwind_anon.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind-anon
# The comm is the file name.
cp "$BIN/anon_exec" "$work/anon_garbage"
cp "$BIN/anon_exec" "$work/anon_chain"
"$work/anon_garbage" 8000 garbage-rbp &
garbage=$!
track "$garbage"
"$work/anon_chain" 8000 &
chain=$!
track "$chain"
"$BIN/lowprof" -v --unwind dwarf --no-throttle --cpu-budget 100 --pid "$garbage" --pid "$chain" \
	--duration 5 --frequency 99 --output "$work/out" 2>"$work/err" ||
	fail "lowprof failed: $(tail -5 "$work/err")"
walker=$(grep "unwind walker" "$work/err" | tail -1)
[ -n "$walker" ] || fail "no walker statistics in the loader's log"
echo "$walker"

python3 - "$work/out/profile.folded" "$SRC/tests/integration" "$walker" <<'PY' ||
import re, sys
sys.path.insert(0, sys.argv[2])
from folded_lib import fail, read_folded

anon = {"anon_garbage": {}, "anon_chain": {}}
for frames, count in read_folded(sys.argv[1]):
    comm = frames[0]
    user = [f for f in frames[1:] if not f.endswith("_[k]")]
    if comm not in anon or not user or not user[-1].startswith("[anon]"):
        continue
    # The frames between the comm and the anonymous leaf: a marker, or callers.
    root = ";".join(user[:-1])
    anon[comm][root] = anon[comm].get(root, 0) + count
for comm, roots in anon.items():
    print(f"{comm}: samples in anonymous code by what precedes the leaf: {roots}")
garbage = anon["anon_garbage"]
n = sum(garbage.values())
if n < 200:
    fail(f"only {n} samples of anon_garbage in its anonymous code")
if garbage.get("[anonymous_code]", 0) != n:
    fail(f"anon_garbage's stacks did not all end with [anonymous code] after its leaf: {garbage}")
chain = anon["anon_chain"]
n = sum(chain.values())
walked = sum(c for r, c in chain.items() if "__libc_start_call_main" in r.split(";"))
if n < 200 or walked < 0.9 * n:
    fail(f"anon_chain: {walked} of {n} samples walked on past its anonymous frame into libc")

stacks = int(re.search(r"unwind walker: (\d+) stacks", sys.argv[3]).group(1))
failed = int(re.search(r"VMA lookups \((\d+) failed\)", sys.argv[3]).group(1))
print(f"{stacks} stacks walked, {failed} failed VMA lookups")
# A failure is -EBUSY otherwise (the mmap lock or its irq_work), rare.
if failed > 0.05 * stacks:
    fail(f"{failed} of {stacks} walks failed a VMA lookup: the garbage pc was looked up")
PY
	fail "a step out of anonymous code"
echo "PASS: a step out of anonymous code lands after a call or ends the stack"
