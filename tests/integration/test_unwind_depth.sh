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
# With --no-throttle, so that a busy test host does not switch the unwinding
# mode, and --cpu-budget 100, so that the in-BPF guard does not skip user
# stacks: at 199 Hz and the default 1.5% a process's share of the guard is
# ~37 us a sample, which 64 DWARF frames on a cold cache can pass (108 of
# 1013 samples `[user stack skipped]` in one run). This test is about the
# depth cut; integration_security_guard_share tests the share.
"$BIN/lowprof" --unwind dwarf --no-throttle --cpu-budget 100 --pid "$wl" --max-depth 64 --duration 5 --frequency 199 \
	--output "$work/out" 2>"$work/err" || fail "lowprof failed: $(cat "$work/err")"
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm dwarf_recurse \
	--truncated-at 64 --min 95
echo "PASS: stacks cut at 64 frames and marked [truncated]"
