#!/bin/sh
# A hostile mapped file does not stop other processes' DWARF stacks: a process
# maps executable a small crafted ELF whose .eh_frame is 100,000 FDEs over one
# 1 MiB CIE (quadratic to a parser that re-runs the CIE per FDE: the
# unwinder stuck for hours, every later table timing out), then a normal
# -fomit-frame-pointer program starts; its stacks must be DWARF-unwound as
# usual (at least 50% of its samples whole: 0% when the unwinder is stuck; a loaded test host costs some), and lowprof's loop keeps its
# liveness deadline (no component killed).
#   usage: test_unwind_crafted.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir crafted
CHAIN="main;dw_level1;dw_level2;dw_level3;dw_level4;dw_leaf"
python3 "$SRC/tests/integration/make_crafted_elf.py" "$work/crafted.so" || fail "no crafted ELF"

# The hostile process: maps the file executable and burns CPU (so it is sampled).
python3 - "$work/crafted.so" <<'PY' &
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ | mmap.PROT_EXEC, flags=mmap.MAP_PRIVATE)
end = time.time() + 14
while time.time() < end:
    sum(range(1000))
PY
hostile=$!
track "$hostile"
sleep 0.5

"$BIN/lowprof" --unwind dwarf --no-throttle --duration 11 --frequency 199 --output "$work/out" \
	2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 2
"$BIN/dwarf_chain" 6 &
wl=$!
track "$wl"
wait "$wl" || fail "dwarf_chain failed"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"
grep -E "crafted|unwind tables" "$work/stderr" || true
if grep -q "killed\|missed its liveness" "$work/stderr"; then
	fail "a component was killed: $(grep -E 'killed|liveness' "$work/stderr")"
fi
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm dwarf_chain \
	--chain "$CHAIN" --min 50
echo "PASS: a crafted .eh_frame does not stop other processes' DWARF stacks"
