#!/bin/sh
# -p in a time namespace whose boot time is offset (a container's clock
# set apart): the start time lowprof reads in /proc/PID/stat there is the
# kernel's plus the offset, and the BPF program, comparing the kernel's own
# with it (loader/target_pids.h), must add the offset too, or nothing of
# the target would ever be sampled.
#   usage: test_pid_time_namespace.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir pid-timens
unshare --time --boottime 100000 --fork true 2>"$work/unshare.err" ||
	fail "no time namespace with a boot time offset: $(cat "$work/unshare.err")"

"$BIN/spin_workload" 12 &
busy=$!
track "$busy"
unshare --time --boottime 100000 --fork sh -c '
	awk "/boottime/ { print \$2 }" /proc/self/timens_offsets >"$1/offset"
	exec "$2/lowprof" --pid "$3" --duration 3 --frequency 99 --no-throttle --output "$1/out" \
		--run-dir "$1/run"' sh "$work" "$BIN" "$busy" 2>"$work/err" ||
	fail "lowprof in the time namespace exited $?: $(cat "$work/err")"
[ "$(cat "$work/offset")" = 100000 ] || fail "lowprof ran with a boot time offset of '$(cat "$work/offset")' s"
samples=$(awk '{ s += $NF } END { print s + 0 }' "$work/out/profile.folded")
[ "$samples" -gt 50 ] ||
	fail "the -p target was sampled $samples times in 3 s at 99 Hz on a CPU of its own"
echo "PASS: $samples samples of the target with the boot time offset by 100000 s"
