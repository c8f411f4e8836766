#!/bin/sh
# --max-depth: recursion 200 deep, profiled in DWARF mode with --max-depth 64.
# Every stack of the recursion is cut at 64 user frames and its outermost
# frame is [truncated].
#   usage: test_unwind_depth.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind

"$BIN/dwarf_recurse" 8 200 &
wl=$!
track "$wl"
# With --no-throttle, so that a busy test host does not switch the unwinding mode.
"$BIN/lowprof" --unwind dwarf --no-throttle --pid "$wl" --max-depth 64 --duration 5 --frequency 199 \
	--output "$work/out" 2>"$work/err" || fail "lowprof failed: $(cat "$work/err")"
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm dwarf_recurse \
	--truncated-at 64 --min 95
echo "PASS: stacks cut at 64 frames and marked [truncated]"
