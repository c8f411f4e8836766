#!/bin/sh
# Whole stacks from a process's first sample, end to end: ~100 new processes
# a second of churn_leaf (built -O2 -fomit-frame-pointer), each living 3 to
# 30 ms, all started after lowprof. At least 95% of their samples whose leaf is in the
# program's own code carry the whole chain up to main, and no stack of theirs
# holds a frame that was never on it: a stack cut short ends in a marker.
# At least 95% of all their samples that have a user stack reach the entry
# point (_start, or the dynamic loader's).
#   usage: test_unwind_churn.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind_churn
CHAIN="main;cl_level1;cl_level2;cl_level3;cl_leaf"

"$BIN/lowprof" --unwind dwarf --no-throttle --duration 12 --frequency 199 --output "$work/out" 2>"$work/err" &
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
echo "PASS: short-lived processes unwind whole from their first sample"
