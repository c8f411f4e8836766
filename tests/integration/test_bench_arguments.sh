#!/bin/sh
# The benchmark scripts refuse a bad argument with a clear error (argparse's
# exit status 2 and a message naming the option) before they start anything:
# no root, no build and no BPF needed.
#   usage: test_bench_arguments.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"

work_dir bench-args

# refused SCRIPT OPTION VALUE: exit status 2, and the error names the option.
refused() {
	rc=0
	python3 "$SRC/bench/$1" "$2" "$3" >"$work/out" 2>"$work/err" || rc=$?
	[ "$rc" -eq 2 ] || fail "bench/$1 $2 $3: exit status $rc, not 2 ($(cat "$work/err"))"
	grep -q -- "error: $2 must be" "$work/err" ||
		fail "bench/$1 $2 $3: no clear error: $(cat "$work/err")"
}

refused run --settle -3
refused run --rest-window -1
refused run --rounds 0
refused run --seconds 0
refused idle --window 0
refused idle --warmup -1
refused idle --rounds 0
refused startup --rounds 0
echo PASS
