#!/bin/sh
# Cached VMAs that went stale: vma_swap takes two libraries of the same size
# in turns (dlopen, ~3 ms in it, dlclose), mostly at the same address, while
# another of its threads maps and unmaps memory every ~50 us (the mmap
# lock's sequence moves between almost any two samples). The walker keeps a
# VMA across such changes only after checking the kernel's VMA again, and
# finds new ones by reading the VMA tree: every frame it puts in either
# library must lie in that library's code (the same functions lie at other
# offsets in each, with code that never runs where the other's are), checked
# on its own records (sample_tap, check_files.py); and the stacks through
# them are whole to main or marked, never garbage.
#   usage: test_unwind_vma_reuse.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind_vma_reuse
chmod 755 "$work"
cp "$BIN/libswap_a.so" "$BIN/libswap_b.so" "$work/"
[ "$(stat -c %s "$work/libswap_a.so")" = "$(stat -c %s "$work/libswap_b.so")" ] ||
	echo "note: the two libraries differ in size (fewer same-address swaps)"

tapped_lowprof 16 13
"$BIN/vma_swap" "$work/libswap_a.so" "$work/libswap_b.so" 9000 >"$work/swap.txt" ||
	fail "vma_swap failed"
cat "$work/swap.txt"
same=$(awk '{ print $4 }' "$work/swap.txt")
[ "${same:-0}" -ge 100 ] || fail "only ${same:-0} swaps at the same address"
wait "$tap" || fail "sample_tap failed: $(cat "$work/tap.err")"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/err"))"
grep -E "unwind walker" "$work/err" | tail -2 || true

python3 "$SRC/tests/integration/check_files.py" "$work/tap.txt" --comm vma_swap \
	--elf "$work/libswap_a.so" --elf "$work/libswap_b.so" --never swap_pad --min-frames 50 \
	--main "$BIN/vma_swap" --min-whole 80
echo "PASS: no frame in the wrong file across reused addresses"
