#!/bin/sh
# The real binary: bad command lines exit 2 with one line on stderr, before
# anything is loaded; --help and --version exit 0.
set -eu
BIN=$1
SRC=$2
. "$SRC/tests/integration/lib.sh"

expect_usage() {
	want=$1
	shift
	set +e
	"$BIN/lowprof" "$@" >/tmp/lowprof-cli.out 2>/tmp/lowprof-cli.err
	rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "lowprof $* exited $rc, want 2"
	[ "$(wc -l </tmp/lowprof-cli.err)" -eq 1 ] || fail "lowprof $*: want one line, got: $(cat /tmp/lowprof-cli.err)"
	grep -q -- "$want" /tmp/lowprof-cli.err || fail "lowprof $*: '$(cat /tmp/lowprof-cli.err)' lacks '$want'"
	echo "ok: lowprof $* -> $(cat /tmp/lowprof-cli.err)"
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
rm -f /tmp/lowprof-cli.out /tmp/lowprof-cli.err
echo PASS
