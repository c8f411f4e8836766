#!/bin/sh
# Whole stacks from a process's first sample, end to end: ~100 new processes
# a second of churn_leaf (built -O2 -fomit-frame-pointer), each living 3 to
# 30 ms, all started after lowprof. At least 95% of their samples whose leaf is in the
# program's own code carry the whole chain up to main, and no stack of theirs
# holds a frame that was never on it: a stack cut short ends in a marker.
# At least 95% of all their samples that have a user stack reach the entry
# point (_start, or the dynamic loader's). Their libc frames come from the
# dynamic loader's list of libraries, not from a VMA lookup each.
#   usage: test_unwind_churn.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind_churn
CHAIN="main;cl_level1;cl_level2;cl_level3;cl_leaf"

# -v: the loader's walker statistics, read below.
"$BIN/lowprof" -v --unwind dwarf --no-throttle --duration 12 --frequency 199 --output "$work/out" 2>"$work/err" &
sup=$!
track "$sup"
wait_profiling "$work/err"
sleep 1
"$BIN/churn_spawn" 100 8 "$BIN/churn_leaf" >"$work/spawned" &
wl=$!
track "$wl"
wait "$wl" || fail "churn_spawn failed"
echo "processes started: $(cat "$work/spawned")"
[ "$(cat "$work/spawned")" -ge 500 ] || fail "fewer than 500 processes started in 8 s"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/err"))"
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm churn_leaf \
	--leaf-prefix cl_ --chain "$CHAIN" --min 95 --no-garbage
# All their samples with a user stack, start-up in ld.so and libc included
# (the dynamic loader found from AT_BASE, without a VMA lookup), reach the
# entry point; [in execve] only in execve.
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm churn_leaf \
	--entry "$BIN/churn_leaf" --min 95
# Where the walker placed the pcs no cheaper source did: a new process's libc
# (where every one of its stacks starts) through the dynamic loader's list,
# which costs a few reads of the process's memory, rather than bpf_find_vma
# (an irq_work and the mmap lock: several us a sample).
walker=$(grep "unwind walker" "$work/err" | tail -1)
[ -n "$walker" ] || fail "no walker statistics in the loader's log"
echo "$walker"
python3 - "$walker" <<'PY' || fail "the short-lived processes' libraries were not found through the dynamic loader's list"
import re, sys
line = sys.argv[1]
stacks = int(re.search(r"walker: (\d+) stacks", line).group(1))
lookups = int(re.search(r"(\d+) VMA lookups", line).group(1))
listed = int(re.search(r"(\d+) from the library list", line).group(1))
print(f"{stacks} stacks: {listed} VMAs from the library list, {lookups} VMA lookups")
if listed < stacks * 0.1 or lookups > listed:
    sys.exit(f"expected at least {stacks * 0.1:.0f} from the list and fewer lookups than that")
PY
echo "PASS: short-lived processes unwind whole from their first sample"
