#!/bin/sh
# With -p, the start-up unwind tables are built for the files of the
# processes profiled alone: every other process's are never sampled, and
# building them was CPU and kernel memory for nothing (on a busy host,
# hundreds of files).
#   usage: test_pid_startup_tables.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir pid-tables

sleep 30 &
target=$!
track "$target"
# Until the shell's child is sleep itself (its exec done).
i=0
while [ "$(readlink "/proc/$target/exe")" != "$(readlink -f "$(command -v sleep)")" ]; do
	i=$((i + 1))
	[ "$i" -le 50 ] || fail "the target never became sleep"
	sleep 0.1
done
# The files the loader's scan counts (loader/mapped_file.c): executable,
# backed by an inode, a path.
want=$(awk '$2 ~ /x/ && $5 != 0 && $6 ~ /^\// {print $4 " " $5}' "/proc/$target/maps" | sort -u | wc -l)
"$BIN/lowprof" --pid "$target" --duration 2 --unwind dwarf --output "$work/out" \
	--run-dir "$work/run" 2>"$work/err" || fail "lowprof failed: $(cat "$work/err")"
got=$(sed -n 's/.*start-up unwind tables done: \([0-9]*\) files.*/\1/p' "$work/err")
[ -n "$got" ] || fail "no start-up tables line: $(cat "$work/err")"
# Every process maps libc and the dynamic loader, and a host runs more than
# one program: a scan of all of them would count more files than sleep maps.
[ "$got" -eq "$want" ] || fail "start-up tables for $got files; the profiled process maps $want"
all=$(cat /proc/[0-9]*/maps 2>/dev/null | awk '$2 ~ /x/ && $5 != 0 && $6 ~ /^\// {print $4 " " $5}' | sort -u | wc -l)
[ "$all" -gt "$want" ] || fail "the host maps no file beyond the target's ($all): the check proves nothing"
echo "PASS: $got start-up files for -p (the host's processes map $all)"
