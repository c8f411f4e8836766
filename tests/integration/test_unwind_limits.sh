#!/bin/sh
# docs/SECURITY.md "Per-request CPU and memory", in a running lowprof, as a
# local user would try it: a process maps executable a costly ELF
# (make_costly_elf.py: 600 KiB that inflate to 2 x 256 MiB of well-formed CFI,
# seconds of CPU to parse; under every size cap). Then:
#  - the unwinder the supervisor started has RLIMIT_AS 4 GiB (/proc/PID/limits),
#  - the file ends it by SIGPROF (its 900 ms CPU timer), the loader refuses
#    the file (frame pointers for it), the supervisor starts another unwinder,
#    with the same limit,
#  - the loader keeps going: once its 10 s of leaving the unwinder alone are
#    over, a -fomit-frame-pointer program started then is DWARF-unwound (at
#    least 50% of its samples whole) by the new unwinder,
#  - no component misses its liveness deadline, and no other component dies.
# (unit: test_unwinder_limits, the same bounds on the unwinder alone.)
#   usage: test_unwind_limits.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind-limits
chmod 755 "$work" # the start-up scan opens the file as the mapping process's
CHAIN="main;dw_level1;dw_level2;dw_level3;dw_level4;dw_leaf"
python3 "$SRC/tests/integration/make_costly_elf.py" "$work/costly.so" || fail "no costly ELF"

# The hostile process: maps the file executable and waits (the loader's
# start-up scan queues every executable file of every running process).
python3 - "$work/costly.so" "$work/mapped" <<'PY' &
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ | mmap.PROT_EXEC, flags=mmap.MAP_PRIVATE)
open(sys.argv[2], "w").close()
time.sleep(60)
PY
hostile=$!
track "$hostile"
i=0
while [ ! -e "$work/mapped" ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "the hostile process did not map the file"
	sleep 0.1
done

# 4294967296 4294967296 (soft, hard) for the unwinder $1.
limit_as() {
	awk '/^Max address space/ { print $4, $5 }' "/proc/$1/limits"
}

"$BIN/lowprof" --unwind dwarf --no-throttle --duration 60 --frequency 199 --output "$work/out" \
	2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
uw1=$(child_pid lowprof-unwinder)
[ -n "$uw1" ] || fail "no lowprof-unwinder under the supervisor $sup"
lim=$(limit_as "$uw1")
echo "unwinder $uw1: Max address space $lim"
[ "$lim" = "4294967296 4294967296" ] ||
	fail "the unwinder's address space is not capped at 4 GiB: Max address space $lim"

# The costly file ends the unwinder by SIGPROF, and the loader refuses it.
i=0
until grep -q "unwinder killed by signal 27" "$work/stderr" &&
	grep -q "costly.so refused" "$work/stderr"; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "after 30 s, the costly file has not ended the unwinder by SIGPROF and been refused: $(grep -E 'unwinder (killed|exited)|costly' "$work/stderr" | tail -5)"
	sleep 0.1
done
refused_at=$(now)
grep -E "unwinder killed|costly.so refused" "$work/stderr"

# ... and the supervisor starts another one, capped too.
i=0
while uw2=$(child_pid lowprof-unwinder); [ -z "$uw2" ] || [ "$uw2" = "$uw1" ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "no new lowprof-unwinder 10 s after the first was killed"
	sleep 0.1
done
lim=$(limit_as "$uw2")
echo "new unwinder $uw2: Max address space $lim"
[ "$lim" = "4294967296 4294967296" ] ||
	fail "the restarted unwinder's address space is not capped at 4 GiB: Max address space $lim"

# The loader leaves the unwinder alone for 10 s after a file it did not
# answer for; past that, a new program's tables come from the new unwinder.
sleep "$(echo "10.5 - ($(now) - $refused_at)" | bc)" 2>/dev/null || true
"$BIN/dwarf_chain" 3 &
wl=$!
track "$wl"
wait "$wl" || fail "dwarf_chain failed"
kill -INT "$sup"
wait "$sup" || fail "lowprof exited with status $? ($(tail -20 "$work/stderr"))"
sup=
if grep -q "missed its liveness" "$work/stderr"; then
	fail "a component missed its liveness deadline: $(grep 'liveness' "$work/stderr")"
fi
if grep -E "(loader|exporter|controller) (killed|exited)" "$work/stderr"; then
	fail "another component died"
fi
[ "$(grep -c "unwinder killed" "$work/stderr")" -eq 1 ] ||
	fail "the unwinder was killed more than once: $(grep 'unwinder killed' "$work/stderr")"
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm dwarf_chain \
	--chain "$CHAIN" --min 50
echo "PASS: the costly file cost the unwinder 900 ms of CPU under a 4 GiB cap; the loader refused it and kept going"
