#!/bin/sh
# The real binary: bad command lines exit 2 with one line on stderr, before
# anything is loaded; --help and --version exit 0.
#   usage: test_cli_errors.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
work_dir cli

expect_usage() {
	want=$1
	shift
	set +e
	"$BIN/lowprof" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "lowprof $* exited $rc, want 2"
	[ "$(wc -l <"$work/err")" -eq 1 ] || fail "lowprof $*: want one line, got: $(cat "$work/err")"
	grep -q -- "$want" "$work/err" || fail "lowprof $*: '$(cat "$work/err")' lacks '$want'"
	echo "ok: lowprof $* -> $(cat "$work/err")"
}

expect_usage "invalid duration" --duration -1
expect_usage "invalid duration" --duration abc
expect_usage "invalid frequency" -F 0
expect_usage "invalid frequency" -F 100000000
expect_usage "no process with pid" -p 2147483647
expect_usage "cannot create output directory" -o /proc/nonexistent/dir
expect_usage "unknown option" --no-such-option
expect_usage "invalid --ringbuf-kb" --ringbuf-kb 3

"$BIN/lowprof" --help | grep -q -- "--frequency" || fail "--help does not document --frequency"
for opt in --duration --output --frequency --pid --ringbuf-kb --interval --version; do
	"$BIN/lowprof" --help | grep -q -- "$opt" || fail "--help does not document $opt"
done
"$BIN/lowprof" --version | grep -q "^lowprof [0-9]" || fail "--version"
echo PASS
