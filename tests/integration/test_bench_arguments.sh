#!/bin/sh
# The benchmark scripts refuse a bad argument with a clear error (argparse's
# exit status 2 and a message naming the option) before they start anything:
# no root, no build and no BPF needed.
#   usage: test_bench_arguments.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"

work_dir bench-args

# refused SCRIPT OPTION VALUE [ARG...]: exit status 2, and the error names the
# option (ARG: what the script requires besides).
refused() {
	script=$1 opt=$2 val=$3
	shift 3
	rc=0
	python3 "$SRC/bench/$script" "$opt" "$val" "$@" >"$work/out" 2>"$work/err" || rc=$?
	[ "$rc" -eq 2 ] || fail "bench/$script $opt $val: exit status $rc, not 2 ($(cat "$work/err"))"
	grep -q -- "error: $opt must be" "$work/err" ||
		fail "bench/$script $opt $val: no clear error: $(cat "$work/err")"
}

refused run --settle -3
refused run --rest-window -1
refused run --rounds 0
refused run --seconds 0
refused idle --window 0
refused idle --warmup -1
refused idle --rounds 0
refused startup --rounds 0
refused bpf-ab --settle -1 --a A --b B
refused bpf-ab --runs 0 --a A --b B
refused bpf-ab --seconds 0 --a A --b B
# lowprof-wake-cost (bench/wake_cost.c): the same, exit status 2 and why.
for args in "0" "65" "3 abc" "3 -1"; do
	rc=0
	# shellcheck disable=SC2086 # the arguments are split on purpose
	"$BIN/lowprof-wake-cost" $args >"$work/out" 2>"$work/err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q "lowprof-wake-cost: .*must be\|lowprof-wake-cost: bad sleep" "$work/err" ||
		fail "lowprof-wake-cost $args: exit status $rc ($(cat "$work/err"))"
done
echo PASS
