#!/bin/sh
# A program from Debian's base system, built without frame pointers:
# sha256sum hashing a stream. In DWARF mode at least 90% of its samples
# unwind to its entry point (_start -> __libc_start_main -> ...).
#   usage: test_unwind_system.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir unwind

# From a pipe, so most of its time is its own code, not the page cache.
head -c 40000000000 /dev/zero | sha256sum >/dev/null &
sleep 0.5
wl=$(pgrep -n -x sha256sum) || fail "sha256sum did not start"
track "$wl"
# With --no-throttle, so that a busy test host does not switch the unwinding mode.
"$BIN/lowprof" --unwind dwarf --no-throttle --pid "$wl" --duration 5 --frequency 199 --output "$work/out" \
	2>"$work/err" || fail "lowprof failed: $(cat "$work/err")"
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm sha256sum \
	--root __libc_start_main --min 90
echo "PASS: sha256sum unwinds to its entry point"
